"""Find libcst nodes without computing positions for the whole file (that costs more than parsing).

Statements are matched to the stdlib ast's by walking both trees' statement lists side by side; an ast
statement's line then gives the libcst statement. A lint finding's span is placed inside the statement
that contains it: positions are computed for that statement alone, rendered inside dummy blocks with
the real indentation so columns and lines come out as in the file. Parent links are kept for the nodes
visited, so edits can rebuild only the paths from the changed nodes up to the module.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from msprobe_rewriter.finding import Finding

Span = tuple[int, int, int, int]  # (line, column, end line, end column): 1-based lines, 0-based columns


def span_of(finding: Finding) -> Span:
    """A finding's span with 0-based columns, as libcst reports them."""
    return finding.line, finding.column - 1, finding.end_line, finding.end_column - 1


class MismatchError(Exception):
    """The ast and libcst statement lists disagree (never expected; reported, not crashed on)."""


class Structure:
    """Statement index of one module: ast statement -> libcst statement, parents, lines."""

    def __init__(self, module: cst.Module, tree: ast.Module) -> None:
        self.module = module
        self.parent: dict[cst.CSTNode, cst.CSTNode] = {}
        self.by_ast: dict[int, cst.CSTNode] = {}
        self.line: dict[cst.CSTNode, int] = {}
        self._statements: list[ast.stmt] = []
        self._local: dict[cst.CSTNode, dict[cst.CSTNode, CodeRange]] = {}
        self._walk(list(module.body), tree.body, module)

    # --- the statement walk ------------------------------------------------------------------
    def _walk(self, statements: list[cst.CSTNode], nodes: list[ast.stmt], container: cst.CSTNode) -> None:
        at = 0
        for statement in statements:
            self.parent[statement] = container
            if isinstance(statement, cst.SimpleStatementLine):
                count = len(statement.body)
                small = nodes[at: at + count]
                if len(small) != count:
                    raise MismatchError("statement count")
                for node in small:
                    self._record(node, statement)
                at += count
                continue
            if at >= len(nodes):
                raise MismatchError("statement count")
            self._record(nodes[at], statement)
            self._children(statement, nodes[at])
            at += 1
        if at != len(nodes):
            raise MismatchError("statement count")

    def _record(self, node: ast.stmt, statement: cst.CSTNode) -> None:
        self.by_ast[id(node)] = statement
        self.line.setdefault(statement, node.lineno)
        self._statements.append(node)

    def _block(self, owner: cst.CSTNode, block: cst.BaseSuite, nodes: list[ast.stmt]) -> None:
        self.parent[block] = owner
        if isinstance(block, cst.IndentedBlock):
            self._walk(list(block.body), nodes, block)
        else:  # `if x: a; b` - the small statements live on the owner's line
            for node in nodes:
                self.by_ast[id(node)] = self.statement_owner(owner)
                self._statements.append(node)

    def statement_owner(self, node: cst.CSTNode) -> cst.CSTNode:
        """The statement `node` (a statement or one of its clauses) belongs to."""
        while not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            node = self.parent[node]
        return node

    def _children(self, statement: cst.CSTNode, node: ast.stmt) -> None:
        if isinstance(statement, cst.If):
            self._block(statement, statement.body, node.body)
            orelse = statement.orelse
            if isinstance(orelse, cst.If):
                self.parent[orelse] = statement
                self._walk_clause(orelse, node.orelse)
            elif isinstance(orelse, cst.Else):
                self.parent[orelse] = statement
                self._block(orelse, orelse.body, node.orelse)
            return
        if isinstance(statement, (cst.Try, cst.TryStar)):
            self._block(statement, statement.body, node.body)
            for handler, ast_handler in zip(statement.handlers, node.handlers, strict=True):
                self.parent[handler] = statement
                self._block(handler, handler.body, ast_handler.body)
            for clause, nodes in ((statement.orelse, node.orelse), (statement.finalbody, node.finalbody)):
                if clause is not None:
                    self.parent[clause] = statement
                    self._block(clause, clause.body, nodes)
            return
        if isinstance(statement, cst.Match):
            for case, ast_case in zip(statement.cases, node.cases, strict=True):
                self.parent[case] = statement
                self._block(case, case.body, ast_case.body)
            return
        self._block(statement, statement.body, node.body)
        orelse = getattr(statement, "orelse", None)
        if isinstance(orelse, cst.Else):
            self.parent[orelse] = statement
            self._block(orelse, orelse.body, node.orelse)

    def _walk_clause(self, clause: cst.If, nodes: list[ast.stmt]) -> None:
        """An `elif`: the ast has it as the only statement of the outer `orelse`."""
        if len(nodes) != 1:
            raise MismatchError("elif")
        self.by_ast[id(nodes[0])] = clause
        self.line.setdefault(clause, nodes[0].lineno)
        self._statements.append(nodes[0])
        self._children(clause, nodes[0])

    # --- lookups ------------------------------------------------------------------------------
    def statement(self, node: ast.stmt) -> cst.CSTNode | None:
        """The libcst statement of an ast statement (the whole line for `a; b`)."""
        return self.by_ast.get(id(node))

    def path(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """`node` and its ancestors up to the module (nodes inside a statement need a located span)."""
        path = [node]
        while path[-1] is not self.module:
            path.append(self.parent[path[-1]])
        return path

    def innermost(self, spans: Iterable[Span], accept: Callable[[cst.CSTNode], bool]) -> dict[Span, cst.CSTNode]:
        """For each span, the smallest accepted node containing it (spans with none are left out)."""
        found = {}
        for span in dict.fromkeys(spans):
            root = self._root_for(span)
            if root is None:
                continue
            best = None
            for node, where in self._positions(root).items():
                if accept(node) and _contains(where, span):
                    size = (where.end.line - where.start.line, where.end.column - where.start.column)
                    if best is None or size < best[0]:
                        best = (size, node)
            if best is not None:
                found[span] = best[1]
        return found

    def _root_for(self, span: Span) -> cst.CSTNode | None:
        """The statement directly in a block that contains `span` (the unit positions are computed for)."""
        best = None
        for node in self._statements:
            if node.lineno <= span[0] and (node.end_lineno or node.lineno) >= span[2]:
                if best is None or (node.end_lineno - node.lineno) <= (best.end_lineno - best.lineno):
                    best = node
        if best is None:
            return None
        statement = self.statement_owner(self.by_ast[id(best)])
        while not isinstance(self.parent[statement], (cst.IndentedBlock, cst.Module)):
            statement = self.statement_owner(self.parent[statement])
        return statement

    def _positions(self, root: cst.CSTNode) -> dict[cst.CSTNode, CodeRange]:
        """Positions of the nodes of `root` in file coordinates; parents of its nodes recorded."""
        if root in self._local:
            return self._local[root]
        body: cst.CSTNode = root
        container = self.parent[root]
        while isinstance(container, cst.IndentedBlock):
            body = cst.If(test=cst.Name("True"), body=cst.IndentedBlock(body=[body], indent=container.indent))
            owner = self.statement_owner(self.parent[container])
            if isinstance(owner, cst.Match):  # a `case` body: the cases are indented under `match` too
                body = cst.If(test=cst.Name("True"), body=cst.IndentedBlock(body=[body], indent=owner.indent))
            while not isinstance(self.parent[owner], (cst.IndentedBlock, cst.Module)):  # an `elif` clause
                owner = self.statement_owner(self.parent[owner])
            container = self.parent[owner]
        temp = self.module.with_changes(body=[body], header=[], footer=[])
        wrapper = MetadataWrapper(temp, unsafe_skip_copy=True)
        ranges = wrapper.resolve(PositionProvider)
        offset = self.line[root] - ranges[root].start.line
        local = {}
        todo = [root]
        while todo:
            node = todo.pop()
            where = ranges[node]
            local[node] = CodeRange((where.start.line + offset, where.start.column),
                                    (where.end.line + offset, where.end.column))
            for child in node.children:
                if child not in self.parent:
                    self.parent[child] = node
                todo.append(child)
        self._local[root] = local
        return local


def _contains(outer: CodeRange, span: Span) -> bool:
    line, column, end_line, end_column = span
    return ((outer.start.line, outer.start.column) <= (line, column)
            and (outer.end.line, outer.end.column) >= (end_line, end_column))

"""MSP402 noncontiguous: transposed views fed to `.view()`, or to matmuls / returns of custom backward code."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import (
    EVAL_NAME,
    FUNCTION_TYPES,
    SCOPE_TYPES,
    Site,
    argument,
    constant,
    keyword,
    target_name,
)
from msprobe_rewriter.rules.base import Invalid, Rule

# A file none of whose text looks like a transpose cannot produce a finding.
LAYOUT_HINT = re.compile(r"\.(?:t\(|T\b|mT\b|H\b|mH\b|transpose|permute|swap)")
# Sinks: what the transposed tensor flows into.
VIEW, MATMUL, RETURN = "view", "matmul", "return"
MESSAGES = {
    VIEW: "`.view()` merging dimensions of a transposed tensor raises: call `.contiguous()` first, or use "
          "`.reshape()`",
    MATMUL: "transposed operand fed to a matmul in custom backward code: its memory layout picks the kernel and "
            "the summation order (the GLM4 dW case); add `.contiguous()`",
    RETURN: "custom backward returns a transposed (non-contiguous) gradient: return `.contiguous()` so the "
            "accumulated gradient has a fixed layout",
}
# Positional-argument counts a method needs to be the tensor transpose (PIL's `transpose(method)` and
# NumPy's `transpose()` / `transpose(axes)` differ from torch's `transpose(dim0, dim1)`).
METHOD_ARITY = {"t": (0,), "transpose": (2,), "swapaxes": (2,), "swapdims": (2,)}  # others: at least one


class Noncontiguous(Rule):
    code = "MSP402"
    name = "noncontiguous"
    severity = "error"
    frameworks = ("pytorch", "mindspore")
    fixable = True
    message = ("make the memory layout explicit: add `.contiguous()` after `.t()`/`.transpose()`/`.permute()` "
               "before `.view()`, or before a matmul or a return in custom backward code")
    summary = ("Flags `.t()`, `.T`, `.mT`, `.transpose()`, `.permute()`, `.swapaxes()` results that go straight "
               "into a PyTorch `.view()` that merges dimensions (anywhere), or into `matmul`/`mm`/`bmm`/`@`/"
               "torch_npu's `npu_bmmV2` (and its matmuls fused with a collective), the input of `F.linear`/"
               "`npu_linear`/MindSpore's `dense` (not their weight, which they transpose themselves: "
               "`F.linear(x, w.t())` multiplies by `w` as it is laid out) inside custom backward code "
               "(`torch.autograd.Function.backward`, MindSpore `bprop`, functions named `*backward*`, and local helpers a "
               "backward calls), or a `return` of `torch.autograd.Function.backward` (not of a MindSpore `bprop`: "
               "MindSpore's transpose makes a new tensor, and the gradient is summed elementwise), without "
               "`.contiguous()`. Through a local variable the finding is a warning. A view after a literal `permute(...)` "
               "that keeps neighbouring dimensions in order (`permute(0, 2, 3, 1)` keeps 2, 3) may merge those without "
               "a copy, so it is reported only when it merges more dimensions than such pairs account for; a view with more "
               "dimensions than the transposed tensor is taken to split one; a transpose that swaps back the dimensions "
               "its variable was assigned swapped (`w = w.transpose(0, 2)` ... `w.transpose(0, 2)`) restores the layout "
               "and is not one.")
    why = ("A transpose only swaps strides. A matmul on a transposed operand runs a different kernel (or a "
           "transposed-operand path of the same kernel) with a different summation order, so the same math gives "
           "slightly different bits depending on layout. In the GLM4 case the weight gradient of a column-parallel "
           "linear was computed from `grad_output.t()` without `.contiguous()` on one side and with it on the "
           "other: forward matched bit for bit, step-2 grad norms did not. A `.view()` that merges transposed "
           "dimensions raises (views that only split a dimension are valid and not flagged; MindSpore's `view` "
           "reshapes any layout). Ordinary forward code "
           "(`q @ k.transpose(-2, -1)` in attention) is not flagged: autograd derives its backward the same way "
           "on every run, and an explicit copy there only costs memory.")
    fix = ("Write `.t().contiguous()` (or `.transpose(...).contiguous()`) where custom backward code feeds a matmul "
           "or returns a gradient, on both sides of a comparison. Before `.view()`, call `.contiguous()` or use "
           "`.reshape()`, which copies only when it must.")
    valid = (
        "import torch\n\n\nclass Attention(torch.nn.Module):\n    def forward(self, q, k, v):\n"
        "        att = q @ k.transpose(-2, -1)  # forward code: autograd handles it\n"
        "        y = att.softmax(-1) @ v\n        return y.transpose(1, 2).contiguous().view(q.size(0), -1)\n",
        "import torch\n\n\ndef merge(x):\n    return x.transpose(1, 2).reshape(x.size(0), -1)\n",
        "import torch\n\n\ndef to_map(x, B, C, H, W):\n"
        "    return x.transpose(1, 2).view(B, C, H, W)  # splits a dimension: valid on any strides\n",
        "import numpy as np\nimport torch\n\n\ndef project(a, b):\n    m = np.eye(3).T\n    return m.view(np.float32)\n",
        "import torch\n\n\nclass MatMul(torch.autograd.Function):\n    @staticmethod\n"
        "    def backward(ctx, grad_output):\n        x, w = ctx.saved_tensors\n"
        "        grad_w = torch.mm(grad_output.t().contiguous(), x)\n        return grad_output.mm(w), grad_w\n",
        "from PIL import Image\nimport torch\n\n\ndef flip(img):\n"
        "    return img.transpose(Image.FLIP_LEFT_RIGHT)\n",
        "import torch\n\n\ndef to_bytes(x):\n    return x.t().view(torch.int16)  # a dtype view\n",
        # (1, C, W, H) -> (1, W, H, C): W and H stay neighbours in order, so merging them needs no copy.
        "import torch\n\n\ndef tokens(p, dim):\n    return p.permute(0, 2, 3, 1).view(1, -1, dim)\n",
        # fairseq's TPU path: the same swap twice is the original layout (an elementwise op in between keeps it).
        "import torch\n\n\ndef mask(w, pad, bsz, heads, t, s):\n    w = w.transpose(0, 2)\n"
        "    w = w.masked_fill(pad, float(\"-inf\"))\n    w = w.transpose(0, 2)\n    return w.view(bsz * heads, t, s)\n",
        # More dimensions than the transposed tensor has: the view splits one (DINOv2's ViT adapter).
        "import torch\n\n\ndef to_map(c, bs, dim, h, w):\n    return c.transpose(1, 2).view(bs, dim, h * 2, w * 2)\n",
        # F.linear(x, W) computes x @ W.t(): `w.t()` as its weight reaches the kernel as `w`, contiguous
        "import torch\nimport torch.nn.functional as F\n\n\nclass NormLinear(torch.autograd.Function):\n"
        "    @staticmethod\n    def backward(ctx, dout):\n        w, = ctx.saved_tensors\n"
        "        return F.linear(dout, w.t())\n",
        "import mindspore as ms\nfrom mindspore import ops\n\n\ndef merge(x, b, n):\n"
        "    return ops.transpose(x, (0, 2, 1)).view(b, n)  # MindSpore's view reshapes any layout\n",
        # mindediting's unfold: MindSpore's transpose returns a new tensor, whatever the layout of the gradient
        "import mindspore as ms\nfrom mindspore import nn, ops\n\n\nclass Unfold(nn.Cell):\n"
        "    def bprop(self, x, out, dout):\n        dx = dout.reshape(4, 4, 2, 3)\n"
        "        return (dx.transpose(2, 3, 0, 1),)\n",
    )
    invalid = (
        Invalid("import torch\n\n\nclass LinearFn(torch.autograd.Function):\n    @staticmethod\n"
                "    def forward(ctx, x, w):\n        ctx.save_for_backward(x, w)\n        return x @ w.t()\n\n"
                "    @staticmethod\n    def backward(ctx, grad_output):\n        x, w = ctx.saved_tensors\n"
                "        grad_x = grad_output.mm(w)\n        grad_w = grad_output.t().matmul(x)\n"
                "        return grad_x, grad_w\n", lines=(14,), severity="error"),
        Invalid("import torch as T\nfrom torch.autograd import Function\n\n\nclass Proj(Function):\n"
                "    @staticmethod\n    def backward(ctx, g):\n        x, = ctx.saved_tensors\n"
                "        return T.matmul(g, x.T), g.transpose(0, 1)\n", lines=(9,), severity="error"),
        Invalid("import torch\n\n\ndef merge_heads(y, B, T, H, D):\n    return y.transpose(1, 2).view(B, T, H * D)\n",
                lines=(5,), severity="error"),
        Invalid("import torch\n\n\ndef merge_heads(y, B, T, C):\n    y = y.permute(0, 2, 1, 3)\n"
                "    return y.view(B, T, C)\n", lines=(6,), severity="warning"),
        Invalid("import torch\n\n\nclass RowParallel(torch.autograd.Function):\n    @staticmethod\n"
                "    def backward(ctx, grad_output):\n        inp, = ctx.saved_tensors\n"
                "        g_t = grad_output.t()\n        return torch.mm(g_t, inp)\n", lines=(9,), severity="warning"),
        Invalid("import torch\nimport torch.nn.functional as F\n\n\ndef _wgrad(grad_output, total_input):\n"
                "    return F.linear(grad_output.t(), total_input.t())\n\n\n"
                "class ColumnParallel(torch.autograd.Function):\n    @staticmethod\n"
                "    def backward(ctx, grad_output):\n        x, = ctx.saved_tensors\n"
                "        return grad_output, _wgrad(grad_output, x)\n", lines=(6,)),
        # ModelZoo's DINO: torch_npu's batched matmul in a custom backward
        Invalid("import torch\nimport torch_npu\n\n\nclass MatmulApply(torch.autograd.Function):\n"
                "    @staticmethod\n    def backward(ctx, grad):\n        a, b = ctx.saved_tensors\n"
                "        return torch_npu.npu_bmmV2(grad, b, []), torch_npu.npu_bmmV2(grad.transpose(-2, -1), a, [])\n",
                lines=(9,)),
        Invalid("import mindspore as ms\nfrom mindspore import nn, ops\n\n\nclass Dense(nn.Cell):\n"
                "    def bprop(self, x, w, out, dout):\n        return ops.matmul(dout, w), ops.matmul(dout.T, x)\n",
                lines=(7,)),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.torch_file = ctx.imports.imports_root("torch")
        self.active = LAYOUT_HINT.search(ctx.source) is not None and (
            self.torch_file or ctx.imports.imports_root("mindspore"))
        self.backward_ids: set[int] = set()
        self.backward_callees: set[str] = set()
        self.matmuls: list[tuple[ast.AST, str, Site, str | None]] = []  # (function, name, site, via)

    # --- traversal ---------------------------------------------------------------------------
    def visit_Module(self, node: ast.Module) -> None:
        if self.active:
            self._scan(node, node.body, on_eval=False)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if not self.active:
            return
        if self.ctx.is_custom_backward(node, self.ctx.ancestors[-1] if self.ctx.ancestors else None):
            self.backward_ids.add(id(node))
            self.backward_callees.update(call.func.id for call in _calls(node) if isinstance(call.func, ast.Name))
        if not LAYOUT_HINT.search("\n".join(self.ctx.lines[node.lineno - 1:node.end_lineno])):
            return  # no transpose in this function's text: nothing to track
        on_eval = self.ctx.on_eval_path(node) or EVAL_NAME.search(node.name) is not None
        self._scan(node, node.body, on_eval)

    visit_AsyncFunctionDef = visit_FunctionDef

    def finish(self) -> None:
        for function, name, site, via in self.matmuls:
            if id(function) in self.backward_ids or name in self.backward_callees or "backward" in name:
                self._report(site, MATMUL, via)

    # --- one scope, statement by statement ---------------------------------------------------
    def _scan(self, scope: ast.AST, body: list[ast.stmt], on_eval: bool) -> None:
        """Find transposes reaching a sink, tracking locals assigned a transpose in source order."""
        name = getattr(scope, "name", "")
        local: dict[str, ast.AST] = {}
        ever: dict[str, set] = {}  # name -> the swaps it was assigned: the same swap again restores the layout
        for stmt in _statements(body):
            if not local and not LAYOUT_HINT.search("\n".join(self.ctx.lines[stmt.lineno - 1:stmt.end_lineno])):
                continue  # no transpose in this statement, and no variable holding one
            for node in _expressions(stmt):
                for sink, where, via in self._sinks(node, local, ever):
                    site = Site(where, on_eval)
                    if sink == MATMUL:
                        self.matmuls.append((scope, name, site, via))
                    else:
                        self._report(site, sink, via)
            if isinstance(stmt, ast.Return) and id(scope) in self.backward_ids and name != "bprop" \
                    and stmt.value is not None:
                values = stmt.value.elts if isinstance(stmt.value, ast.Tuple) else [stmt.value]
                for value in values:
                    via = self._transposed(value, local)
                    if via is not False:
                        self._report(Site(value, on_eval), RETURN, via)
            _update_locals(stmt, local, lambda value: self._is_transpose(value) and not self._restores(value, ever))
            for held, transpose in local.items():
                ever.setdefault(held, set()).add(_swap(transpose, self.ctx))

    def _restores(self, transpose: ast.AST, ever: dict[str, set]) -> bool:
        """Whether `transpose` swaps back what its name was assigned (fairseq's `w = w.transpose(0, 2)`, then,
        after an elementwise op that keeps the layout, `w.transpose(0, 2)` again): the original layout."""
        swap = _swap(transpose, self.ctx)
        return swap is not None and swap in ever.get(_transposed_name(transpose, self.ctx), ())

    def _sinks(self, node: ast.AST, local: dict[str, ast.AST],
               ever: dict[str, set]) -> Iterator[tuple[str, ast.AST, str | None]]:
        """(sink, operand, variable name or None) for each transposed operand `node` consumes (not one that
        swaps a layout back)."""
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            operands: list[ast.expr] = [node.left, node.right]
            kind = MATMUL
        elif isinstance(node, ast.Call):
            kind, operands = self._call_sink(node)
        else:
            return
        for operand in operands:
            via = self._transposed(operand, local)
            if via is False or via is None and self._restores(operand, ever):
                continue
            transpose = local[via] if via else operand
            if kind == VIEW and not _view_merges(node, _min_rank(transpose, self.ctx), _kept_runs(transpose, self.ctx)):
                continue  # a view that only splits dimensions, or may merge only dimensions still in order, is valid
            yield kind, operand, via

    def _call_sink(self, node: ast.Call) -> tuple[str, list[ast.expr]]:
        func = node.func
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.LINEAR_FUNCTIONS:  # `F.linear(x, w.t())` computes `x @ w`: `w` in its own layout
            operand = argument(node, 0, "input")
            return MATMUL, [] if operand is None else [operand]
        if qualified in catalogue.MATMUL_FUNCTIONS:
            return MATMUL, [*node.args, *(kw.value for kw in node.keywords if kw.arg != "out")]
        if not isinstance(func, ast.Attribute) or self.ctx.qualname(func) is not None:
            return MATMUL, []
        if func.attr in catalogue.MATMUL_METHODS:
            return MATMUL, [func.value, *node.args]
        if func.attr == "view" and self.torch_file and not self._is_dtype_view(node):  # MindSpore's view reshapes
            return VIEW, [func.value]
        return MATMUL, []

    def _is_dtype_view(self, node: ast.Call) -> bool:
        """`x.view(torch.int16)` / `x.view(dtype=...)` reinterpret bytes; they do not reshape."""
        if keyword(node, "dtype") is not None:
            return True
        return len(node.args) == 1 and self.ctx.qualname(node.args[0]) is not None

    def _transposed(self, expr: ast.AST, local: dict[str, ast.AST]) -> str | None | bool:
        """None when `expr` is a transpose itself, the variable's name when it holds one, else False."""
        if self._is_transpose(expr):
            return None
        if isinstance(expr, ast.Name) and expr.id in local:
            return expr.id
        return False

    def _is_transpose(self, expr: ast.AST) -> bool:
        """Whether `expr` is a transposed/permuted view of a tensor."""
        if isinstance(expr, ast.Attribute):
            return expr.attr in catalogue.TRANSPOSE_PROPERTIES and self._tensorish(expr.value)
        if not isinstance(expr, ast.Call):
            return False
        qualified = self.ctx.call_qualname(expr)
        if qualified is not None:
            return qualified in catalogue.TRANSPOSE_FUNCTIONS
        func = expr.func
        if not isinstance(func, ast.Attribute) or func.attr not in catalogue.TRANSPOSE_METHODS:
            return False
        arity = METHOD_ARITY.get(func.attr)
        if func.attr == "transpose" and self.ctx.imports.imports_root("mindspore"):
            arity = None  # MindSpore's Tensor.transpose(*axes) takes a permutation
        count = len(expr.args) + len(expr.keywords)
        if (count not in arity) if arity is not None else count == 0:
            return False
        return self._tensorish(func.value)

    def _tensorish(self, expr: ast.AST) -> bool:
        """Not provably a NumPy array, a module, or a class (for `.T` and friends)."""
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr in ("numpy", "asnumpy", "tolist"):
                return False
            qualified = self.ctx.call_qualname(expr)
            return qualified is None or not qualified.startswith("numpy.")
        if self.ctx.qualname(expr) is not None:
            return False  # a module attribute such as `np.T`
        name = target_name(expr)
        return name is None or not self.ctx.assigned_calls.get(name, "").startswith("numpy.")

    def _report(self, site: Site, sink: str, via: str | None) -> None:
        message = MESSAGES[sink] + (f" (through `{via}`)" if via else "")
        self.report(site, message, "warning" if via else "error")


def _transposed_name(transpose: ast.AST, ctx) -> str | None:
    """The name a transpose is taken of: `x` of `x.transpose(0, 1)`, `x.T`, `torch.transpose(x, 0, 1)`."""
    if isinstance(transpose, ast.Attribute):
        base = transpose.value
    elif isinstance(transpose, ast.Call) and ctx.call_qualname(transpose) is not None:
        base = transpose.args[0] if transpose.args else None
    elif isinstance(transpose, ast.Call) and isinstance(transpose.func, ast.Attribute):
        base = transpose.func.value
    else:
        return None
    return base.id if isinstance(base, ast.Name) else None


def _swap(transpose: ast.AST, ctx) -> tuple | None:
    """What a transpose swaps, comparable between two of them: ("t",) for `.t()`/`.T`, the two literal
    dimensions of `transpose`/`swapaxes`; None for a permutation or dimensions that are not literals."""
    if isinstance(transpose, ast.Attribute):
        return (transpose.attr,) if transpose.attr in ("T", "mT") else None
    qualified = ctx.call_qualname(transpose)
    name = qualified.rsplit(".", 1)[1] if qualified else getattr(transpose.func, "attr", "")
    if name == "t":
        return ("T",)
    dims = [constant(a) for a in (transpose.args[1:] if qualified else transpose.args)]
    if name in ("transpose", "swapaxes", "swapdims") and len(dims) == 2 and all(type(d) is int for d in dims):
        return ("swap", *sorted(dims))
    return None


def _min_rank(transpose: ast.AST, ctx) -> int:
    """The fewest dimensions the transposed tensor can have (exact for `permute(...)`)."""
    if not isinstance(transpose, ast.Call):
        return 2  # `.T`, `.mT`
    qualified = ctx.call_qualname(transpose)
    args = transpose.args[1:] if qualified else transpose.args
    name = qualified.rsplit(".", 1)[1] if qualified else transpose.func.attr
    if name == "permute":
        dims = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
        return 2 if any(isinstance(d, ast.Starred) for d in dims) else len(dims)
    dims = [constant(a) for a in args[:2]]
    return max((d + 1 if d >= 0 else -d for d in dims if isinstance(d, int) and not isinstance(d, bool)),
               default=2)


def _kept_runs(transpose: ast.AST, ctx) -> int:
    """How many neighbouring dimensions of a literal `permute(...)` stay neighbours in their original order
    (`permute(0, 2, 3, 1)` keeps 2, 3): a view may merge each such pair without copying. 0 for anything else."""
    if not isinstance(transpose, ast.Call) or not isinstance(transpose.func, ast.Attribute) \
            or transpose.func.attr != "permute":
        return 0
    args = transpose.args[1:] if ctx.call_qualname(transpose) else transpose.args
    dims = [constant(d) for d in (args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List))
                                  else args)]
    if not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return 0
    return sum(1 for a, b in zip(dims, dims[1:], strict=False) if b == a + 1)


def _view_merges(view: ast.Call, rank: int, kept: int) -> bool:
    """Whether `.view(...)` provably merges dimensions that are out of order: a product (when no neighbouring
    pair is still in order), or fewer dimensions than the input has by more than the `kept` pairs in order
    could account for."""
    shape = view.args
    if len(shape) == 1 and isinstance(shape[0], (ast.Tuple, ast.List)):
        shape = shape[0].elts
    if not kept and len(shape) <= rank and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)
                                               for arg in shape for n in ast.walk(arg)):
        return True  # (more dimensions than the input has: `view(B, C, 2 * H, 2 * W)` splits one)
    if any(isinstance(arg, ast.Starred) for arg in shape):
        return False
    if len(shape) == 1 and not isinstance(constant(shape[0]), int):
        return False  # `view(new_shape)`: a shape object of unknown length
    return len(shape) < rank - kept


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a body in source order, entering compound statements but not nested scopes."""
    for stmt in body:
        if isinstance(stmt, (*FUNCTION_TYPES, ast.ClassDef)):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, field, []))
        for handler in getattr(stmt, "handlers", []):
            yield from _statements(handler.body)
        for case in getattr(stmt, "cases", []):
            yield from _statements(case.body)


def _expressions(stmt: ast.stmt) -> Iterator[ast.AST]:
    """Expression nodes of one statement (its header for compound ones), without nested scopes."""
    todo: list[ast.AST] = []
    for _, value in ast.iter_fields(stmt):
        items = value if isinstance(value, list) else [value]
        todo.extend(v for v in items if isinstance(v, ast.AST) and not isinstance(v, (ast.stmt, ast.excepthandler,
                                                                                         ast.match_case)))
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node) if not isinstance(child, SCOPE_TYPES))


def _update_locals(stmt: ast.stmt, local: dict[str, ast.AST], is_transpose) -> None:
    """Bind names assigned a transpose; forget names assigned anything else."""
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        transposed = stmt.value is not None and is_transpose(stmt.value)
        for target in targets:
            if isinstance(target, ast.Name) and transposed:
                local[target.id] = stmt.value
            else:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        local.pop(name.id, None)
    elif isinstance(stmt, (ast.AugAssign, ast.For, ast.AsyncFor)):
        for name in ast.walk(stmt.target):
            if isinstance(name, ast.Name):
                local.pop(name.id, None)


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    """Every call under `node`, nested scopes included."""
    return (n for n in ast.walk(node) if isinstance(n, ast.Call))

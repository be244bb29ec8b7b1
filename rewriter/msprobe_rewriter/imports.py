"""Resolve local names to qualified names through imports and simple aliases (stdlib ast only)."""

from __future__ import annotations

import ast
import re

# Top-level packages whose names the rules reason about. A name imported from anything else
# (or not imported at all) is never treated as one of theirs.
KNOWN_ROOTS = frozenset(
    {"torch", "torchvision", "torch_npu", "mindspore", "numpy", "random", "os", "deepspeed", "transformers",
     "accelerate", "lightning", "pytorch_lightning", "timm", "torchaudio", "torchtext", "msprobe",
     "msprobe_runtime", "trl", "peft", "sklearn", "mmengine", "mmcv", "diffusers", "torchdata", "speechbrain",
     "hyperpyyaml", "flash_attn", "flash_attn_interface", "dgl", "torch_geometric", "megatron", "webdataset",
     "detectron2", "composer", "xformers"}
)


# Names that stand for a library's under another module, as the catalogue names them: TRL's trainers and configs,
# each exported by the package and by its module (`from trl.experimental.cpo import CPOTrainer`,
# `trl.trainer.sft_trainer.SFTTrainer`), and the OpenMMLab packages' runner registries, children of mmengine's
# (`from mmyolo.registry import RUNNERS`; mmdet, mmseg, mmpretrain, ... likewise), and `triton_pre_mlir`, the
# pre-MLIR fork of Triton that FlashAttention's old Triton kernel and its copies import as `triton` (MPT's in
# llm-foundry and InternVL).
_CANONICAL_NAMES = (
    (re.compile(r"^trl\.(?:experimental|trainer)(?:\.\w+)*\.(\w+(?:Trainer|Config))$"), r"trl.\1"),
    (re.compile(r"^mm\w+\.registry\.RUNNERS$"), "mmengine.registry.RUNNERS"),
    (re.compile(r"^triton_pre_mlir\b"), "triton"),
)


def _canonical(qualified: str) -> str:
    for pattern, replacement in _CANONICAL_NAMES:
        qualified = pattern.sub(replacement, qualified)
    return qualified


class ImportTracker:
    """Maps names bound by `import`/`from ... import` (and `x = torch.nn`-style aliases) to dotted names."""

    def __init__(self) -> None:
        self.bindings: dict[str, str] = {}
        self.local_modules: list[tuple[str, int, tuple[str, ...]]] = []  # (module, level, names)
        # (module, level, class name) -> the library class that class of a project module derives from; an
        # import of it binds that (see project.imported_subclasses)
        self.project_classes: dict[tuple[str, int, str], str] = {}
        # (module, level, function name) -> the library function a project module's function copies; an import of
        # it binds that (see project.copied_functions)
        self.project_functions: dict[tuple[str, int, str], str] = {}
        # Memos for the hot queries, valid while `_version` (bumped on every binding change) is unchanged.
        self._version = 0
        self._aliases: set[str] = set()  # names `add_alias` bound (not imports)
        self._resolved: dict[int, tuple[ast.AST, int, str | None]] = {}
        self._roots: dict[str, tuple[int, bool]] = {}

    def add_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """Record the bindings one import statement makes."""
        self._version += 1
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    self.bindings[alias.asname] = _canonical(alias.name)
                else:
                    root = alias.name.split(".", 1)[0]
                    self.bindings[root] = _canonical(root)
                if alias.name.split(".", 1)[0] not in KNOWN_ROOTS:
                    self.local_modules.append((alias.name, 0, ()))
            return
        module = node.module or ""
        if node.level or module.split(".", 1)[0] not in KNOWN_ROOTS:
            self.local_modules.append((module, node.level, tuple(a.name for a in node.names)))
        for alias in node.names:
            key = (module, node.level, alias.name)
            derived = self.project_classes.get(key) or self.project_functions.get(key)
            if derived is not None:
                self.bindings[alias.asname or alias.name] = derived
            elif alias.name != "*" and not node.level:
                qualified = f"{module}.{alias.name}" if module else alias.name
                self.bindings[alias.asname or alias.name] = _canonical(qualified)

    def bind_subclasses(self, tree: ast.Module, bases: frozenset[str]) -> None:
        """Let the module's classes that derive from one of `bases` stand for it: yolov5's `class
        InfiniteDataLoader(dataloader.DataLoader)` takes a DataLoader's arguments and shuffles like one."""
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name not in self.bindings:
                base = next((q for q in map(self.resolve, node.bases) if q in bases), None)
                if base is not None:
                    self._version += 1
                    self.bindings[node.name] = base

    def add_alias(self, target: str, value: ast.expr) -> None:
        """Record `target = <dotted name>` when the value resolves to a known qualified name."""
        qualified = self.resolve(value)
        self._version += 1
        if qualified is not None:
            self.bindings[target] = qualified
            self._aliases.add(target)
        else:
            self.bindings.pop(target, None)

    def drop_alias(self, target: str) -> None:
        """`target` is assigned something else (`loss = criterion(out, y)` after `loss = nn.CrossEntropyLoss`):
        it no longer names what an alias made it name. Imports stay (`np = None` when numpy fails to import)."""
        if target in self._aliases:
            self._aliases.discard(target)
            self.bindings.pop(target, None)
            self._version += 1

    def resolve(self, node: ast.AST) -> str | None:
        """The qualified name of a Name/Attribute chain rooted in a known import, else None."""
        memo = self._resolved.get(id(node))
        if memo is not None and memo[0] is node and memo[1] == self._version:
            return memo[2]
        qualified = self._resolve(node)
        self._resolved[id(node)] = (node, self._version, qualified)
        return qualified

    def resolve_any(self, node: ast.AST) -> str | None:
        """Like `resolve`, for a chain rooted in any import (`time.time`, `os.urandom`), not memoised."""
        return self._resolve(node, known_only=False)

    def _resolve(self, node: ast.AST, known_only: bool = True) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        base = self.bindings.get(node.id)
        if base is None or (known_only and base.split(".", 1)[0] not in KNOWN_ROOTS):
            return None
        if parts:
            return base + "." + ".".join(reversed(parts))
        return base

    def imports_root(self, root: str) -> bool:
        """Whether anything from the top-level package `root` is imported."""
        memo = self._roots.get(root)
        if memo is not None and memo[0] == self._version:
            return memo[1]
        found = any(q == root or q.startswith(root + ".") for q in self.bindings.values())
        self._roots[root] = (self._version, found)
        return found

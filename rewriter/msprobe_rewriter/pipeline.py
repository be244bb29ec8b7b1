"""Data-pipeline values: which expressions hold a MindSpore dataset or only deterministic transforms.

Shared by the data rules. Names are followed with `LocalValues`, so `ds = ds.map(...)` chains and
`trans = [vision.Decode(), ...]` lists assigned a few statements earlier are recognised.
"""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import (
    EVAL_NAME,
    FileContext,
    Site,
    argument,
    constant,
    has_false_keyword,
    keyword,
    target_name,
)
from msprobe_rewriter.values import UNKNOWN, LocalValues

DATASET = "mindspore-dataset"
NOT_DATASET = "not-a-dataset"
DETERMINISTIC = "deterministic-transforms"


class PipelineValues:
    """Follows names through assignments (feed `values` from the traversal, e.g. with `FollowsValues`)."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.values = LocalValues(ctx, self._classify)
        self.keyword = self.values.keyword

    def _classify(self, value: ast.expr) -> str | None:
        verdict = self.is_dataset(value)
        if verdict is not None:
            return DATASET if verdict else (DETERMINISTIC if self.is_deterministic(value) else NOT_DATASET)
        return None

    def site(self, call: ast.Call) -> Site:
        """Where to report on a loader, sampler or dataset: evaluation-only when its data is for evaluation."""
        site = self.ctx.site(call)
        if not site.on_eval_path:
            site.on_eval_path = self._reads_evaluation_data(call)
        return site

    def _reads_evaluation_data(self, call: ast.Call) -> bool:
        """`DataLoader(MNIST(train=False))`, `DataLoader(val_set)`, `MnistDataset(path, usage="test")`."""
        data = argument(call, 0, "dataset")
        if isinstance(data, ast.Call) and has_false_keyword(data, "train"):
            return True
        name = target_name(data) if data is not None else None
        if name and EVAL_NAME.search(name):
            return True
        usages = (constant(keyword(call, key)) for key in ("usage", "split"))
        return any(isinstance(usage, str) and EVAL_NAME.search(usage) for usage in usages)

    def is_dataset(self, node: ast.expr) -> bool | None:
        """True for a MindSpore dataset, False for something known to be other, None when unknown."""
        if isinstance(node, ast.Call):
            qualified = self.ctx.call_qualname(node)
            if qualified is not None:
                return (catalogue.is_mindspore_dataset_class(qualified)
                        or qualified in catalogue.MINDSPORE_DATASET_FUNCTIONS)
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in catalogue.MINDSPORE_DATASET_METHODS:
                return self.is_dataset(func.value)
            return None
        if isinstance(node, ast.Name):
            fact = self.values.last(node.id, node)
            if fact == DATASET:
                return True
            if fact in (NOT_DATASET, DETERMINISTIC) or self.ctx.qualname(node) is not None:
                return False
            return None
        if isinstance(node, ast.Attribute):
            return False if self.ctx.qualname(node) is not None else None
        if isinstance(node, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp,
                             ast.SetComp, ast.JoinedStr)):
            return False
        return None

    def draws_nothing(self, node: ast.expr | None) -> bool:
        """Whether `node` is a torchvision dataset (or a name every assignment of which gives one) whose transforms
        are known to draw no random numbers (or that has none): its samples are the same in any worker."""
        if isinstance(node, ast.Name):
            found = self.values.bindings.bound(node.id, node)
            return bool(found) and all(isinstance(value, ast.expr) and self.draws_nothing(value) for value in found)
        if not isinstance(node, ast.Call):
            return False
        positions = catalogue.TORCHVISION_DATASETS.get(self.ctx.call_qualname(node) or "")
        if positions is None:
            return False
        for name, position in zip(("transform", "target_transform"), positions, strict=True):
            given = self.values.keyword(node, name, position)
            if given is UNKNOWN or given is not None and constant(given) is not None and not self.is_deterministic(given):
                return False
        return self.values.keyword(node, "transforms") is None

    def is_deterministic(self, node: ast.expr | None) -> bool:
        """Whether `node` is a transform call, or a list of them, known to draw no random numbers."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return bool(node.elts) and all(self.is_deterministic(e) for e in node.elts)
        if isinstance(node, ast.Name):  # every assignment that may reach here (`if training: ... else: ...`)
            facts = self.values.facts(node.id, node)
            return bool(facts) and all(fact == DETERMINISTIC for fact in facts)
        if not isinstance(node, ast.Call):
            return False
        qualified = self.ctx.call_qualname(node)
        if qualified is None or catalogue.transform_library(qualified) is None:
            return False
        if catalogue.is_random_transform(qualified) or qualified.rpartition(".")[2] in catalogue.USER_FUNCTION_TRANSFORMS:
            return False
        if qualified.rpartition(".")[2] == "Compose":
            return self.is_deterministic(argument(node, 0, "transforms"))
        return True

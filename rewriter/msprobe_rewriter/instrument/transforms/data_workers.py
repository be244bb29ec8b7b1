"""Make parallel data loading reproducible, where `data-workers` fires.

PyTorch loaders with workers get a seeded `generator=torch.Generator().manual_seed(torch.initial_seed())`
(worker seeds then follow `seed_all`'s seed, not the global generator's state; a `generator=g` that may be
None becomes `g or torch.Generator()...`); with `--data strict`
they load in the main process instead (`num_workers=0`, `persistent_workers=False`, no
`prefetch_factor`). MindSpore operations and datasets get `num_parallel_workers=1`, and
`set_num_parallel_workers(n)` becomes `set_num_parallel_workers(1)`.
"""

from __future__ import annotations

import libcst as cst

from msprobe_rewriter import catalogue
from msprobe_rewriter.instrument import nodes
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit

ONE = cst.Integer("1")
MINDSPORE_PREFIXES = ("mindspore.", "mindyolo.")  # the MindSpore loaders data-workers reports


class DataWorkers(Transform):
    name = "data-workers"
    fixes = ("data-workers",)
    rule = "data-workers"
    summary = ("Seeds PyTorch loader workers with a generator (`--data strict`: no workers); one MindSpore "
               "worker per operation.")
    details = __doc__.split("\n\n", 1)[1].strip()
    examples = (
        Example("import torch\n\nloader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=4)\n",
                "import torch\n\nloader = torch.utils.data.DataLoader(ds, batch_size=8, num_workers=4, "
                "generator=torch.Generator().manual_seed(torch.initial_seed()))\n"),
        Example("from torch.utils.data import DataLoader\n\n"
                "loader = DataLoader(ds, num_workers=8, persistent_workers=True, prefetch_factor=4)\n",
                "from torch.utils.data import DataLoader\n\n"
                "loader = DataLoader(ds, num_workers=0, persistent_workers=False)\n", {"data_strict": True}),
        Example("import mindspore.dataset as ds\n\ndata = ds.GeneratorDataset(source, [\"image\"], shuffle=False, "
                "num_parallel_workers=8)\ndata = data.map(operations=ops, input_columns=\"image\")\n",
                "import mindspore.dataset as ds\n\ndata = ds.GeneratorDataset(source, [\"image\"], shuffle=False, "
                "num_parallel_workers=1)\ndata = data.map(operations=ops, input_columns=\"image\", "
                "num_parallel_workers=1)\n"),
    )

    def apply(self, unit: Unit) -> None:
        for finding, call in unit.sites_for(self.rule, lambda n: isinstance(n, cst.Call)):
            rewrite = self._plan(unit, call)
            if isinstance(rewrite, str):
                unit.note(finding.line, f"data workers left as they are ({rewrite})")
            else:
                unit.edits.rewrite(call, rewrite)

    def _plan(self, unit: Unit, call: cst.Call):
        """The call's rewrite, or why it is left alone."""
        qualified = unit.names.qualname(call.func)
        positions = catalogue.loader_positions(qualified)
        if positions is not None:
            if unit.options.data_strict:
                return lambda c: _no_workers(c, positions)
            torch = unit.module_name("torch")
            seeded = f"{torch}.Generator().manual_seed({torch}.initial_seed())"
            given = nodes.argument(call, "generator", positions.get("generator"))
            generator = nodes.expression(seeded if given is None else _or_seeded(given.value, seeded))
            return lambda c: nodes.set_argument(c, "generator", generator, positions.get("generator"))
        if qualified in catalogue.DEEPSPEED_TRAINING_DATA:
            return "DeepSpeed builds that loader: build a `DataLoader` yourself and leave `training_data` out"
        if qualified in catalogue.MINDSPORE_SET_WORKERS:
            return lambda c: nodes.set_argument(c, "num", ONE, 0)
        # MindSpore's own calls from here on: a dataset's `.map(...)`/`.batch(...)` resolves to no name at all
        if qualified is not None and not qualified.startswith(MINDSPORE_PREFIXES):
            return f"`{qualified}` is no loader this tool knows"
        if nodes.has_star(call) and nodes.argument(call, catalogue.MINDSPORE_WORKER_KEYWORD) is None:
            return "arguments passed through `**kwargs`"
        return lambda c: nodes.set_argument(c, catalogue.MINDSPORE_WORKER_KEYWORD, ONE)


def _or_seeded(given: cst.BaseExpression, seeded: str) -> str:
    """A reported loader's `generator=` may be None (`g = None` unless a flag is on): keep it where it is set."""
    if isinstance(given, cst.Name) and given.value == "None":
        return seeded
    kept = nodes.code_of(given)
    return f"{kept if isinstance(given, (cst.Name, cst.Attribute)) else f'({kept})'} or {seeded}"


def _no_workers(call: cst.Call, positions: dict[str, int]) -> cst.Call:
    call = nodes.set_argument(call, "num_workers", cst.Integer("0"), positions.get("num_workers"))
    if nodes.argument(call, "persistent_workers") is not None:
        call = nodes.set_argument(call, "persistent_workers", cst.Name("False"))
    prefetch = nodes.argument(call, "prefetch_factor")
    return nodes.remove_argument(call, prefetch) if prefetch is not None else call

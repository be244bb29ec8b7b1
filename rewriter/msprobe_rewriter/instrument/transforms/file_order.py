"""Sort directory listings that feed data, where `unsorted-file-list` fires: every machine then builds the
dataset in the same order."""

from __future__ import annotations

import libcst as cst

from msprobe_rewriter.instrument import nodes
from msprobe_rewriter.instrument.transforms.base import Example, Transform
from msprobe_rewriter.instrument.unit import Unit


class FileOrder(Transform):
    name = "unsorted-file-list"
    fixes = ("unsorted-file-list",)
    rule = "unsorted-file-list"
    summary = "Wraps directory listings that feed data in `sorted(...)`."
    details = ("`os.listdir(root)`, `glob.glob(pattern)` and pathlib's `glob`/`rglob`/`iterdir` become "
               "`sorted(...)` of themselves, `os.scandir(root)` is sorted by entry name. An `os.walk` loop is "
               "left with a note: sort `dirs` in place and the files taken; so is `with os.scandir(root) as "
               "entries:` (a `with` needs the iterator itself): iterate `sorted(entries, key=lambda entry: "
               "entry.name)`.")
    examples = (
        Example("import os\n\nimport torch\n\n\nclass Frames(torch.utils.data.Dataset):\n    def __init__(self, root):\n"
                "        self.items = [os.path.join(root, f) for f in os.listdir(root)]\n",
                "import os\n\nimport torch\n\n\nclass Frames(torch.utils.data.Dataset):\n    def __init__(self, root):\n"
                "        self.items = [os.path.join(root, f) for f in sorted(os.listdir(root))]\n"),
        Example("import random\nfrom pathlib import Path\n\nimport torch\n\nfiles = list(Path('data').rglob('*.npy'))\n"
                "random.Random(0).shuffle(files)\n",
                "import random\nfrom pathlib import Path\n\nimport torch\n\nfiles = list(sorted(Path('data').rglob('*.npy')))\n"
                "random.Random(0).shuffle(files)\n"),
    )

    def apply(self, unit: Unit) -> None:
        for finding, call in unit.sites_for(self.rule, lambda n: isinstance(n, cst.Call)):
            listing = nodes.dotted(call.func) or ""
            if not finding.fixable:
                unit.note(finding.line, "`os.walk` not rewritten: sort `dirs` in place and the files you take"
                          if listing.endswith("walk") else f"not rewritten: {finding.message}")
                continue
            key = [cst.Arg(nodes.expression("lambda entry: entry.name"), keyword=cst.Name("key"))] \
                if listing.endswith("scandir") else []
            unit.edits.rewrite(call, lambda updated, key=key: cst.Call(cst.Name("sorted"), [cst.Arg(updated), *key]))

"""MSP901 unused-noqa: a `# noqa: MSPxxx` that suppresses nothing (a meta check run by the engine)."""

from __future__ import annotations

from msprobe_rewriter.lint.suppressions import UNUSED_NOQA_CODE, UNUSED_NOQA_NAME
from msprobe_rewriter.rules.base import Invalid, Rule


class UnusedNoqa(Rule):
    """No detector of its own: selecting it makes `lint_source` report stale suppressions.

    Its examples only make sense next to the rules they mention, so the example harness runs them
    with every rule selected.
    """

    code = UNUSED_NOQA_CODE
    name = UNUSED_NOQA_NAME
    severity = "warning"
    frameworks = ("pytorch", "mindspore")
    fixable = True
    default_enabled = False
    message = "unused suppression: the rule reports nothing on this line; remove it"
    summary = ("Flags `# noqa: MSPxxx` (or `# noqa: rule-name`) comments naming a rule that ran and reported "
               "nothing on that line. Off by default: enable it with `--report-unused-noqa` or "
               "`--select unused-noqa`. A bare `# noqa` and other tools' codes are left alone.")
    why = ("A suppression outlives the code it was written for. Once the hazard is fixed, a stale "
           "`# noqa: MSP201` silently hides the next hazard of that kind on the same line, so a later change "
           "that draws random numbers on the device again passes review unnoticed.")
    fix = "Delete the stale code from the comment (or the whole comment when nothing else is left in it)."
    valid = (
        "import torch\n\ntorch.backends.cudnn.benchmark = True  # noqa: MSP103\n",
        "import torch\n\ntorch.backends.cudnn.benchmark = False  # noqa: E501\n",
        "import torch\n\ntorch.backends.cudnn.benchmark = False  # noqa\n",
    )
    invalid = (
        Invalid("import torch\n\ntorch.backends.cudnn.benchmark = False  # noqa: MSP103\n", lines=(3,)),
        Invalid("import torch\n\ntorch.backends.cudnn.deterministic = True  # noqa: cudnn-benchmark\n",
                lines=(3,)),
    )

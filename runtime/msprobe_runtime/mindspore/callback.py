"""MsprobeStep: the `mindspore.train.Callback` that runs a PrecisionDebugger around every step of Model.train.

msprobe.mindspore's name and behaviour (start at each step's beginning, stop and step at its end), which
msprobe-instrument inserts as `model.train(..., callbacks=[MsprobeStep(debugger), ...])`; with
`"task": "grad_probe"` it also monitors Model's optimizer, or those its train-step cell holds (a second
`monitor` of one changes nothing). The network given to `start` (for L0/mix) is the user's network inside
Model's training wrappers, so cell names are the same as in a hand-written loop that calls
`debugger.start(model=net)`.
"""

from __future__ import annotations

from mindspore import nn
from mindspore.train import Callback

_WRAPPERS = ("network", "_backbone", "backbone_network")  # TrainOneStepCell.network, WithLossCell._backbone


def user_network(cell):
    """The network inside Model's training wrappers (TrainOneStepCell, WithLossCell, loss-scale cells)."""
    seen = set()
    while id(cell) not in seen:
        seen.add(id(cell))
        inner = next((getattr(cell, name) for name in _WRAPPERS if isinstance(getattr(cell, name, None), nn.Cell)),
                     None)
        if inner is None or not isinstance(cell, (nn.TrainOneStepCell, nn.WithLossCell, nn.WithGradCell,
                                                  nn.WithEvalCell)):
            return cell
        cell = inner
    return cell


class MsprobeStep(Callback):
    """Start the debugger when a training step begins; stop it and count the step when it ends."""

    def __init__(self, debugger, model=None):
        super().__init__()
        self.debugger = debugger
        self.model = model  # the network to hook at L0/mix; by default Model's own, unwrapped

    def on_train_begin(self, run_context):
        """With `"task": "grad_probe"`, probe Model's optimizer (also one built inline in `Model(...)`), or the
        optimizers inside the train network when Model was given a train-step cell and no optimizer
        (`Model(TrainOneStepWrapper(...))`, as mindocr and mindyolo build it)."""
        if self.debugger.config.task != "grad_probe":
            return
        args = run_context.original_args()
        self.debugger.monitor(args.optimizer if args.optimizer is not None else args.train_network)

    def on_train_step_begin(self, run_context):
        """Start capturing this step."""
        network = self.model
        if network is None:
            network = user_network(run_context.original_args().network)
        self.debugger.start(model=network)

    def on_train_step_end(self, run_context):
        """Write this step's dump and move to the next step."""
        self.debugger.stop()
        self.debugger.step()

"""MSP201 device-rng: random numbers drawn by an accelerator's generator instead of the CPU's."""

from __future__ import annotations

import ast

from msprobe_rewriter import catalogue
from msprobe_rewriter.context import argument, constant, keyword
from msprobe_rewriter.rules.base import Invalid, Rule
from msprobe_rewriter.values import FollowsValues, LocalValues

# Where a tensor or a device lives: surely the CPU, surely an accelerator, or a device that is not
# provably the CPU (`torch.device(args.device)`, a parameter). None: unknown (an unknown tensor).
CPU, ACCELERATOR, DEVICE = "cpu", "accelerator", "device"
ON_DEVICE = (ACCELERATOR, DEVICE)
# Names that hold a device by convention, as in `x.to(rank)`.
DEVICE_NAMES = frozenset({"dev", "gpu", "gpu_id", "rank", "local_rank"})
DRAW_METHODS = catalogue.INPLACE_RANDOM_METHODS | catalogue.TENSOR_DRAW_METHODS
MODEL_CODE_NOTE = " (in an `nn.Module` method its input lives on the model's device)"


class DeviceRng(FollowsValues, Rule):
    code = "MSP201"
    name = "device-rng"
    severity = "error"
    frameworks = ("pytorch",)
    fixable = True
    message = ("draw on the CPU and move the result (`torch.randn(shape).to(device)`): GPU and NPU generators "
               "give different numbers for one seed")
    summary = ("Flags torch draws (`randn`, `rand`, `randint`, `randperm`, `normal`, `bernoulli`, `multinomial`, "
               "`poisson`, `*_like`, in-place `normal_()`/`uniform_()`/..., `nn.init.*_`) that run on an "
               "accelerator: `device=` a non-CPU device or a device not provably the CPU, or an input tensor "
               "known (in the same function) to live on a device.")
    why = ("Every device has its own generator. Seeded alike, CUDA's Philox generator and the NPU's generator "
           "produce different numbers, so diffusion noise, masks or initial weights drawn on the device differ "
           "between the GPU run and the NPU run you want to compare, and nothing downstream can match. Draws on "
           "the CPU are the same everywhere for one seed.")
    fix = ("Draw on the CPU and move the result: `torch.randn(shape).to(device)` instead of "
           "`torch.randn(shape, device=device)`, `torch.randn(x.shape, dtype=x.dtype).to(x.device)` instead of "
           "`torch.randn_like(x)`, `torch.empty(shape).normal_().to(device)` instead of filling on the device. "
           "Draws with no `device=` are on the CPU already. A variable counts as the CPU only when every "
           "assignment to it in the function is a CPU device (`\"cpu\"`, `torch.device(\"cpu\")`).")
    valid = (
        "import torch\n\n\ndef noise(shape, device):\n    return torch.randn(shape).to(device)\n",
        "import torch\n\nx = torch.rand(4, 4, device=\"cpu\")\nmask = torch.bernoulli(torch.full((4,), 0.5))\n",
        "import torch as T\n\n\ndef make(n):\n    device = T.device(\"cpu\")\n"
        "    return T.randperm(n, device=device)\n",
        "import torch\n\n\ndef f(x):\n    x = x.cpu()\n    return torch.randn_like(x) + x.normal_()\n",
        "from torch import randn as rn, randn_like\n\n\ndef sample(batch):\n"
        "    # a tensor whose device this function does not show: not flagged\n"
        "    return rn(batch.shape).to(batch.device) + randn_like(batch)\n",
        "import numpy as np\nimport random\n\nx = np.random.randn(3)\ny = random.random()\n"
        "\n\ndef randn(*size, device=None):\n    return size\n\n\nz = randn(3, device=\"cuda\")  # not torch's\n",
        "import torch\n\nw = torch.empty(3, 3)\ntorch.nn.init.kaiming_normal_(w)\nw.normal_()\nw = w.cuda()\n",
    )
    invalid = (
        Invalid("import torch\n\nnoise = torch.randn(8, 3, device=\"cuda\")\n", lines=(3,)),
        Invalid("import torch as T\n\n\ndef step(x, device):\n"
                "    t = T.randint(0, 1000, (x.shape[0],), device=device)\n"
                "    return t\n", lines=(5,)),
        Invalid("from torch import randn as rn\n\n\ndef sample(img):\n    return rn(img.shape, device=img.device)\n",
                lines=(5,)),
        Invalid("import torch\n\ndevice = \"cuda\" if torch.cuda.is_available() else \"cpu\"\n"
                "z = torch.rand(16, 100, device=device)\n", lines=(4,)),
        Invalid("import torch\n\n\ndef q_sample(x0, device):\n    x0 = x0.to(device)\n"
                "    noise = torch.randn_like(x0)\n    return x0 + noise\n", lines=(6,)),
        Invalid("import torch\n\nmask = torch.empty(4, 4, device=torch.device(\"npu:0\")).uniform_()\n"
                "x = torch.zeros(4).cuda()\nx.bernoulli_(0.5)\n", lines=(3, 5)),
        Invalid("import torch\n\n\ndef init(w):\n    w = w.to(\"cuda:0\")\n    torch.nn.init.normal_(w)\n"
                "    probs = torch.softmax(w, 0).float()\n    return torch.multinomial(probs.cuda(), 1)\n",
                lines=(6, 8)),
        Invalid("import torch\n\n\ndef evaluate(shape):\n    return torch.randn(shape, device=\"cuda\")\n",
                lines=(5,), severity="info"),
    )

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.values = LocalValues(ctx, self.placement)
        self._modules: frozenset[str] | None = None

    def visit_Call(self, node: ast.Call) -> None:
        qualified = self.ctx.call_qualname(node)
        if qualified in catalogue.TORCH_DEVICE_DRAWS:
            signature = catalogue.TORCH_DEVICE_DRAWS[qualified]
            device = keyword(node, "device")
            if device is not None:
                if self.device_of(device) != CPU:
                    self.report(node)
                return
            inputs = [argument(node, signature.positional.index(name), name) for name in signature.inputs]
            self._check_inputs(node, [i for i in inputs if i is not None])
        elif qualified in catalogue.TORCH_INIT_DRAWS:
            self._check_inputs(node, [argument(node, 0, "tensor")])
        elif qualified is None and isinstance(node.func, ast.Attribute) and node.func.attr in DRAW_METHODS:
            self._check_inputs(node, [node.func.value])

    def _check_inputs(self, node: ast.Call, inputs: list) -> None:
        """Report a draw whose input tensor lives on a device (known here, or as model code's input)."""
        found = [self.placement(i) for i in inputs if not _is_number(i)]
        if any(p in ON_DEVICE for p in found):
            self.report(node)
        elif found and CPU not in found and self._in_model_code():
            self.report(node, self.message + MODEL_CODE_NOTE, "warning")

    def _in_model_code(self) -> bool:
        """Whether we are in a method of an `nn.Module` (not one that initialises or resets it)."""
        ancestors = self.ctx.ancestors
        for i in range(len(ancestors) - 1, 0, -1):
            if isinstance(ancestors[i], (ast.FunctionDef, ast.AsyncFunctionDef)):
                owner = ancestors[i - 1]
                name = ancestors[i].name.lower()
                return (isinstance(owner, ast.ClassDef) and "init" not in name and "reset" not in name
                        and owner.name in self._module_classes())
        return False

    def _module_classes(self) -> frozenset[str]:
        """Names of the file's classes that derive (directly or through each other) from a torch module."""
        if self._modules is None:
            found: set[str] = set()
            for node in ast.walk(self.ctx.tree):
                if isinstance(node, ast.ClassDef) and any(self._is_module_base(b, found) for b in node.bases):
                    found.add(node.name)
            self._modules = frozenset(found)
        return self._modules

    def _is_module_base(self, base: ast.expr, local: set[str]) -> bool:
        qualified = self.ctx.qualname(base)
        if qualified is None:
            return isinstance(base, ast.Name) and base.id in local
        return qualified.startswith(catalogue.TORCH_MODULE_PACKAGE + ".") or qualified in catalogue.LIGHTNING_MODULES

    # --- where values live -------------------------------------------------------------------
    def placement(self, node: ast.expr | None) -> str | None:
        """Where the tensor (or device) `node` lives, as far as this function shows."""
        if isinstance(node, ast.Constant):
            return _device_string(node.value) if isinstance(node.value, str) else None
        if isinstance(node, ast.JoinedStr):
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.strip(":"):
                return _device_string(head.value)
            return None
        if isinstance(node, ast.Name):
            facts = self.values.facts(node.id, node)
            if facts and all(fact == CPU for fact in facts):
                return CPU
            return facts[-1] if facts and facts[-1] in ON_DEVICE else None
        if isinstance(node, ast.Attribute):
            if node.attr == "device" or node.attr in catalogue.DEVICE_PRESERVING_ATTRIBUTES:
                return self.placement(node.value)
            return None
        if isinstance(node, ast.Subscript):
            return self.placement(node.value)
        if isinstance(node, ast.BinOp):
            return _combine(self.placement(node.left), self.placement(node.right), both=False)
        if isinstance(node, ast.IfExp):
            return _combine(self.placement(node.body), self.placement(node.orelse), both=True)
        if isinstance(node, ast.Call):
            return self._call_placement(node)
        return None

    def device_of(self, node: ast.expr) -> str:
        """Where a device argument points: a device that is not provably the CPU counts as DEVICE."""
        if isinstance(node, ast.Constant):
            return CPU if node.value is None else _device_string(str(node.value))
        return self.placement(node) or DEVICE

    def _call_placement(self, call: ast.Call) -> str | None:
        qualified = self.ctx.call_qualname(call)
        device = keyword(call, "device")
        if qualified is not None:
            if qualified in catalogue.TORCH_DEVICE_CONSTRUCTORS:
                target = argument(call, 0, "type")
                return self.device_of(target) if target is not None else None
            if not qualified.startswith("torch."):
                return None
            if device is not None:
                return self.device_of(device)
            if qualified in catalogue.TORCH_TENSOR_FACTORIES:
                return CPU
            signature = catalogue.TORCH_DEVICE_DRAWS.get(qualified)
            if signature is not None and signature.inputs or qualified.endswith("_like"):
                return self.placement(argument(call, 0, "input"))
            return None
        if not isinstance(call.func, ast.Attribute):
            return None
        method, receiver = call.func.attr, call.func.value
        if device is not None and (method == "to" or method.startswith("new_")):
            return self.device_of(device)
        if method in catalogue.ACCELERATOR_METHODS:
            return ACCELERATOR
        if method == "cpu":
            return CPU
        if method == "to":
            return self._moved_to(call.args[0], receiver) if call.args else self.placement(receiver)
        if method in catalogue.DEVICE_PRESERVING_METHODS or method in DRAW_METHODS or method.startswith("new_"):
            return self.placement(receiver)
        return None

    def _moved_to(self, target: ast.expr, receiver: ast.expr) -> str | None:
        """Where `receiver.to(target)` lives: a device, another tensor's device, or unchanged for a dtype."""
        if isinstance(target, ast.Constant):
            return self.device_of(target)
        qualified = self.ctx.qualname(target) or (self.ctx.call_qualname(target)
                                                 if isinstance(target, ast.Call) else None)
        if qualified is not None and qualified not in catalogue.TORCH_DEVICE_CONSTRUCTORS:
            return self.placement(receiver)  # a dtype such as torch.float16 keeps the device
        found = self.placement(target)
        if found is not None:
            return found
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        return DEVICE if "device" in name.lower() or name in DEVICE_NAMES else None


def _device_string(text: str) -> str:
    """CPU for "cpu"/"meta" (and "cpu:0"), an accelerator for any other device string."""
    kind = text.strip().split(":", 1)[0].lower()
    return CPU if kind in catalogue.CPU_DEVICE_STRINGS else ACCELERATOR


def _combine(first: str | None, second: str | None, both: bool) -> str | None:
    """Placement of a value built from two others: either branch of `a if c else b` (`both`), or `a * b`."""
    if first == second:
        return first
    if first in ON_DEVICE or second in ON_DEVICE:
        return DEVICE if both or ACCELERATOR not in (first, second) else ACCELERATOR
    return None


def _is_number(node: ast.expr) -> bool:
    """A literal number, as in `torch.normal(0.0, 1.0, size)`: not a tensor."""
    return isinstance(constant(node), (int, float))

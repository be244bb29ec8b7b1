"""Device-RNG and data-pipeline rules (device-rng, data-shuffle, data-workers, random-augment): what in-rule
examples cannot express — value tracking, severities, messages, whole-file facts, the catalogue's truth."""

from __future__ import annotations

import inspect
import textwrap

import pytest
from msprobe_rewriter import catalogue
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME
from project_helpers import lint as lint_project
from project_helpers import lint_findings, write


def lint(rule_name: str, code: str):
    """Findings of one rule on a dedented snippet, as (line, severity, message) tuples."""
    rule = RULES_BY_NAME[rule_name]
    result = lint_source("snippet.py", textwrap.dedent(code).encode(), [rule])
    assert not result.errors, result.errors
    return [(f.line, f.severity, f.message) for f in result.findings if f.code == rule.code]


def lines(rule_name: str, code: str) -> list[int]:
    return [line for line, _, _ in lint(rule_name, code)]


# --- device-rng: where devices and tensors live ------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    # a device variable is the CPU only when every assignment says so
    ("import torch\ndevice = 'cpu'\nx = torch.randn(3, device=device)\n", []),
    ("import torch\ndevice = torch.device('cpu')\nx = torch.randn(3, device=device)\n", []),
    ("import torch\ndevice = 'cpu'\nif torch.cuda.is_available():\n    device = 'cuda'\n"
     "x = torch.randn(3, device=device)\n", [5]),
    ("import torch\ndevice = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
     "x = torch.rand(3, device=device)\n", [3]),
    ("import torch\nx = torch.rand(3, device=0)\ny = torch.rand(3, device=None)\n"
     "z = torch.rand(3, device=f'cuda:{r}')\n",
     [2, 4]),
    # a module-level CPU device is read by functions; a parameter of the same name hides it
    ("import torch\nDEVICE = 'cpu'\n\ndef f():\n    return torch.randn(2, device=DEVICE)\n", []),
    ("import torch\ndevice = 'cpu'\n\ndef f(device):\n    return torch.randn(2, device=device)\n", [5]),
    ("import torch\n\ndef f(device='cpu'):\n    return torch.randn(2, device=device)\n", [4]),
    # tensors: where they were put in this function
    ("import torch\n\ndef f(x, device):\n    x = x.to(device)\n    return torch.rand_like(x)\n", [5]),
    ("import torch\n\ndef f(x, device):\n    x = x.to(device)\n    x = x.cpu()\n    return torch.rand_like(x)\n", []),
    ("import torch\n\ndef f(x):\n    x = x.to(torch.float16)\n    return torch.rand_like(x)\n", []),
    ("import torch\n\ndef f(x):\n    x = x.cuda().to(torch.float16)\n    return torch.rand_like(x)\n", [5]),
    ("import torch\n\ndef f(x, rank):\n    y = x.to(rank) * 2\n    return torch.bernoulli(y)\n", [5]),
    ("import torch\n\ndef f(x):\n    a, b = x.cuda(), x.cpu()\n    return torch.randn_like(a), torch.randn_like(b)\n", [5]),
    ("import torch\nx = torch.randn(4)\nm = torch.multinomial(x.softmax(0), 2)\nx.uniform_()\n", []),
    ("import torch\n\ndef f(x):\n    return torch.randn_like(x, device='cpu')\n", []),
    ("import torch\nw = torch.zeros(3, device='cuda')\nw.data.normal_(0, 0.02)\n", [3]),
    ("import torch\nn = torch.normal(0.0, 1.0, size=(3,), device='npu')\nm = torch.normal(0.0, 1.0, size=(3,))\n", [2]),
    ("import torch\nn = torch.empty(3, device='cuda').new_empty(3).normal_()\n", [2]),
])
def test_device_rng_follows_devices_and_tensors(code, expected):
    assert lines("device-rng", code) == expected


QUANT_NOISE = """\
    import torch


    def quant_noise(module, p, block_size):
        if p <= 0:
            return module

        def hook(mod, input):
            mask = torch.zeros(mod.weight.size(0), device=mod.weight.device)
            mask.bernoulli_(p)

        module.register_forward_pre_hook(hook)
        return module
"""


@pytest.mark.parametrize(("caller", "info"), [
    ("def __init__(self, dim, q_noise=0.0):\n    self.proj = quant_noise(nn.Linear(dim, dim), q_noise, 8)\n", True),
    ("def __init__(self, dim, q_noise=0.1):\n    self.proj = quant_noise(nn.Linear(dim, dim), q_noise, 8)\n", False),
    ("def __init__(self, dim):\n    self.proj = quant_noise(nn.Linear(dim, dim), 0.0, 8)\n"
     "    self.out = quant_noise(nn.Linear(dim, dim), 0.2, 8)\n", False),
])
def test_device_rng_past_an_early_return_no_call_gets_past(tmp_path, caller, info):
    """A draw that a function reaches only past `if p <= 0: return`, with every call in the project (here from
    another file) giving a rate of 0, is info (BEATs' quant_noise); one call with another rate keeps it."""
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n", "modules.py": QUANT_NOISE,
                     "backbone.py": "from torch import nn\n\nfrom modules import quant_noise\n\n\n"
                                    "class Attention(nn.Module):\n" + textwrap.indent(caller, "    ")})
    found = lint_findings(tmp_path / "modules.py", "device-rng")
    assert [(f.line, f.severity == "info") for f in found] == [(10, info)]
    assert ("only when `p > 0`" in found[0].message) is info


@pytest.mark.parametrize(("made", "fires"), [
    ("probs = torch.full(ids.shape, p)\n        return self.mask(ids, probability_matrix=probs)", False),
    ("probs = torch.full(ids.shape, p, device=ids.device)\n        return self.mask(ids, probability_matrix=probs)",
     True),
    ("return self.mask(ids, probability_matrix=torch.full(ids.shape, p).cuda())", True),
    ("return self.mask(ids)", True),  # the default, None: nothing says where it lives
    # also handed on (lerobot's `original_denoise_step_partial=mock_denoiser`): called with anything
    ("probs = torch.full(ids.shape, p)\n        self.fn = self.mask\n"
     "        return self.mask(ids, probability_matrix=probs)", True),
])
def test_device_rng_reads_a_parameter_from_what_every_call_passes(made, fires):
    """A tensor parameter lives where every call of the function in the file makes what it passes (ALBEF's mask)."""
    code = ("import torch\nfrom torch import nn\n\n\nclass MLM(nn.Module):\n    def forward(self, ids, p):\n"
            f"        {made}\n\n    def mask(self, ids, probability_matrix=None):\n"
            "        return ids * torch.bernoulli(probability_matrix)\n")
    drawn = code[:code.index("torch.bernoulli")].count("\n") + 1
    assert lines("device-rng", code) == ([drawn] if fires else [])


def test_device_rng_in_model_code_is_a_warning():
    code = """\
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.empty(4))
                self.w.data.normal_()

            def reset_parameters(self):
                nn.init.normal_(self.w)

            def forward(self, x):
                keep = torch.bernoulli(torch.full_like(x, 0.9))
                noise = x.new_empty(x.shape).normal_()
                cpu = torch.randn(3)
                return x * keep + noise + torch.randn_like(cpu)


        class Noisy(Block):
            def forward(self, x):
                return torch.randn_like(x)


        class Data(torch.utils.data.Dataset):
            def __getitem__(self, i):
                return torch.randn_like(self.items[i])
        """
    found = lint("device-rng", code)
    assert [(line, severity) for line, severity, _ in found] == [(15, "warning"), (16, "warning"), (23, "warning")]
    assert "nn.Module" in found[0][2]


@pytest.mark.parametrize(("draw", "example"), [
    ("torch.empty_like(x).exponential_().log()",  # Gumbel noise: the new tensor made on the CPU
     "torch.empty_like(x, device='cpu').exponential_().to(x.device)"),
    ("torch.empty_like(x.cuda()).exponential_()", "torch.empty(shape).exponential_().to(device)"),
    ("w.uniform_(-0.1, 0.1)", "w.copy_(torch.empty(w.shape, dtype=w.dtype).uniform_(-0.1, 0.1))"),
    ("x.bernoulli()", "x.cpu().bernoulli().to(x.device)"),
    ("nn.init.kaiming_uniform_(w, a=math.sqrt(5))",
     "w.data.copy_(nn.init.kaiming_uniform_(torch.empty(w.shape), a=math.sqrt(5)))"),
    ("nn.init.trunc_normal_(tensor=self.pos_embed.data, std=0.02, mean=0.0, a=-2.0, b=2.0)",
     "self.pos_embed.data.copy_(nn.init.trunc_normal_(torch.empty(self.pos_embed.data.shape), ...))"),
    ("torch.rand(16, 100, device=device)", "torch.rand(16, 100).to(device)"),
    ("torch.randint(0, 10, (4,), device=x.device, dtype=torch.long)",
     "torch.randint(0, 10, (4,), dtype=torch.long).to(x.device)"),
    ("torch.empty(4, device=device).normal_(0, 1)", "torch.empty(4).normal_(0, 1).to(device)"),
    # denoising-diffusion-pytorch's RePaint: a `*_like` draw given a device follows its input without it
    ("torch.randn_like(x, device=x.device)", "torch.randn_like(x, device='cpu').to(x.device)"),
    ("torch.randint_like(x, 10)", "torch.randint_like(x.cpu(), 10).to(x.device)"),
    ("torch.multinomial(probs[0].cuda(), 1)", "torch.multinomial(probs[0].cuda().cpu(), 1).to(probs[0].cuda().device)"),
    # a tensor shown by no name: its expression when short (stable-diffusion's `torch.randn_like(c.float())` in a
    # `forward(self, x, c)`: not `x`), else a name the file does not use
    ("torch.normal(0, x * 0.1)", "torch.normal(0, (x * 0.1).cpu()).to((x * 0.1).device)"),
    ("torch.randn_like(w.float())", "torch.randn(w.float().shape, dtype=w.float().dtype).to(w.float().device)"),
    ("torch.rand_like(self.project_hidden_states(x, w) * 2)", "torch.rand(t.shape, dtype=t.dtype).to(t.device)"),
])
def test_device_rng_message_names_the_same_draw_on_the_cpu(draw, example):
    """Following the advice keeps the distribution: the example is the flagged draw, done on the CPU."""
    code = (f"import math\nimport torch\nfrom torch import nn\n\n\ndef f(self, x, w, device):\n"
            f"    x, w = x.cuda(), w.cuda()\n    self = self.cuda()\n    return {draw}\n")
    ((line, _, message),) = lint("device-rng", code)
    assert line == 9 and f"(`{example}`)" in message


def test_device_rng_fill_of_a_new_like_tensor_names_the_whole_chain():
    """MindSpeed-LLM's router: `torch.rand_like(s).uniform_()` draws twice on the device; the fill's message shows
    the chain made on the CPU (the draw that counts), the inner draw's its own."""
    code = "import torch\n\n\ndef f(s):\n    s = s.cuda()\n    return torch.rand_like(s).uniform_() > 0.75\n"
    messages = [message for _, _, message in lint("device-rng", code)]
    assert any("(`torch.rand_like(s, device='cpu').uniform_().to(s.device)`)" in m for m in messages)
    assert len(messages) == 2


# --- device-rng: weights initialised by a model's method once it is on the device ---------------------
INIT_CLASS = """\
import torch
from torch import nn


class Net(nn.Module):
    def init_weights(self):
        for layer in self.layers:
            layer.init_weights()

    def reset_parameters(self):
        nn.init.zeros_(self.bias)

    def init_hidden(self, n):
        return torch.zeros(n, 8)

    def _reset_params(self):
        self.apply(weights_init)


def weights_init(m):
    m.weight.data.uniform_(-0.1, 0.1)
"""


@pytest.mark.parametrize(("call", "fires"), [
    ("init_weights()", True),  # a child's initialiser, told by its name
    ("reset_parameters()", False),  # the class's own: zeros only
    ("init_hidden(4)", False),
    ("_reset_params()", True),  # a function of the module it applies draws
])
def test_device_rng_reads_the_class_of_a_model_initialised_on_the_device(call, fires):
    code = INIT_CLASS + f"\n\ndef main(device):\n    net = Net().to(device)\n    net.{call}\n"
    assert lines("device-rng", code) == ([26] if fires else [])


@pytest.mark.parametrize(("code", "expected"), [
    # a class that cannot be read: conventional initialisers only
    ("import torch\n\n\ndef f(model):\n    model.cuda()\n    model.init_weights()\n    model.init_hidden()\n", [6]),
    # litgpt's `fabric` given as a parameter; an HF model loaded on the CPU, initialised before the move
    ("import lightning as L\n\n\ndef main(fabric, model):\n    model = fabric.setup(model)\n"
     "    model.reset_parameters()\n", [6]),
    ("from transformers import AutoModel\n\nmodel = AutoModel.from_pretrained('x')\nmodel.init_weights()\n"
     "model = model.cuda()\n", []),
])
def test_device_rng_initialisers_of_models_that_cannot_be_read(code, expected):
    assert lines("device-rng", code) == expected


def test_device_rng_reads_a_project_model_and_its_base(tmp_path):
    """The class that built the model and the base of a layer are read in the project module that defines them."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "layers.py").write_text("from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n\n\n"
                                        "class Plain(nn.Module):\n    def init_weights(self):\n"
                                        "        nn.init.ones_(self.w)\n\n\nclass Drawn(Plain):\n"
                                        "    def init_weights(self):\n        self.w.data.normal_()\n")
    path = tmp_path / "train.py"
    path.write_text("import torch\nfrom layers import Base, Drawn, Plain\n\n\nclass Noisy(Base):\n"
                    "    def forward(self, x):\n        return x + torch.randn_like(x)\n\n\n"
                    "def main(device):\n    plain, drawn = Plain().cuda(), Drawn().cuda()\n    plain.init_weights()\n"
                    "    drawn.init_weights()\n")
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["device-rng"]])
    assert [(f.line, f.severity) for f in result.findings] == [(7, "warning"), (13, "error")]


@pytest.mark.parametrize(("base", "module"), [
    ("megatron.core.transformer.module.MegatronModule", True), ("transformers.PreTrainedModel", True),
    ("mmengine.model.BaseModule", True), ("diffusers.ModelMixin", True), ("transformers.LlamaForCausalLM", True),
    ("peft.tuners.lora.layer.LoraLayer", True), ("timm.layers.Mlp", True),
    ("transformers.PretrainedConfig", False), ("transformers.ModelOutput", False), ("diffusers.ConfigMixin", False),
    ("transformers.DataCollatorForSeq2Seq", False), ("megatron.training.tokenizer.MegatronTokenizer", False),
    ("mmcv.transforms.BaseTransform", False), ("transformers.GenerationMixin", False), ("numpy.Model", False),
])
def test_library_module_classes_are_told_by_their_names(base, module):
    assert catalogue.is_library_module(base) is module


# --- device-rng: tensors whose device is not shown, in a file that runs on an accelerator ------------
DRAW_ON_UNKNOWN = "\n\ndef loss(x0):\n    return torch.randn_like(x0)\n"


@pytest.mark.parametrize(("evidence", "fires"), [
    ("model.cuda()", True),
    ("batch = batch.to(device)", True),
    ("batch = batch.to(args.device, non_blocking=True)", True),
    ("x = x.to(other.device)", True),
    ("t = torch.arange(4, device=x.device)", True),
    ("dev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')", True),
    ("torch.distributed.init_process_group('nccl')", True),
    ("model = torch.nn.parallel.DistributedDataParallel(model)", True),
    ("import lightning as L", True),
    ("from accelerate import Accelerator", True),
    ("import torch_npu", True),
    ("x = x.to(torch.float16)", False),
    ("t = torch.arange(4, device='cpu')", False),
    ("dev = torch.device('cpu')\nmodel.to(dev)", False),
    ("print(torch.cuda.is_available())", False),
    ("", False),
])
def test_device_rng_unknown_tensor_fires_where_the_file_runs_on_an_accelerator(evidence, fires):
    code = "import torch\n" + evidence + DRAW_ON_UNKNOWN
    found = lint("device-rng", code)
    assert [(line, severity) for line, severity, _ in found] == ([(code.count("\n"), "warning")] if fires else [])
    if fires:
        assert "may live there" in found[0][2]


@pytest.mark.parametrize("draw", [
    "torch.randn_like(x)", "torch.rand_like(x)", "torch.randint_like(x, 10)", "torch.bernoulli(x)",
    "torch.multinomial(x, 1)", "x.normal_()", "x.uniform_(-1, 1)", "x.new_empty(x.shape).bernoulli_(0.9)",
    "torch.empty_like(x).exponential_(1)", "torch.poisson(x)",
])
def test_device_rng_every_draw_on_an_unknown_tensor(draw):
    code = f"import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n\n\ndef f(x):\n    return {draw}\n"
    assert [(line, severity) for line, severity, _ in lint("device-rng", code)] == [(6, "warning")]


def test_device_rng_new_tensors_follow_their_source():
    code = """\
        import torch


        def f(x):
            y = x.cuda()
            a = y.new_empty(y.shape).bernoulli_(0.5)
            b = x.cpu().new_empty(3).normal_()
            return a, b
        """
    assert lines("device-rng", code) == [6]


@pytest.mark.parametrize("code", [
    # datasets (any method of a torch data class), `__getitem__`/`__iter__` of any class
    "class Data(torch.utils.data.IterableDataset):\n    def _sample(self, x):\n        return torch.randn_like(x)\n",
    "class Pairs:\n    def __iter__(self):\n        yield torch.rand_like(self.x)\n",
    "class Noisy:\n    def __getitem__(self, i):\n        return self.x[i].normal_()\n",
    # collate functions and transforms (not transformers)
    "def collate_fn(batch):\n    return torch.stack(batch).bernoulli_(0.5)\n",
    "class GaussianNoiseTransform:\n    def __call__(self, img):\n        return img + torch.randn_like(img)\n",
    "def augment(img):\n    return img * torch.rand_like(img)\n",
    # weight initialisation, before the model moves
    "def _init_weights(m):\n    m.weight.data.normal_(0.0, 0.02)\n",
    "def reset_parameters(self):\n    torch.nn.init.normal_(self.w)\n",
    "def trunc_normal_(tensor, std):\n    return tensor.uniform_(-std, std)\n",
    "def initialize(w):\n    w.normal_()\n",
    "class Net(torch.nn.Module):\n    def reinit(self):\n        self.w.data.normal_()\n",
    # explicitly the CPU
    "def build(ws):\n    with torch.device('cpu'):\n        return [w.normal_() for w in ws]\n",
    "def f(x, device):\n    x = x.to(device)\n    x = x.cpu()\n    return torch.rand_like(x)\n",
])
def test_device_rng_cpu_code_in_an_accelerator_file_is_silent(code):
    assert lint("device-rng", "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n\n\n" + code) == []


def test_device_rng_transformer_blocks_are_not_transforms():
    code = """\
        import torch


        class TransformerBlock:
            def forward(self, x):
                return torch.randn_like(x)


        def initial_noise(x):
            return torch.randn_like(x)


        x = torch.zeros(3).cuda()
        """
    assert lines("device-rng", code) == [6, 10]


def test_device_rng_unknown_tensor_in_evaluation_code_is_info():
    code = "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n\n\ndef validate(x):\n    return torch.randn_like(x)\n"
    assert [(line, severity) for line, severity, _ in lint("device-rng", code)] == [(6, "info")]


def test_device_rng_ignores_names_not_imported_from_torch():
    code = """\
        import mindtorch as torch
        from mylib import randn

        a = torch.randn(3, device='npu')
        b = randn(3, device='cuda')
        c = torch.empty(3, device='npu').normal_()
        """
    assert lint("device-rng", code) == []


def findings(rule_name: str, code: str, path: str = "snippet.py"):
    rule = RULES_BY_NAME[rule_name]
    result = lint_source(path, textwrap.dedent(code).encode(), [rule])
    return [f for f in result.findings if f.code == rule.code]


def test_device_rng_module_functions_are_not_tensor_draws():
    """audiocraft: `from ..utils import utils` binds a module: `utils.multinomial(...)` is its function (rewriting it
    to `utils.cpu()...` crashed at run time); a local name of the same spelling is a tensor again."""
    code = """\
        import torch
        from torch import nn
        from ..utils import utils
        from pkg import helpers as h


        class LM(nn.Module):
            def forward(self, probs, utils2):
                a = utils.multinomial(probs, num_samples=1) + h.bernoulli(probs)
                h = probs.cuda()
                return a, h.bernoulli()
        """
    assert lines("device-rng", code) == [11]


def test_device_rng_draw_read_on_the_host_is_not_moved_back():
    code = """\
        import torch


        def pick(weights, n):
            weights = weights.cuda()
            a = torch.multinomial(weights[0], 1).item()
            b = torch.randint(0, n, (1,), device=weights.device).tolist()
            c = weights.multinomial(1).cpu()
            return a, b, c, torch.multinomial(weights, 1)
        """
    messages = [message for _, _, message in lint("device-rng", code)]
    assert "(`torch.multinomial(weights[0].cpu(), 1)`)" in messages[0]
    assert "(`torch.randint(0, n, (1,))`)" in messages[1] and "(`weights.cpu().multinomial(1)`)" in messages[2]
    assert all("read right away" in m and ".to(" not in m for m in messages[:3])
    assert "(`torch.multinomial(weights.cpu(), 1).to(weights.device)`)" in messages[3]


def test_device_rng_fabric_strategy_decides_where_init_module_builds():
    template = """\
        import lightning as L
        from lightning.fabric.strategies import FSDPStrategy, DDPStrategy
        from model import GPT

        fabric = L.Fabric(strategy={})
        with fabric.init_module():
            model = GPT(config)
        """
    found = {strategy: [(line, severity) for line, severity, _ in lint("device-rng", template.format(strategy))]
             for strategy in ('"fsdp"', "FSDPStrategy()", "DDPStrategy()", '"auto"', 'FSDPStrategy() if n else "ddp"')}
    assert found == {'"fsdp"': [], "FSDPStrategy()": [], "DDPStrategy()": [(6, "error")], '"auto"': [(6, "error")],
                     'FSDPStrategy() if n else "ddp"': [(6, "warning")]}


def test_device_rng_fabric_device_block():
    code = """\
        import lightning as L
        from model import LLaMA

        fabric = L.Fabric(accelerator="cuda")
        with fabric.device:
            model = LLaMA(config)
        with fabric.device:
            steps = 3
        """
    assert [(line, severity) for line, severity, _ in lint("device-rng", code)] == [(5, "error")]


def test_device_rng_module_initialised_again_on_the_device():
    """gpt-neox: the build's draw does not survive; the initialiser's does, and is reported, left to the user. A
    bias drawn by the build, or an initialiser that may not run, leaves the build's draw."""
    code = """\
        import torch
        from torch import nn


        def build(n, init_method, device, flag):
            a = nn.Linear(n, n, bias=False, device=device)
            init_method(a.weight)
            b = nn.Linear(n, n, device=device)
            nn.init.normal_(b.weight)
            c = nn.Linear(n, n, device=device)
            c.reset_parameters()
            d = nn.Linear(n, n, bias=False, device=device)
            if flag:
                init_method(d.weight)
            return a, b, c, d
        """
    found = findings("device-rng", code)
    assert [(f.line, f.fixable) for f in found] == [(7, False), (8, True), (9, True), (11, False), (12, True)]
    assert found[0].message.startswith("`init_method(a.weight)` initialises again the weights of a `Linear` built on")


def test_device_rng_module_initialised_again_by_its_class():
    """OLMo: `reset_parameters()` initialises the whole layer again; Megatron's GDN re-draws only the conv's weight
    (and only with `conv_init`): its bias keeps the build's draw."""
    code = """\
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self, config):
                self.ff = nn.Linear(8, 8, device=config.init_device)
                self.conv1d = nn.Conv1d(8, 8, 3, device=torch.cuda.current_device())

            def reset_parameters(self):
                init_normal(self.ff, std=0.02)
                if self.conv_init is not None:
                    nn.init.uniform_(self.conv1d.weight, -self.conv_init, self.conv_init)
        """
    assert lines("device-rng", code) == [8]


def test_device_rng_module_on_a_device_that_may_be_meta_is_left_to_the_user():
    code = """\
        from torch import nn


        class Head(nn.Module):
            def __init__(self, cfg, device):
                self.a = nn.Linear(8, 8, device=cfg.init_device)
                self.b = nn.Linear(8, 8, device=device)
                self.c = nn.Linear(8, 8, device=cfg.device)
                if device.type != "meta":
                    pass
        """
    found = findings("device-rng", code)
    assert [(f.line, f.fixable) for f in found] == [(6, False), (7, False), (8, True)]
    assert "(`cfg.init_device` may be the meta device, where nothing is drawn" in found[0].message


def test_device_rng_draw_with_a_generator_made_elsewhere_is_left_to_the_user():
    """A CPU draw refuses a device generator: one handed in (a parameter, an attribute) must be made on the CPU where
    it is made; one made here (also only when seeded), or a parameter no call sets, goes with the rewrite."""
    code = """\
        import torch


        def latents(self, shape, device, generator, seed, g=None):
            made = None if seed is None else torch.Generator(device=device).manual_seed(seed)
            a = torch.randn(shape, generator=generator, device=device)
            b = torch.randn(shape, generator=self.generator, device=device)
            c = torch.randn(shape, generator=made, device=device)
            d = torch.randn(shape, generator=g, device=device)
            e = torch.randn(shape, generator=torch.Generator("cuda"), device=device)
            cpu = torch.manual_seed(seed) if device == "mps" else torch.Generator(device).manual_seed(seed)
            return a, b, c, d, e, torch.randn(shape, generator=cpu, device=device)
        """
    found = findings("device-rng", code)
    assert [(f.line, f.fixable) for f in found] == [(5, False), (6, False), (7, False), (8, True), (9, True),
                                                    (10, False), (10, False), (11, False), (12, True)]
    assert "(with `generator=generator`, which may be made on the device: a CPU draw needs a CPU generator" in found[1].message
    assert "with `generator=" not in found[3].message + found[4].message


def test_device_rng_device_every_call_passes_the_cpu_by_default_is_info():
    """lerobot's `rand_device`: required here, and each call in the file passes "cpu" or a parameter defaulting to
    it; one call passing another device, or none at all, keeps the error."""
    template = textwrap.dedent("""\
        import torch


        def draw(n, rand_device):
            return torch.randn(n, device=rand_device)


        def infer(n, rand_device="cpu"):
            return draw(n, rand_device) + draw(n, rand_device="cpu")
        """) + "{}"
    found = {extra: [(line, severity) for line, severity, _ in lint("device-rng", template.format(extra))]
             for extra in ("", "\n\nx = draw(3, 'cuda')\n", "\n\nx = infer(3, 'cuda')\n")}
    assert found == {"": [(5, "info")], "\n\nx = draw(3, 'cuda')\n": [(5, "error")],
                     "\n\nx = infer(3, 'cuda')\n": [(5, "info")]}
    assert "(the calls in the project pass `rand_device` the CPU, or a parameter defaulting to it" in lint(
        "device-rng", template.format(""))[0][2]
    assert lines("device-rng", "import torch\n\n\ndef draw(n, dev):\n    return torch.randn(n, device=dev)\n") == [5]


def test_device_rng_generator_parameter_that_no_call_sets_is_none():
    """Open-Sora: `sample(self, generator=None)` that no call in the file sets draws on the device; one that a call
    sets, or one of a method called through its object (`forward`), may be given a generator."""
    template = """\
        from diffusers.utils.torch_utils import randn_tensor


        class Posterior:
            def {}(self, generator=None):
                return randn_tensor(self.mean.shape, generator=generator, device=self.mean.device)


        def encode(posterior, g):
            return posterior.sample(generator=None), posterior.sample()
        """
    found = lint("device-rng", template.format("sample"))
    assert [(line, severity) for line, severity, _ in found] == [(6, "error")]
    assert found[0][2].endswith("(`generator` defaults to None, and no call in this file passes another)")
    assert lint("device-rng", template.format("forward")) == []
    assert lint("device-rng", template.format("sample").replace("posterior.sample()", "posterior.sample(g)")) == []


def test_device_rng_generator_parameter_of_a_wrapper_named_as_torch_draw():
    """audiocraft's `multinomial(input, ..., generator=None)` wraps `torch.multinomial`: that call is not one of it."""
    code = """\
        import torch


        def multinomial(input, num_samples, *, generator=None):
            return torch.multinomial(input.cuda(), num_samples, generator=generator)


        def sample(probs):
            return multinomial(probs, 1)
        """
    assert [f.fixable for f in findings("device-rng", code)] == [True]


@pytest.mark.parametrize(("draw", "constant"), [
    ("w.normal_(mean=1, std=0)", True), ("w.normal_(1.0, 0.0)", True), ("w.log_normal_(0, 0)", True),
    ("nn.init.normal_(w, 1.0, 0)", True), ("nn.init.uniform_(w, a=-1, b=-1)", True), ("w.uniform_(a, a)", True),
    ("torch.normal(w, 0.0)", True), ("w.cauchy_(0, sigma=0)", True),
    ("w.normal_(mean=1, std=0.1)", False), ("w.uniform_(a, b)", False), ("w.uniform_(0, 1)", False),
    ("nn.init.normal_(w, 0.0)", False), ("w.normal_(std=s)", False),
])
def test_device_rng_draw_of_a_constant_is_not_reported(draw, constant):
    """modded-nanogpt's `w.normal_(mean=1, std=0)`: a spread of 0, or equal bounds, give a constant on any device."""
    code = f"import torch\nfrom torch import nn\n\n\ndef f(w, a, b, s):\n    w = w.cuda()\n    return {draw}\n"
    assert lines("device-rng", code) == ([] if constant else [7])


def test_device_rng_dummy_function_that_yields_or_builds_data_keeps_its_severity():
    code = """\
        import torch


        def dummy_data(n):
            return torch.randn(n, device="cuda")


        def dummy_step(n):
            return torch.randn(n, device="cuda")


        def warmup(n):
            def inputs():
                yield torch.randn(n, device="cuda")
            return inputs
        """
    assert [(line, severity) for line, severity, _ in lint("device-rng", code)] == [
        (5, "error"), (9, "info"), (14, "error")]


def test_device_rng_catalogue_matches_torch_signatures():
    torch = pytest.importorskip("torch")
    for qualified, signature in catalogue.TORCH_DEVICE_DRAWS.items():
        doc = getattr(torch, qualified.split(".", 1)[1]).__doc__
        assert set(signature.inputs) <= set(signature.positional)
        for name in signature.positional:
            assert name.lstrip("*") in doc, (qualified, name)
        if "device" in signature.keyword_only:  # `torch.normal` takes it without documenting it
            assert "device" in doc or qualified == "torch.normal", qualified
    assert torch.normal(0.0, 1.0, size=(2,), device="cpu", dtype=torch.float64).dtype == torch.float64


# --- data-shuffle --------------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    # `**kwargs` built from dict literals, updates and `a if c else b` are looked into; hidden ones are not
    ("from torch.utils.data import DataLoader\nkw = {'batch_size': 4}\ncuda = {'shuffle': True}\nkw.update(cuda)\n"
     "loader = DataLoader(ds, **kw)\n", [5]),
    ("from torch.utils.data import DataLoader\nkw = dict(batch_size=4)\nkw['shuffle'] = True\n"
     "loader = DataLoader(ds, **kw)\n", [4]),
    ("from torch.utils.data import DataLoader\nkw = {'shuffle': True} if cuda else {}\nloader = DataLoader(ds, **kw)\n",
     [3]),
    ("from torch.utils.data import DataLoader\n\ndef f(ds, **kw):\n    return DataLoader(ds, **kw)\n", []),
    ("from torch.utils.data import DataLoader\nloader = DataLoader(ds, 4, True)\n", [2]),  # positional shuffle
    ("from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=None)\n", []),
    ("from torch.utils.data import DataLoader\nloader = DataLoader(ds, shuffle=sampler is None, sampler=sampler)\n",
     [2]),
    ("from torch.utils.data import DistributedSampler\ns = DistributedSampler(ds, None, None, False)\n", []),
    ("import mindspore.dataset as ds\nd = ds.MindDataset(files, shuffle=ds.Shuffle.FILES)\n", [2]),
    ("import mindspore.dataset as ds\nd = ds.MnistDataset(path, shuffle=None)\n", [2]),  # None = default = shuffle
    ("import mindspore.dataset as ds\nd = ds.MnistDataset(path, 'train', None, 4, False)\n", []),  # positional
    ("import mindspore.dataset as ds\nd = ds.MnistDataset(path, **cfg)\n", []),
    ("import mindspore.dataset as ds\nd = ds.PKSampler(2)\ne = ds.PKSampler(2, shuffle=True)\n", [3]),
])
def test_data_shuffle_arguments(code, expected):
    assert lines("data-shuffle", code) == expected


@pytest.mark.parametrize(("source", "expected"), [
    ("[(1,), (2,)]", [9]),  # a list is random-access: shuffled by default
    ("rows", []),  # a generator function
    ("rows()", []),
    ("(r for r in range(3))", []),
    ("lambda: rows()", []),
    ("Stream()", []),  # iterable, not indexable
    ("stream", []),  # a name holding a Stream
])
def test_generator_dataset_over_iterables_keeps_order(source, expected):
    code = f"""\
        from mindspore.dataset import GeneratorDataset

        class Stream:
            def __iter__(self):
                return iter(range(3))

        stream = Stream()
        def rows(): yield (1,)
        data = GeneratorDataset({source}, ["x"])
        """
    assert lines("data-shuffle", code) == expected


@pytest.mark.parametrize(("default", "expected"), [("None", [6]), ("SequentialSampler()", [])])
def test_mindspore_dataset_with_a_sampler_parameter(default, expected):
    """mindediting's factories pass `sampler=sampler` on: with the default None the dataset shuffles."""
    code = ("import mindspore.dataset as ds\nfrom mindspore.dataset import SequentialSampler\n\n\n"
            f"def create(source, shuffle=None, sampler={default}):\n"
            "    return ds.GeneratorDataset(source=source, column_names=['x'], sampler=sampler, shuffle=shuffle)\n")
    assert lines("data-shuffle", code) == expected


def test_generator_dataset_over_a_project_iterator_keeps_order(tmp_path):
    """mindrlhf's `GeneratorDataset(IteratorStore(store), ...)`: a class of another project file that iterates
    but cannot be indexed; one that can be indexed is shuffled."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "stores.py").write_text(textwrap.dedent("""\
        class IteratorStore:
            def __iter__(self):
                return self

            def __next__(self):
                raise StopIteration

            def __len__(self):
                return 0


        class Table:
            def __getitem__(self, index):
                return (index,)

            def __len__(self):
                return 3
        """))
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from mindspore.dataset import GeneratorDataset

        from stores import IteratorStore, Table

        pipeline = IteratorStore()
        streamed = GeneratorDataset(pipeline, column_names=["x"])
        indexed = GeneratorDataset(Table(), column_names=["x"])
        """))
    path = tmp_path / "train.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [f.line for f in result.findings] == [7]


SAMPLERS_MODULE = """\
    import numpy as np
    import torch


    class RASampler(torch.utils.data.Sampler):  # deit: a generator of its own, seeded from the epoch
        def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True):
            self.dataset, self.shuffle, self.epoch = dataset, shuffle, 0

        def __iter__(self):
            g = torch.Generator()
            g.manual_seed(self.epoch)
            return iter(torch.randperm(len(self.dataset), generator=g).tolist())


    class SubsetRandomSampler(torch.utils.data.Sampler):  # Swin: torch's global generator
        def __init__(self, indices):
            self.indices = indices

        def __iter__(self):
            return (self.indices[i] for i in torch.randperm(len(self.indices)))


    class ShardSampler:  # NumPy's global generator, unless told not to shuffle
        def __init__(self, size, rank, shuffle=True):
            self.size, self.rank, self.shuffle = size, rank, shuffle

        def __iter__(self):
            return iter(np.random.permutation(self.size) if self.shuffle else range(self.size))
    """


def test_data_shuffle_follows_project_samplers(tmp_path):
    """A sampler class imported from another file of the project is judged by its `__iter__`."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "samplers.py").write_text(textwrap.dedent(SAMPLERS_MODULE))
    (tmp_path / "data" / "build.py").write_text(textwrap.dedent("""\
        from torch.utils.data import DataLoader

        from .samplers import RASampler, ShardSampler, SubsetRandomSampler


        def build(ds, rank, world):
            a = RASampler(ds, num_replicas=world, rank=rank, shuffle=True)
            b = SubsetRandomSampler(list(range(rank, len(ds), world)))
            c = ShardSampler(len(ds), rank)
            d = ShardSampler(len(ds), rank, False)
            return [DataLoader(ds, sampler=s) for s in (a, b, c, d)]
        """))
    path = tmp_path / "data" / "build.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [(f.line, f.fixable) for f in result.findings] == [(8, False), (9, False)]
    assert "`torch.randperm` in its `__iter__`" in result.findings[0].message
    assert "`sampler=list(indices)`" in result.findings[0].message  # not SequentialSampler: a subset


LOADERS_MODULE = """\
from torch.utils import data


class MultiEpochsDataLoader(data.DataLoader):
    pass


class InfiniteDataLoader(MultiEpochsDataLoader):
    pass


class Prefetcher:  # not a loader: the bases are what counts, not the name
    pass
"""


@pytest.mark.parametrize("importing", [
    "from utils.loaders import InfiniteDataLoader as Loader",
    "from utils import InfiniteDataLoader as Loader",  # re-exported by the package
])
def test_loader_classes_imported_from_the_project_take_their_base(tmp_path, importing):
    """timm's and yolov5's loaders derive from DataLoader in a file of their own (through a package's
    `__init__`, and through a class of that file); their shuffle and workers are the DataLoader's."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("from .loaders import InfiniteDataLoader, Prefetcher\n")
    (tmp_path / "utils" / "loaders.py").write_text(LOADERS_MODULE)
    path = tmp_path / "train.py"
    path.write_text(f"import torch\n{importing}\nfrom utils import Prefetcher\n\n"
                    "loader = Loader(ds, batch_size=8, shuffle=True, num_workers=4)\n"
                    "other = Prefetcher(ds, shuffle=True, num_workers=4)\n")
    rules = [RULES_BY_NAME["data-shuffle"], RULES_BY_NAME["data-workers"]]
    result = lint_source(str(path), path.read_bytes(), rules)
    assert [(f.name, f.line) for f in result.findings] == [("data-shuffle", 5), ("data-workers", 5)]


LENGTH_GROUPED_MODULE = """\
import torch
from torch.utils.data import Sampler


def length_grouped_indices(lengths, generator=None):
    return torch.randperm(len(lengths), generator=generator).tolist()


def modality_grouped_indices(lengths, generator=None):
    mixed = length_grouped_indices(lengths, generator=None)  # LLaVA: the global generator, whatever it was given
    return mixed + length_grouped_indices(lengths, generator=generator)


class LengthGroupedSampler(Sampler):  # LLaVA's: no `shuffle`, the order drawn in functions of this module
    def __init__(self, lengths, generator=None, group_by_modality=False):
        self.lengths = lengths
        self.group_by_modality = group_by_modality
        self.generator = generator

    def __iter__(self):
        if self.group_by_modality:
            return iter(modality_grouped_indices(self.lengths, generator=self.generator))
        return iter(length_grouped_indices(self.lengths, generator=self.generator))
"""


def test_project_sampler_drawing_in_functions_its_iter_calls(tmp_path):
    """LLaVA's LengthGroupedSampler: built without a generator, its order comes from torch's global one; grouped by
    modality, from the global one whatever it is given (only then: the `if` is read with the built arguments)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "samplers.py").write_text(LENGTH_GROUPED_MODULE)
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent("""\
        import torch

        from samplers import LengthGroupedSampler


        def build(lengths, seed):
            plain = LengthGroupedSampler(lengths)
            seeded = LengthGroupedSampler(lengths, generator=torch.Generator().manual_seed(seed))
            mixed = LengthGroupedSampler(lengths, torch.Generator().manual_seed(seed), group_by_modality=True)
            return plain, seeded, mixed
        """))
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [(f.line, f.severity, f.fixable) for f in result.findings] == [(7, "warning", False), (9, "warning", False)]
    assert "(`torch.randperm` in `length_grouped_indices`, which its `__iter__` calls)" in result.findings[0].message


@pytest.mark.parametrize(("code", "expected"), [
    # a parameter defaulting to False that no call of the file turns on, an option defaulting to False
    ("def build(ds, shuffle=False):\n    return DataLoader(ds, shuffle=shuffle)\n\n\nbuild(range(4))\n",
     [(5, "info", "shuffle")]),
    ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--no-shuffle', dest='shuffle', "
     "action='store_false')\nargs = p.parse_args()\nloader = DataLoader(range(4), shuffle=args.shuffle)\n",
     [(8, "warning", None)]),
    ("def build(ds, shuffle=False):\n    return DataLoader(ds, shuffle=shuffle)\n\n\nbuild(range(4), shuffle=True)\n",
     [(5, "warning", None)]),
    ("def build(ds, is_train):\n    return DataLoader(ds, shuffle=is_train)\n\n\nbuild(range(4), False)\n",
     [(5, "info", "is_train")]),
    ("def build(ds, split='val'):\n    return DataLoader(ds, shuffle=split == 'train')\n\n\nbuild(range(4))\n",
     [(5, "info", "split == 'train'")]),
    ("def build(ds, split):\n    return DataLoader(ds, shuffle=split == 'train')\n\n\n"
     "build(range(4), 'train')\nbuild(range(4), 'val')\n", [(5, "warning", None)]),
    ("def build(ds, shuffle=False):\n    shuffle = shuffle or len(ds) > 2\n    return DataLoader(ds, shuffle=shuffle)\n",
     [(6, "warning", None)]),  # assigned in the function: not the caller's value any more
    # MindSpore shuffles with `shuffle=None`
    ("import mindspore.dataset as ds\n\n\ndef build(path, shuffle=None):\n"
     "    return ds.Cifar10Dataset(path, shuffle=shuffle)\n", [(8, "warning", None)]),
])
def test_shuffle_switch_off_by_default_is_information(code, expected):
    found = lint("data-shuffle", "from torch.utils.data import DataLoader\n\n\n" + code)
    assert [(line, severity) for line, severity, _ in found] == [(line, severity) for line, severity, _ in expected]
    for (_, _, message), (_, _, switch) in zip(found, expected, strict=True):
        note = f"(only when `{switch}` is true: false with the default arguments)"
        assert message.endswith(note) if switch else "default arguments" not in message


@pytest.mark.parametrize(("importer", "severity"), [
    (None, "info"), ("from data import build\n\nbuild(range(4), True)\n", "warning"),
    # nanotron's `get_sampler(..., shuffle=False)`: every caller elsewhere leaves it false
    ("import data\n\ndata.build(range(4))\ndata.build(range(4), shuffle=False)\n", "info"),
    ("from data import build\n\nbuild(range(4), **options)\n", "warning"),
])
def test_shuffle_parameter_of_a_module_other_files_import_reads_their_calls(tmp_path, importer, severity):
    """detr's `coco.build(shuffle=False)` is called by its train.py with `shuffle=True`: the default says nothing
    about the training run, and no finding would point at train.py's call; nanotron's callers leave it false."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / "data.py"
    path.write_text("from torch.utils.data import DataLoader\n\n\ndef build(ds, shuffle=False):\n"
                    "    return DataLoader(ds, shuffle=shuffle)\n")
    if importer:
        (tmp_path / "train.py").write_text(importer)
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [(f.line, f.severity) for f in result.findings] == [(5, severity)]


def test_dataset_shuffle_method_needs_a_mindspore_dataset():
    code = """\
        import random
        import numpy as np
        import mindspore.dataset as ds
        from datasets import load_dataset

        data = ds.TextFileDataset("a.txt", shuffle=False).map(tok, input_columns="text").batch(8)
        data = data.shuffle(64)
        hf = load_dataset("imdb")["train"].shuffle(seed=42)
        random.shuffle(items)
        np.random.shuffle(items)
        rng = np.random.default_rng(0)
        rng.shuffle(items)
        self.shuffle(3)


        def pipeline(dataset):
            return dataset.shuffle(buffer_size=100)
        """
    assert lines("data-shuffle", code) == [7, 17]
    # without MindSpore in the file, `.shuffle(n)` on an unknown object is someone else's
    torch_only = "import torch\n\ndef pipeline(dataset):\n    return dataset.shuffle(100)\n"
    assert lines("data-shuffle", torch_only) == []


def test_seeded_generator_makes_a_torch_shuffle_info():
    code = """\
        import torch
        from torch.utils.data import DataLoader, RandomSampler

        g = torch.Generator().manual_seed(0)
        a = DataLoader(ds, shuffle=True, generator=g)
        b = RandomSampler(ds, generator=g)
        c = DataLoader(ds, shuffle=True, **kw)
        """
    found = lint("data-shuffle", code)
    assert [(line, severity) for line, severity, _ in found] == [(5, "info"), (6, "info"), (7, "warning")]
    assert "generator" in found[0][2]


HF = "import torch\nfrom datasets import load_dataset, Dataset\n"


@pytest.mark.parametrize(("code", "expected"), [
    # the receiver must be known to be a Hugging Face dataset: every assignment of a name, splits, methods
    (HF + "if a:\n    d = load_dataset('x')\nelse:\n    d = load_dataset('y')\nd['train'].shuffle()\n", [7]),
    (HF + "d = load_dataset('x') if a else make()\nd.shuffle()\n", []),
    (HF + "def f(d):\n    return d.shuffle()\n", []),
    (HF + "d = Dataset.from_list(rows).map(f).select(range(9))\nd.shuffle(buffer_size=9)\n", [4]),
    (HF + "d = load_dataset('x', streaming=True)\nd.shuffle(buffer_size=1000)\n", [4]),
    (HF + "import datasets\nd = datasets.load_from_disk('p')\nd.train_test_split(test_size=0.1)\n", [5]),
    # a seed, a generator (by keyword, position, DatasetDict's `seeds=`), `**kwargs` or no shuffle: silent
    (HF + "d = load_dataset('x')\nd.shuffle(7)\nd.shuffle(generator=g)\nd.shuffle(seeds={'train': 1})\n"
     "d.shuffle(**kw)\nd.shuffle(seed=None)\n", [8]),
    (HF + "d = load_dataset('x')['train']\nd.train_test_split(0.1, None, True, None, 3)\n"
     "d.train_test_split(0.1, shuffle=False)\nd.train_test_split(0.1, shuffle=None)\n"
     "d.train_test_split(0.1, shuffle=flag)\n", [7]),
])
def test_hf_dataset_shuffles(code, expected):
    assert lines("data-shuffle", code) == expected


def test_hf_dataset_messages_and_fixes():
    found = lint("data-shuffle", HF + "d = load_dataset('x')\nt = d['train'].train_test_split(0.1)\n"
                                      "t['train'].shuffle()\n")
    assert ["train_test_split" in message and "NumPy's global generator" in message for _, _, message in found] == \
        [True, False]
    assert "`seed=`" in found[1][2]


@pytest.mark.parametrize(("default", "expected"), [("None", [(7, "warning")]), ("42", [])])
def test_hf_dataset_seed_read_with_the_default_arguments(default, expected):
    """diffusers' `shuffle(seed=args.seed)`: with `--seed` defaulting to None, datasets takes the seed from NumPy's
    global state; a parameter no call of the file passes is not known."""
    code = (HF + f"import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument('--seed', default={default})\n"
            "args = parser.parse_args()\nd = load_dataset('x')['train'].shuffle(seed=args.seed)\n\n\n"
            "def f(d, seed):\n    return load_dataset(d).shuffle(seed=seed)\n")
    found = lint("data-shuffle", code)
    assert [(line, severity) for line, severity, _ in found] == expected
    assert all("with `seed=args.seed`, None with the default arguments" in message for _, _, message in found)


@pytest.mark.parametrize(("call", "severity", "says"), [
    ("DistributedSampler(ds)", "warning", "depends on the world size"),
    ("DistributedSampler(ds, shuffle=True, seed=args.seed)", "warning", "depends on the world size"),
    ("DistributedSampler(ds, num_replicas=world, rank=rank)", "warning", "depends on the world size"),  # MAE
    ("DistributedSampler(ds, 1, 0, True, seed=0)", "info", "repeats in every run"),
    ("DistributedSampler(ds, num_replicas=1, rank=0)", "info", "repeats in every run"),
])
def test_distributed_sampler_with_its_replicas_given_repeats_its_order(call, severity, says):
    """torchtune's `StatefulDistributedSampler(ds, num_replicas=1, rank=0, shuffle=shuffle, seed=0)`: the world size
    no longer decides the order, `seed` + epoch do."""
    found = lint("data-shuffle", f"from torch.utils.data import DistributedSampler\ns = {call}\n")
    assert [(line, sev) for line, sev, _ in found] == [(2, severity)]
    assert says in found[0][2]


def test_shuffle_messages_show_what_the_code_passes():
    found = lint("data-shuffle", "from torch.utils.data import DataLoader, DistributedSampler\n"
                                 "a = DataLoader(ds, shuffle=True)\nb = DataLoader(ds, 8, train)\n"
                                 "c = DistributedSampler(ds, shuffle=is_train)\n")
    assert [message.split("`")[1] for _, _, message in found] == [
        "DataLoader(shuffle=True)", "DataLoader(shuffle=train)", "DistributedSampler(shuffle=is_train)"]


def test_shuffle_parameter_of_a_method_of_a_module_other_files_import_is_not_known(tmp_path):
    """transformers' legacy examples: `get_dataloader(self, ..., shuffle=False)`, called with `shuffle=True` by the
    base class of another module, through `self`."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    path = tmp_path / "data.py"
    path.write_text("from torch.utils.data import DataLoader\n\n\nclass Module:\n"
                    "    def get_dataloader(self, ds, shuffle=False):\n        return DataLoader(ds, shuffle=shuffle)\n")
    (tmp_path / "train.py").write_text("import data\n")
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [(f.line, f.severity) for f in result.findings] == [(6, "warning")]


def test_shuffle_message_names_the_subclass_called(tmp_path):
    """Open-Sora's `VariableVideoBatchSampler(DistributedSampler)`, imported from its module; yolov5's
    `InfiniteDataLoader`, a class of the file."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "sampler.py").write_text("from torch.utils.data import DistributedSampler\n\n\n"
                                         "class VariableVideoBatchSampler(DistributedSampler):\n    pass\n")
    path = tmp_path / "loader.py"
    path.write_text("from torch.utils.data import DataLoader\n\nfrom sampler import VariableVideoBatchSampler\n\n\n"
                    "class InfiniteDataLoader(DataLoader):\n    pass\n\n\n"
                    "def build(ds, shuffle):\n    sampler = VariableVideoBatchSampler(ds, shuffle=shuffle)\n"
                    "    return InfiniteDataLoader(ds, shuffle=True), DataLoader(ds, shuffle=True)\n")
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]])
    assert [f.message.split("`")[1] for f in result.findings] == [
        "VariableVideoBatchSampler(shuffle=shuffle)", "InfiniteDataLoader(shuffle=True)", "DataLoader(shuffle=True)"]


def test_streaming_dataset_of_a_project_module_of_that_name_is_not_the_library(tmp_path):
    """mosaicml-streaming's `StreamingDataset` draws nothing on the workers; a project's `streaming.py` may."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    code = ("from streaming import StreamingDataset\nfrom torch.utils.data import DataLoader\n\n"
            "loader = DataLoader(StreamingDataset(remote='s3://data'), num_workers=4)\n")
    path = tmp_path / "train.py"
    path.write_text(code)
    rule = [RULES_BY_NAME["data-workers"]]
    assert lint_source(str(path), path.read_bytes(), rule).findings == []
    (tmp_path / "streaming.py").write_text("import random\n\n\nclass StreamingDataset:\n"
                                           "    def __getitem__(self, index):\n        return random.random()\n")
    assert [f.line for f in lint_source(str(path), path.read_bytes(), rule).findings] == [4]


def test_hf_dataset_from_a_project_package_of_that_name_is_not_one(tmp_path):
    """detr, guided-diffusion: a `datasets/` package of the project shadows the library."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "__init__.py").write_text("def load_dataset(name):\n    return Buffer(name)\n")
    path = tmp_path / "train.py"
    path.write_text(HF + "d = load_dataset('x')\nd.shuffle()\n")
    assert lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["data-shuffle"]]).findings == []


@pytest.mark.parametrize(("code", "expected"), [
    # the stage: `rng=` third, `seed=` fourth (`_shuffle` takes the data first); a buffer under 2 keeps the order
    ("import random\nimport webdataset as wds\nfrom webdataset import filters\nfrom webdataset.filters import "
     "_shuffle\na = wds.shuffle(100, 10, random.Random(0))\nb = filters.shuffle(100)\nc = _shuffle(src, 100, 10, rng)\n"
     "d = _shuffle(src, 100)\ne = wds.shuffle(bufsize=1)\nf = wds.shuffle()\n", [6, 8, 10]),
    # the method: on WebDataset, WebLoader and their chains; not on a DataPipeline (which has none) or a parameter
    ("import random\nimport webdataset as wds\nd = wds.WebDataset(urls).decode('pil')\nd = d.shuffle(100)\n"
     "l = wds.WebLoader(d, batch_size=None).unbatched().shuffle(1000, initial=10).batched(8)\n"
     "p = wds.DataPipeline(stages).shuffle(100)\n\ndef f(x):\n    return x.shuffle(100)\n", [4, 5]),
    # in a MindSpore file, a webdataset pipeline is told apart from a MindSpore dataset by how it was made
    ("import mindspore.dataset as ds\nimport webdataset as wds\nw = wds.WebDataset(urls)\nw = w.shuffle(1, rng=r)\n"
     "m = ds.MnistDataset('m', shuffle=False).shuffle(64)\n", [5]),
])
def test_webdataset_shuffles(code, expected):
    assert lines("data-shuffle", code) == expected


def test_webdataset_message_says_the_clock_seeds_it():
    (_, _, message), = lint("data-shuffle", "import random\nimport webdataset as wds\nd = wds.shuffle(100)\n")
    assert "time.time()" in message and "rng=random.Random(seed)" in message


@pytest.mark.parametrize(("code", "expected"), [
    # every assignment to the attribute in the class binds a sampler class: followed (a class attribute too)
    ("class P:\n    sampler = RandomSampler\n\n    def get(self, ds):\n        return self.sampler(ds)\n", [9]),
    ("class P:\n    def __init__(self, a):\n        self.s = SequentialSampler if a else RandomSampler\n\n"
     "    def get(me, ds):\n        return me.s(ds)\n", [10]),
    ("class P:\n    def __init__(self, a):\n        self.s = DistributedSampler\n\n"
     "    def get(self, ds):\n        return self.s(ds, shuffle=False)\n", []),
    # one assignment elsewhere in the class that is not a class (or not known) stops it
    ("class P:\n    def __init__(self):\n        self.s = RandomSampler\n\n    def reset(self, s):\n"
     "        self.s, self.n = s, 0\n\n    def get(self, ds):\n        return self.s(ds)\n", []),
    ("class P:\n    def __init__(self):\n        self.s = RandomSampler\n\n    def reset(self, s):\n"
     "        self.s = s\n\n    def get(self, ds):\n        return self.s(ds)\n", []),
    # another object's attribute, or one read outside the class
    ("class P:\n    def __init__(self):\n        self.s = RandomSampler\n\n    def get(self, other, ds):\n"
     "        return other.s(ds)\n\n\nP().s(ds)\n", []),
])
def test_sampler_classes_held_in_attributes(code, expected):
    header = ("from torch.utils.data import RandomSampler, SequentialSampler\n"
              "from torch.utils.data.distributed import DistributedSampler\n\n\n")
    assert lines("data-shuffle", header + code) == expected


def test_subset_random_sampler_advice_keeps_the_subset():
    found = lint_source("snippet.py", (
        b"import mindspore.dataset as ds\nfrom torch.utils.data import DataLoader, SubsetRandomSampler\n\n"
        b"loader = DataLoader(data, sampler=SubsetRandomSampler(ids))\nsampler = SubsetRandomSampler(ids)\n"
        b"subset = ds.SubsetRandomSampler(ids)\n"), [RULES_BY_NAME["data-shuffle"]]).findings
    assert [f.fixable for f in found] == [True, False, True]  # msprobe-instrument rewrites only a `sampler=`
    assert all("SequentialSampler" not in f.message for f in found)
    assert "`sampler=list(indices)`" in found[0].message and "`SubsetSampler`" in found[2].message


def test_hf_and_webdataset_catalogue_match_the_libraries():
    datasets = pytest.importorskip("datasets")
    for method, (seeds, switch) in catalogue.UNSEEDED_SPLITS.items():
        if "." in method:
            continue
        params = list(inspect.signature(getattr(datasets.Dataset, method)).parameters)[1:]
        for position, name in (*seeds, *([switch] if switch else [])):
            assert name in params or name in inspect.signature(datasets.DatasetDict.shuffle).parameters, name
            assert position is None or params.index(name) == position, name
    assert all(hasattr(datasets.Dataset, m) or hasattr(datasets.IterableDataset, m)
               for m in catalogue.HF_DATASET_METHODS)
    webdataset = pytest.importorskip("webdataset")
    params = list(inspect.signature(webdataset.filters._shuffle).parameters)
    assert params.index("rng") == params.index("bufsize") + 2
    assert "seed" not in params or params.index("seed") == params.index("bufsize") + 3  # 0.2.86 takes none
    assert all(hasattr(webdataset.WebDataset, m) for m in catalogue.WEBDATASET_METHODS)


@pytest.mark.parametrize("code", [
    "from torch.utils.data import DataLoader\nval_loader = DataLoader(val_set, shuffle=False, num_workers=4)\n",
    "from torch.utils.data import DataLoader\nval_loader = DataLoader(val_set, shuffle=True, num_workers=4)\n",
    "from torch.utils.data import DataLoader\nloader = DataLoader(dataset_val, shuffle=True, num_workers=4)\n",
    "import mindspore.dataset as ds\ndata = ds.MnistDataset(path, usage='test', num_parallel_workers=4)\n",
    "from torch.utils.data import DataLoader\n\ndef validate(ds):\n"
    "    return DataLoader(ds, shuffle=True, num_workers=4)\n",
    "from torch.utils.data import DataLoader\n"
    "loader = DataLoader(MNIST('.', train=False), shuffle=True, num_workers=2)\n",
    "import mindspore.dataset as ds\neval_ds = ds.Cifar10Dataset(path, num_parallel_workers=8)\n"
    "eval_ds = eval_ds.map(operations=ops, input_columns='image')\n",
])
def test_evaluation_loaders_drop_to_info(code):
    found = lint("data-shuffle", code) + lint("data-workers", code)
    assert found and {severity for _, severity, _ in found} == {"info"}
    assert all(message.endswith("(evaluation-only code)") for _, _, message in found)


def test_mindspore_dataset_catalogue_matches_mindspore():
    dataset = pytest.importorskip("mindspore.dataset")
    for name in dir(dataset):
        if not name.endswith("Dataset"):
            continue
        params = inspect.signature(getattr(dataset, name).__init__).parameters
        if "shuffle" not in params:
            assert not catalogue.shuffles_by_default(f"mindspore.dataset.{name}"), name
        elif params["shuffle"].default is not False:
            assert catalogue.shuffles_by_default(f"mindspore.dataset.{name}"), name
    assert set(catalogue.MINDSPORE_DATASET_METHODS) <= set(dir(dataset.Dataset))
    shuffle = inspect.signature(dataset.DistributedSampler.__init__).parameters["shuffle"]
    assert list(inspect.signature(dataset.DistributedSampler.__init__).parameters).index("shuffle") - 1 == \
        catalogue.MINDSPORE_SHUFFLE_SAMPLERS["mindspore.dataset.DistributedSampler"][0]
    assert shuffle.default is True


def test_dataloader_positions_match_torch():
    data = pytest.importorskip("torch.utils.data")
    params = list(inspect.signature(data.DataLoader.__init__).parameters)[1:]
    for name, position in catalogue.DATALOADER_POSITIONS.items():
        assert params.index(name) == position, name
    sampler = list(inspect.signature(data.DistributedSampler.__init__).parameters)[1:]
    assert sampler.index("shuffle") == catalogue.DISTRIBUTED_SAMPLER_SHUFFLE_POSITION


# --- data-workers --------------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    ("from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=1)\n", [2]),
    ("from torch.utils.data import DataLoader\nl = DataLoader(ds, 8, False, None, None, 4)\n", [2]),
    ("from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=4, generator=g)\n", []),
    ("from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=4, worker_init_fn=seed_worker)\n", []),
    ("from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=4, worker_init_fn=None)\n", [2]),
    ("from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=4, **kw)\n", []),
    ("import mindspore.dataset as ds\nd = ds.ImageFolderDataset(p, num_parallel_workers=1)\n", []),
    ("import mindspore.dataset as ds\nd = ds.ImageFolderDataset(p, num_parallel_workers=n)\n", []),  # reads in order
    ("import mindspore.dataset as ds\nd = ds.GeneratorDataset(source, [\"x\"], num_parallel_workers=n)\n", [2]),
    ("import mindspore.dataset as ds\nd = ds.ImageFolderDataset(p)\nd = d.batch(8, per_batch_map=mix, "
     "num_parallel_workers=4)\nd = d.batch(8, num_parallel_workers=4)\n", [3]),
    # mindformers: a batch function of the file that only pads (through `partial`, or a name that may be None)
    # draws nothing; one that draws, itself or through a function it calls, is reported; so is a `.map` of one
    ("import mindspore.dataset as ds\nfrom functools import partial\nimport numpy as np\n\n\ndef pad(*cols, n):\n"
     "    return tuple(np.pad(c, (0, n)) for c in cols)\n\n\ndef jitter(*cols):\n    return shift(cols)\n\n\n"
     "def shift(cols):\n    return [c + np.random.rand() for c in cols]\n\n\nfn = None\nif dynamic:\n"
     "    fn = partial(pad, n=8)\nd = ds.ImageFolderDataset(p)\nd = d.batch(8, per_batch_map=fn, num_parallel_workers=4)\n"
     "d = d.batch(8, per_batch_map=jitter, num_parallel_workers=4)\n"
     "d = d.map(operations=pad, input_columns='x', num_parallel_workers=4)\n"
     "d = d.map(operations=shift, input_columns='x', num_parallel_workers=4)\n", [23, 25]),
])
def test_data_workers_arguments(code, expected):
    assert lines("data-workers", code) == expected


def test_data_workers_reads_a_project_dataset_class_through_its_modules(tmp_path):
    """mindediting: `GeneratorDataset(DIV2K(...))`, whose `__getitem__` (in a base class of another module) only loads
    images through a method of a third; a class handed a transform, or whose helper function draws, may draw."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "base.py").write_text(textwrap.dedent("""\
        import cv2


        class DatasetBase:
            def __next__(self):
                return self.__getitem__(0)

            def _load_image(self, path):
                return cv2.imread(path)
        """))
    (tmp_path / "pairs.py").write_text(textwrap.dedent("""\
        import random

        from base import DatasetBase


        def crop(image):
            return image[random.randint(0, 4):]


        class Pairs(DatasetBase):
            def __getitem__(self, index):
                return self._load_image(self.files[index])


        class Cropped(Pairs):
            def __getitem__(self, index):
                return crop(self._load_image(self.files[index]))


        class Transformed(Pairs):
            def __getitem__(self, index):
                return self.transform(self._load_image(self.files[index]))
        """))
    code = textwrap.dedent("""\
        import mindspore.dataset as ds

        import pairs
        from pairs import Cropped, Pairs, Transformed


        class Div2K(Pairs):
            pass


        class Jittered(Pairs):
            def __getitem__(self, index):
                return pairs.crop(self._load_image(self.files[index]))


        def create(files, workers):
            source = Div2K(files)
            plain = ds.GeneratorDataset(source, ["x"], shuffle=False, num_parallel_workers=workers)
            cropped = ds.GeneratorDataset(Cropped(files), ["x"], shuffle=False, num_parallel_workers=workers)
            jittered = ds.GeneratorDataset(Jittered(files), ["x"], shuffle=False, num_parallel_workers=workers)
            return plain, cropped, jittered, ds.GeneratorDataset(Transformed(), ["x"], num_parallel_workers=8)
        """)
    path = tmp_path / "train.py"
    path.write_text(code)
    result = lint_source(str(path), code.encode(), [RULES_BY_NAME["data-workers"]])
    assert [f.line for f in result.findings] == [19, 20, 21]


@pytest.mark.parametrize(("opened", "expected"), [("open(self.path)", []), ("open(random.choice(self.paths))", [22])])
def test_data_workers_follows_the_dataset_own_methods_however_deep(opened, expected):
    """stylegan3's `Dataset.__getitem__` -> subclass `_load_raw_image` -> `_open_file` -> `_get_zipfile`: the
    instance's own methods count no depth (each is read once), so a chain that only reads files draws nothing and a
    draw at its end is still seen; project functions keep the depth limit."""
    code = f"""\
import random

from torch.utils.data import DataLoader


class Base:
    def __getitem__(self, index):
        return self._load(index)


class Folder(Base):
    def _load(self, index):
        return self._read(index)

    def _read(self, index):
        return self._open()

    def _open(self):
        return {opened}


loader = DataLoader(Folder(), num_workers=4)
"""
    assert lines("data-workers", code) == expected


@pytest.mark.parametrize(("transform", "expected"), [
    ("T.Compose([T.Resize(224), T.ToTensor()])", []), ("T.RandomCrop(224)", [15]), ("make_transform()", [15])])
def test_data_workers_dataset_calling_a_module_transform(transform, expected):
    """sd-scripts' captioning datasets call a module-level `IMAGE_TRANSFORM` in `__getitem__`: followed only when it is
    known to draw nothing."""
    code = f"""\
        import torchvision.transforms as T
        from torch.utils.data import DataLoader, Dataset

        IMAGE_TRANSFORM = {transform}


        class Images(Dataset):
            def __getitem__(self, index):
                return IMAGE_TRANSFORM(self.images[index])


        def build(images, workers):
            dataset = Images()
            dataset.images = images
            return DataLoader(dataset, num_workers=workers)
        """
    assert lines("data-workers", code) == expected


def test_data_workers_dataset_reassigned_before_the_loader():
    """OLMo: `dataset = build(...)`, then `dataset = Ordered(dataset, ...)`: the loader reads the last; one assigned
    in a branch leaves the earlier value possible."""
    code = """\
        import torch
        from torch.utils.data import DataLoader


        class Ordered(torch.utils.data.IterableDataset):
            def __init__(self, data):
                self.data = data

            def __iter__(self):
                g = torch.Generator()
                g.manual_seed(7)
                return iter(torch.randperm(len(self.data), generator=g).tolist())


        def build(data, workers, wrap):
            dataset = data
            dataset = Ordered(dataset)
            first = DataLoader(dataset, num_workers=workers)
            other = data
            if wrap:
                other = Ordered(other)
            return first, DataLoader(other, num_workers=workers), (lambda: DataLoader(other, num_workers=2))
        """
    assert lines("data-workers", code) == [22, 22]


def test_mindspore_map_workers():
    code = """\
        import mindspore as ms
        import mindspore.dataset as ds
        from mindspore.dataset import vision, transforms

        data = ds.Cifar10Dataset(path, shuffle=False, num_parallel_workers=1)
        decode = vision.Decode()
        data = data.map(operations=decode, input_columns="image")
        data = data.map(operations=transforms.Compose([vision.Resize(32), vision.HWC2CHW()]), input_columns="image")
        aug = [vision.Resize(32)]
        aug.append(vision.RandomHorizontalFlip())
        data = data.map(operations=aug, input_columns="image")
        data = data.map(operations=transforms.Compose([vision.RandomCrop(32)]), input_columns="image")
        data = data.map(operations=tokenize, input_columns="text", num_parallel_workers=1)
        frame = frame.map(str.upper)
        """
    assert lines("data-workers", code) == [11, 12]


def test_map_operations_from_either_branch_count():
    code = """\
        import mindspore.dataset as ds
        from mindspore.dataset import vision

        def create(path, training):
            data = ds.ImageFolderDataset(path, shuffle=False)
            if training:
                trans = [vision.RandomCrop(32), vision.HWC2CHW()]
            else:
                trans = [vision.CenterCrop(32), vision.HWC2CHW()]
            return data.map(operations=trans, input_columns="image")
        """
    assert lines("data-workers", code) == [10]


def test_one_configured_worker_silences_default_maps_only():
    code = """\
        import mindspore.dataset as ds

        def build(data, fn, n):
            data = data.map(operations=fn, input_columns="x")
            return data.map(operations=fn, input_columns="x", num_parallel_workers=n)

        ds.config.set_num_parallel_workers(1)
        """
    assert lines("data-workers", code) == [5]


def test_data_workers_message_does_not_tell_users_to_drop_workers():
    found = lint("data-workers", "from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=8)\n")
    message = found[0][2]
    assert "generator=torch.Generator().manual_seed(seed)" in message and "debugging" in message
    assert "num_workers=0" not in message


def test_data_workers_message_is_what_the_worker_loop_does():
    """torch's `_worker_loop` seeds `random`, torch and numpy from the base seed, itself drawn from the loader's
    `generator`: a seeded generator is enough, no `worker_init_fn` is asked for."""
    worker = pytest.importorskip("torch.utils.data._utils.worker")
    loop = inspect.getsource(worker._worker_loop)
    assert "random.seed(seed)" in loop and "torch.manual_seed(seed)" in loop and "np.random.seed(np_seed)" in loop
    loader = inspect.getsource(pytest.importorskip("torch.utils.data.dataloader")._BaseDataLoaderIter.__init__)
    assert ".random_(generator=loader.generator)" in loader
    message = lint("data-workers", "from torch.utils.data import DataLoader\nl = DataLoader(ds, num_workers=8)\n")[0][2]
    assert "seeds torch, `random` and numpy" in message and "worker_init_fn" not in message


@pytest.mark.parametrize(("code", "expected"), [
    # a name counts as a `worker_init_fn` (or a generator) only when no assignment before the call sets it to None
    ("init_fn = None\nif seeded:\n    init_fn = seed_worker\nl = DataLoader(ds, num_workers=4, worker_init_fn=init_fn)\n",
     [4]),
    ("init_fn = seed_worker\nl = DataLoader(ds, num_workers=4, worker_init_fn=init_fn)\n", []),
    ("fn = seed_worker if seeded else None\nl = DataLoader(ds, num_workers=4, worker_init_fn=fn)\n", [2]),
    ("g = None\nl = DataLoader(ds, num_workers=4, generator=g)\n", [2]),
    ("def f(ds, init_fn):\n    return DataLoader(ds, num_workers=4, worker_init_fn=init_fn)\n", []),  # a parameter
    ("init_fn = None\n\ndef f(ds, init_fn=seed_worker):\n    return DataLoader(ds, num_workers=4, worker_init_fn=init_fn)\n",
     []),  # the module's `init_fn` is not the one the function reads
])
def test_data_workers_seed_that_may_be_none(code, expected):
    assert lines("data-workers", "from torch.utils.data import DataLoader\n" + code) == [line + 1 for line in expected]


@pytest.mark.parametrize(("code", "expected"), [
    # a `worker_init_fn` that names nothing seed- or generator-like seeds nothing (Megatron's closes file descriptors)
    ("def init(_):\n    os.close(3)\n\nl = DataLoader(ds, num_workers=4, worker_init_fn=init)\n", [4]),
    ("def init(_):\n    helper()\n\ndef helper():\n    random.seed(0)\n\n"
     "l = DataLoader(ds, num_workers=4, worker_init_fn=init)\n", []),  # seeds through a function of the file
    ("def init(_):\n    info = get_worker_info()\n    np.random.seed(info.seed % 2**32)\n\n"
     "l = DataLoader(ds, num_workers=4, worker_init_fn=init)\n", []),
    ("def init(_):\n    get_worker_info().dataset.rng = np.random.default_rng()\n\n"
     "l = DataLoader(ds, num_workers=4, worker_init_fn=init)\n", []),  # a generator of its own
    ("l = DataLoader(ds, num_workers=4, worker_init_fn=imported_init)\n", []),  # not known: trusted
    ("l = DataLoader(ds, num_workers=4, worker_init_fn=lambda _: None)\n", []),  # not read
    ("def make(d):\n    return None\n\nl = DataLoader(ds, num_workers=4, worker_init_fn=make(ds))\n", [4]),
    ("def make(d):\n    return seed_worker\n\nl = DataLoader(ds, num_workers=4, worker_init_fn=make(ds))\n", []),
])
def test_data_workers_init_fn_that_seeds_nothing(code, expected):
    assert lines("data-workers", "from torch.utils.data import DataLoader\n" + code) == [line + 1 for line in expected]


def test_data_workers_init_fn_of_a_project_module(tmp_path):
    """The `worker_init_fn` is read from the project module it is imported from; the message names it."""
    (tmp_path / "workers.py").write_text("import os\n\n\ndef close_fds(_):\n    os.close(3)\n\n\n"
                                         "def no_init(dataset):\n    return None\n")
    code = ("from torch.utils.data import DataLoader\n\nimport workers\nfrom workers import close_fds\n\n"
            "a = DataLoader(ds, num_workers=4, worker_init_fn=close_fds)\n"
            "b = DataLoader(ds, num_workers=4, worker_init_fn=workers.no_init(ds))\n")
    (tmp_path / "train.py").write_text(code)
    result = lint_source(str(tmp_path / "train.py"), code.encode(), [RULES_BY_NAME["data-workers"]])
    assert [f.line for f in result.findings] == [6, 7]
    assert "the `worker_init_fn` given (`close_fds`) seeds no generator" in result.findings[0].message
    assert "worker_init_fn" not in result.findings[1].message


def test_data_workers_fixable_per_finding():
    """msprobe-instrument seeds every loader it reports; DeepSpeed's own loader it cannot reach."""
    code = textwrap.dedent("""\
        import deepspeed
        from torch.utils.data import DataLoader

        loader = DataLoader(ds, num_workers=4)
        engine, _, train_loader, _ = deepspeed.initialize(model=net, training_data=ds)
        """)
    result = lint_source("snippet.py", code.encode(), [RULES_BY_NAME["data-workers"]])
    assert [(f.line, f.fixable) for f in result.findings] == [(4, True), (5, False)]
    assert RULES_BY_NAME["data-workers"].fixable


# --- random-augment --------------------------------------------------------------------------------
@pytest.mark.parametrize(("code", "expected"), [
    ("import torchvision.transforms as T\nt = T.RandomHorizontalFlip(1.0)\n", []),  # always flips
    ("import torchvision.transforms as T\nt = T.RandomHorizontalFlip(p)\n", [2]),
    ("import torchvision.transforms as T\nt = T.RandomErasing(p=1.0)\n", [2]),  # still a random region
    ("import torchvision.transforms as T\nt = T.RandomApply([T.ColorJitter(0.4)], p=0.0)\n", []),  # never runs
    ("import torchvision.transforms as T\nt = T.RandomApply(transforms=[T.ColorJitter(0.4)], p=1.0)\n", [2]),
    ("from mindspore.dataset import transforms, vision\nt = transforms.RandomApply([vision.RandomCrop(8)], 0)\n", []),
    ("import torchvision.transforms as T\nt = T.ColorJitter(brightness=(1.2, 1.2))\n", []),
    ("import torchvision.transforms as T\nt = T.ColorJitter(brightness=(0.8, 1.2))\n", [2]),
    ("from mindspore.dataset import vision\nt = vision.RandomRotation(degrees=(d, d))\n", []),
    ("from mindspore.dataset import vision\nt = vision.RandomRotation((d, d))\n", [2]),  # positional: not judged
    ("from mindspore.dataset import vision\nt = vision.RandomColor()\n", [2]),  # random default range
    ("from mindspore.dataset import vision\nt = vision.RandomHorizontalFlip(prob=0)\n", []),
    ("import transforms as T  # a project's own module\nt = T.RandomHorizontalFlip(0.5)\n", []),
    ("from torchvision.transforms import v2\nt = v2.RandomIoUCrop()\nm = v2.MixUp(num_classes=10)\n", [2, 3]),
    ("from timm.data import create_loader\nv = create_loader(ds, 224, 8)\nt = create_loader(ds, 224, 8, train)\n", [3]),
])
def test_random_augment_arguments(code, expected):
    assert lines("random-augment", code) == expected


def test_random_augment_names_the_deterministic_twin():
    code = """\
        from torchvision import transforms
        from mindspore.dataset import vision
        a = transforms.RandomCrop(32, padding=4)
        b = transforms.RandomResizedCrop(224)
        c = vision.RandomCropDecodeResize(224)
        d = transforms.RandomRotation(10)
        """
    messages = [message for _, _, message in lint("random-augment", code)]
    assert "replace it with `CenterCrop`" in messages[0]
    assert "`Resize` + `CenterCrop`" in messages[1]
    assert "`Decode` + `Resize`" in messages[2]
    assert "remove it" in messages[3]


def test_torchvision_classification_preset():
    """The shape of torchvision's references/classification/presets.py."""
    code = """\
        import torch
        from torchvision.transforms import autoaugment, transforms


        class ClassificationPresetTrain:
            def __init__(self, *, crop_size, hflip_prob=0.5, auto_augment_policy=None, random_erase_prob=0.0):
                trans = [transforms.RandomResizedCrop(crop_size)]
                if hflip_prob > 0:
                    trans.append(transforms.RandomHorizontalFlip(hflip_prob))
                if auto_augment_policy == "ra":
                    trans.append(autoaugment.RandAugment())
                else:
                    aa_policy = autoaugment.AutoAugmentPolicy(auto_augment_policy)
                    trans.append(autoaugment.AutoAugment(policy=aa_policy))
                trans.extend([transforms.PILToTensor(), transforms.ConvertImageDtype(torch.float)])
                if random_erase_prob > 0:
                    trans.append(transforms.RandomErasing(p=random_erase_prob))
                self.transforms = transforms.Compose(trans)


        class ClassificationPresetEval:
            def __init__(self, *, crop_size, resize_size=256):
                self.transforms = transforms.Compose([transforms.Resize(resize_size), transforms.CenterCrop(crop_size)])
        """
    assert lines("random-augment", code) == [7, 9, 11, 14, 17]


ALBUMENTATIONS = "import torch\nimport albumentations as A\n"


@pytest.mark.parametrize(("code", "expected"), [
    ("t = A.HorizontalFlip(p=1)\n", []),  # always flips
    ("t = A.HorizontalFlip(p=hflip)\n", [3]),
    ("t = A.VerticalFlip(always_apply=True)\n", []),  # albumentations < 2: applied whatever `p`
    ("t = A.RandomCrop(64, 64, p=0)\n", []),
    ("t = A.RandomCrop(64, 64, p=1.0)\n", [3]),  # still a random region
    ("t = A.Compose([A.Resize(8, 8), A.Normalize()])\n", []),  # p=1 by default
    ("t = A.Compose([A.Resize(8, 8)], p=args.p)\n", [3]),
    ("t = A.Compose([A.Blur(), A.Resize(8, 8)], p=0.0)\n", []),  # never runs, nor its transforms
    ("t = A.OneOf([A.Blur(), A.MedianBlur()])\n", [3, 3, 3]),  # the choice, and each transform
    ("t = A.IAAFliplr()\n", [3]),  # albumentations 0.x
    ("from albumentations.augmentations.crops.transforms import RandomCrop\nt = RandomCrop(8, 8)\n", [4]),
])
def test_random_augment_albumentations_probability(code, expected):
    assert lines("random-augment", ALBUMENTATIONS + code) == expected


def test_random_augment_albumentations_messages():
    code = ALBUMENTATIONS + ("a = A.RandomCrop(height=8, width=8)\nb = A.RandomResizedCrop(height=8, width=8)\n"
                             "c = A.Compose([A.Normalize()], p=0.5)\nd = A.ShiftScaleRotate()\n")
    messages = [message for _, _, message in lint("random-augment", code)]
    assert "`RandomCrop` augments at random: replace it with `CenterCrop`" in messages[0]
    assert "replace it with `Resize`" in messages[1]
    assert "`Compose` given `p` below 1" in messages[2] and "pass `p=1.0`" in messages[2]
    assert "`ShiftScaleRotate` augments at random: remove it" in messages[3]


@pytest.mark.parametrize(("code", "expected"), [
    ("model, train, val = open_clip.create_model_and_transforms('ViT-B-32')\nfit(model, train)\n", [3]),
    ("model, train, val = open_clip.create_model_and_transforms('ViT-B-32')\nevaluate(model, val)\n", []),
    ("model, _, val = open_clip.create_model_and_transforms('ViT-B-32')\n", []),
    ("self.model, self.train_tf, self.val_tf = open_clip.create_model_and_transforms('RN50')\n", [3]),
    ("def build():\n    return open_clip.factory.create_model_and_transforms('RN50')\n", [4]),
    ("model, val = open_clip.create_model_from_pretrained('RN50')\n", []),  # validation transform only
])
def test_random_augment_open_clip_training_transform(code, expected):
    found = lint("random-augment", "import torch\nimport open_clip\n" + code)
    assert [line for line, _, _ in found] == expected
    assert all("`preprocess_val`" in message for _, _, message in found)


@pytest.mark.parametrize(("code", "expected"), [
    ("kw = dict(input_size=224, is_training=True, **cfg)\nt = create_transform(**kw)\n", [3]),
    ("t = create_transform(**dict(is_training=True, **cfg))\n", [2]),
    ("kw = dict(input_size=224, is_training=False, **cfg)\nt = create_transform(**kw)\n", []),
    # a key given before `**cfg` in a dict display may be overridden: not known
    ("kw = {'is_training': True, **cfg}\nt = create_transform(**kw)\n", []),
])
def test_random_augment_timm_is_training_beside_more_keywords(code, expected):
    assert lines("random-augment", "from timm.data import create_transform\n" + code) == expected


def test_scandir_bound_by_with_is_not_wrapped_in_sorted():
    """`with os.scandir(p) as entries:`: a sorted list is no context manager, so the fix sorts the entries read."""
    code = ("import os\nimport torch\n\n\ndef list_files(path):\n    with os.scandir(path) as entries:\n"
            "        return [e.path for e in entries]\n")
    result = lint_source("snippet.py", code.encode(), [RULES_BY_NAME["unsorted-file-list"]])
    assert [(f.line, f.fixable) for f in result.findings] == [(6, False)]
    assert "`sorted(entries, key=lambda entry: entry.name)`" in result.findings[0].message


@pytest.mark.parametrize(("body", "expected"), [
    ("    open(out, 'w').write(json.dumps(os.listdir(root)))\n", [11]),
    ("    np.save(out, np.array(glob.glob(root + '/*.wav')))\n", [11]),
    ("    with open(out, 'w') as f:\n        for name in os.listdir(root):\n            f.write('ok')\n", []),
    ("    for name in os.listdir(root):\n        sys.stdout.write(name)\n", []),
])
def test_unsorted_file_list_written_to_a_manifest(body, expected):
    """A listing written to a file (a manifest training reads later) carries its order; one only shown does not."""
    code = ("import glob\nimport json\nimport os\nimport sys\n\nimport numpy as np\nimport torch\n\n\n"
            "def manifest(root, out):\n" + body)
    result = lint_source("snippet.py", code.encode(), [RULES_BY_NAME["unsorted-file-list"]])
    assert [(f.line, f.fixable) for f in result.findings] == [(line, True) for line in expected]


@pytest.mark.parametrize(("kept", "expected"), [
    ("self.rain = search(root)", [6]),
    ("self.rain = sorted(search(root))", []),
    ("rain = search(root)\n        random.shuffle(rain)", [6]),
    ("self.count = len(search(root))", []),
])
def test_unsorted_file_list_judged_per_call_of_a_helper(kept, expected):
    """mindediting's imagenet.py: `search` walks os.listdir; one call's list is sorted, another's is kept as it comes
    (and picked from at random): the helper's listing is reported for that call."""
    code = ("import os\nimport random\n\n\ndef search(root):\n    return [os.path.join(root, name) "
            "for name in os.listdir(root)]\n\n\nclass Images:\n    def __init__(self, root):\n"
            "        self.images = sorted(search(root))\n        " + kept + "\n\n"
            "    def __getitem__(self, index):\n        return self.images[index]\n")
    result = lint_source("snippet.py", code.encode(), [RULES_BY_NAME["unsorted-file-list"]])
    assert [f.line for f in result.findings] == expected


LISTING_METHOD = ("import os\nimport random\n\nimport torch\n\n\nclass Clips(torch.utils.data.Dataset):\n"
                  "    def get_existing_audio(self):\n        return [n.split('.')[0] for n in os.listdir(self.root)]\n\n"
                  "    def __getitem__(self, index):\n        return self.items[index]\n\n")


@pytest.mark.parametrize(("body", "expected"), [
    # called only as a set, or kept under a setattr name read only as a set, or never read: no order reaches data
    ("    def keep(self):\n        self.ids = set(self.get_existing_audio())\n", []),
    ("    def keep(self, kinds):\n        for k in kinds:\n"
     "            setattr(self, f'existing_{k}', getattr(self, f'get_existing_{k}')())\n"
     "        self.ids = set.intersection(*[set(getattr(self, f'existing_{k}')) for k in kinds])\n", []),
    ("    def keep(self, kinds):\n        for k in kinds:\n"
     "            setattr(self, f'existing_{k}', getattr(self, f'get_existing_{k}')())\n", []),
    # a nested function never called runs never (LAVIS's AudioCapsDataset.__init__); a method no call in the file
    # reaches may be called from anywhere
    ("    def keep(self):\n        def listed(self):\n            return os.listdir(self.root)\n", [9]),
    # the attribute is read in order, the call kept as a list, or the method handed on: the order may reach data
    ("    def keep(self, kinds):\n        for k in kinds:\n"
     "            setattr(self, f'existing_{k}', getattr(self, f'get_existing_{k}')())\n"
     "        self.items = random.sample(getattr(self, 'existing_audio'), 10)\n", [9]),
    ("    def keep(self):\n        self.items = self.get_existing_audio()\n", [9]),
    ("    def keep(self):\n        self.items = list(map(lambda f: f(), [self.get_existing_audio]))\n", [9]),
])
def test_unsorted_file_list_returned_to_order_free_calls(body, expected):
    """A listing a method returns follows that method's calls in the file, and attributes set with `setattr`."""
    assert lines("unsorted-file-list", LISTING_METHOD + body) == expected


def test_unsorted_file_list_rebound_in_another_branch_keeps_its_uses():
    """`else: files = []` is another path, not the end of the listing's uses (minddiffusion's image_datasets.py)."""
    code = ("import os\n\nimport torch\n\n\ndef getfiles(root):\n    return [f for f in os.listdir(root)]\n\n\n"
            "def collect(root, listed):\n    if listed:\n        files = getfiles(root)\n    else:\n        files = []\n"
            "    images = []\n    for name in files:\n        images.append(name)\n    return images\n\n\n"
            "data = torch.utils.data.DataLoader(collect('d', True))\n")
    assert lines("unsorted-file-list", code) == [7]


def test_unsorted_file_list_method_named_by_an_importer(tmp_path):
    """A method an importer names may be called there in order: its listing stays flagged."""
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n",
                     "clips.py": LISTING_METHOD + "    def keep(self):\n        self.ids = set(self.get_existing_audio())\n",
                     "train.py": "from clips import Clips\nfiles = Clips().get_existing_audio()\n"})
    assert lint_project(tmp_path / "clips.py", "unsorted-file-list") == [("unsorted-file-list", 9)]


def test_random_augment_draws_under_a_project_context_manager_that_seeds(tmp_path):
    """fairseq's `with data_utils.numpy_seed(...)`, defined in another file of the project, seeds NumPy for the
    block (and the `self.` methods called there), not torch."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "data_utils.py").write_text(textwrap.dedent("""\
        import contextlib

        import numpy as np


        @contextlib.contextmanager
        def numpy_seed(seed, *more):
            state = np.random.get_state()
            np.random.seed(int(hash((seed, *more)) % 1e6))
            try:
                yield
            finally:
                np.random.set_state(state)


        @contextlib.contextmanager
        def timer():
            yield
        """))
    (tmp_path / "data" / "noising.py").write_text(textwrap.dedent("""\
        import numpy as np
        import torch
        from torch.utils.data import Dataset

        from . import data_utils


        class Noising(Dataset):
            def __getitem__(self, index):
                with data_utils.numpy_seed(self.seed, self.epoch, index):
                    item = self.roll(self.data[index])
                    item = item[np.random.randint(4):]
                    return item[torch.randperm(len(item))]

            def roll(self, item):
                return np.roll(item, np.random.randint(len(item)))


        class Timed(Dataset):
            def __getitem__(self, index):
                with data_utils.timer():
                    return self.data[index][np.random.randint(4):]
        """))
    path = tmp_path / "data" / "noising.py"
    result = lint_source(str(path), path.read_bytes(), [RULES_BY_NAME["random-augment"]])
    assert [f.line for f in result.findings] == [13, 22]


def test_random_augment_synthetic_dataset_is_named_so():
    """open_clip's SyntheticAudioDataset makes its waveform up: synthetic data, not augmentation."""
    code = ("import torch\nfrom torch.utils.data import Dataset\n\n\nclass SyntheticAudioDataset(Dataset):\n"
            "    def __getitem__(self, idx):\n        return torch.randn(1, 48000)\n")
    ((line, _, message),) = lint("random-augment", code)
    assert line == 7 and message.startswith("`__getitem__` of `SyntheticAudioDataset` draws `torch.randn` for every "
                                            "sample: the synthetic data it makes up changes every epoch")


@pytest.mark.parametrize(("seeding", "state"), [
    ("", "which this script never seeds, so the split changes on every run"),  # trl's examples/datasets scripts
    ("    set_seed(0)\n", "so anything else that draws from NumPy changes the split"),
    ("", "which this script seeds only after it (`SFTTrainer(...)`, line 9)"),  # a trainer built after the split
])
def test_hf_split_says_what_numpy_holds_in_an_entry_script(seeding, state):
    """trl's sft_tiny_aya_tool_calling.py splits before its trainer seeds; its examples/datasets scripts never
    seed: the split then changes on every run, whatever else draws from NumPy."""
    trainer = "    SFTTrainer(model='m', train_dataset=d['train']).train()\n" if "SFTTrainer" in state else ""
    code = (HF + "from transformers import set_seed\nfrom trl import SFTTrainer\n\n\nif __name__ == '__main__':\n"
            + seeding + "    d = load_dataset('x')['train'].train_test_split(0.5)\n" + trainer)
    ((_, _, message),) = lint("data-shuffle", code)
    assert state in message


def test_an_imported_sampler_with_its_own_iter_is_not_said_to_be_seeded_by_seed_and_epoch(tmp_path):
    """vits' `DistributedBucketSampler` (data_utils.py) seeds its `__iter__`'s generator with the epoch alone."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "data_utils.py").write_text(
        "import torch\n\n\nclass BucketSampler(torch.utils.data.distributed.DistributedSampler):\n"
        "    def __iter__(self):\n        g = torch.Generator()\n        g.manual_seed(self.epoch)\n"
        "        return iter(torch.randperm(len(self.dataset), generator=g).tolist())\n")
    train = tmp_path / "train.py"
    train.write_text("import torch\nfrom data_utils import BucketSampler\n\nsampler = BucketSampler(data, shuffle=True)\n")
    found = lint_source(str(train), train.read_bytes(), [RULES_BY_NAME["data-shuffle"]]).findings
    assert [(f.line, f.severity) for f in found] == [(4, "warning")]
    assert "`BucketSampler(shuffle=True)` draws a random order (its own `__iter__` decides how" in found[0].message


@pytest.mark.parametrize(("default", "expected"), [("False", "info"), ("True", "warning")])
def test_options_another_file_hands_in_are_read_at_its_defaults(tmp_path, default, expected):
    """dlrm's dlrm_s_pytorch.py calls `dp.make_criteo_data_and_loaders(args)`; dlrm_data_pytorch.py shuffles only
    under `args.mlperf_bin_shuffle` (`store_true`) and runs `args.num_workers` workers (default 0)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    data = tmp_path / "data.py"
    data.write_text("import torch\nfrom torch.utils.data import DataLoader, RandomSampler\n\n\n"
                    "def make_loaders(args, data):\n"
                    "    sampler = RandomSampler(data) if args.bin_shuffle else None\n"
                    "    return DataLoader(data, sampler=sampler, num_workers=args.num_workers)\n")
    (tmp_path / "main.py").write_text(
        "import argparse\n\nimport data as dp\n\nparser = argparse.ArgumentParser()\n"
        f"parser.add_argument('--bin-shuffle', default={default})\nparser.add_argument('--num-workers', default=0)\n"
        "args = parser.parse_args()\nloaders = dp.make_loaders(args, rows)\n")
    found = lint_source(str(data), data.read_bytes(), [RULES_BY_NAME["data-shuffle"], RULES_BY_NAME["data-workers"]])
    assert [(f.code, f.line, f.severity) for f in found.findings] == [("MSP301", 6, expected), ("MSP302", 7, "info")]


def test_a_registered_transform_drawing_through_a_project_module_in_a_debug_block_left_off_is_info(tmp_path):
    """segment-anything's dataset/transform.py: `ImageNorm.__call__` (registered with
    `@TRANSFORM_REGISTRY.registry_module()`) imports and calls utils/visualize.py's `show_mask`, which draws a
    colour, only under `if False:  # show image and mask for debug`; BoxFormMask draws for every sample."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    write(tmp_path, {
        "sam/__init__.py": "", "sam/registry.py": "TRANSFORM_REGISTRY = None\n",
        "sam/visualize.py": "import numpy as np\n\n\ndef show_mask(mask, ax):\n    return np.random.random(3)\n",
        "sam/transform.py": "import random\n\nfrom sam.registry import TRANSFORM_REGISTRY\n\n\n"
                            "@TRANSFORM_REGISTRY.registry_module()\nclass ImageNorm:\n    def __call__(self, result_dict):\n"
                            "        if False:  # show image and mask for debug\n"
                            "            import matplotlib.pyplot as plt\n"
                            "            from sam.visualize import show_mask\n"
                            "            show_mask(result_dict['masks'][0], plt.gca())\n"
                            "            plt.show()\n        return result_dict\n\n\n"
                            "@TRANSFORM_REGISTRY.registry_module()\nclass BoxFormMask:\n"
                            "    def __call__(self, result_dict):\n"
                            "        result_dict['box'] = random.randint(0, 20)\n        return result_dict\n"})
    found = lint_findings(tmp_path / "sam" / "transform.py", "random-augment")
    assert [(f.line, f.severity) for f in found] == [(12, "info"), (20, "warning")]

"""Each transform: its documented examples, the numerics of the device-RNG rewrite, and the edge cases."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from msprobe_rewriter.instrument import Options, instrument_text, undo_source_text
from msprobe_rewriter.instrument.docs import example_options, written
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.instrument.transforms import ALL_TRANSFORMS, SelectionError, select
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import RULES_BY_NAME

EXAMPLES = [pytest.param(t, e, id=f"{t.name}-{i}") for t in ALL_TRANSFORMS for i, e in enumerate(t.examples)]


@pytest.mark.parametrize(("transform", "example"), EXAMPLES)
def test_example_is_what_the_tool_writes(transform, example):
    out = written(transform, example)
    assert strip(out) == example.after
    assert undo_source_text(out) == example.before
    again = instrument_text(f"/project/{example.path}", out, example_options(transform, example))[0]
    assert again == out


def only(*names: str, **options) -> Options:
    return replace(Options(**options), selected=select(names, []))


def fix(code: str, *names: str, **options) -> str:
    out = instrument_text("/project/model.py", code, only(*names, **options))[0]
    assert undo_source_text(out) == code
    return strip(out)


def fix_in(folder, name: str, code: str, others: dict[str, str], *names: str) -> str:
    """`code`, instrumented as `folder/name` beside the project files `others` (file name -> text)."""
    for other, text in others.items():
        (folder / other).write_text(text)
    return strip(instrument_text(str(folder / name), code, only(*names))[0])


# --- device RNG: the rewrite draws the same numbers on the CPU, with the same dtype and requires_grad ------
DRAWS = [
    "torch.randn(3, 4, device=dev, dtype=torch.float64, requires_grad=True)",
    "torch.rand(2, 3, device=dev, generator=seeded)",  # lerobot: the generator, made only when seeded, too
    "torch.randint(0, 10, (5,), device=dev)",
    "torch.randperm(7, device=dev)",
    "torch.normal(0.0, 2.0, (3,), device=dev)",
    "torch.randn_like(x)",
    "torch.rand_like(x, dtype=torch.float64)",
    "torch.randint_like(x, 5)",
    "torch.randint_like(x, 2, 9)",
    "torch.rand_like(x, device=dev)",
    "torch.randn(3, device=dev, generator=made_on_dev)",  # the generator is made on the CPU too
    "torch.randn_like(image)",  # channels-last: the CPU fill follows memory order, and the result keeps it
    "torch.randn_like(transposed, memory_format=torch.preserve_format)",
    "torch.rand_like(image, memory_format=torch.contiguous_format, requires_grad=True)",
    "torch.bernoulli(p)",
    "torch.multinomial(p, 2)",
    "torch.empty(3, device=dev).normal_()",
    "torch.rand_like(x).uniform_(-1, 1)",  # the fill redraws: the whole chain is made on the CPU
    "torch.empty_like(image).exponential_()",
    "torch.randn(3, device=dev).normal_()",
    "x.normal_(0.0, 2.0)",
    "p.bernoulli()",
]
TEMPLATE = ("import torch\n\n\ndef draw(dev, g):\n    x = torch.zeros(3, 4).to(dev)\n"
            "    p = torch.full((3, 4), 0.5).to(dev)\n"
            "    image = torch.zeros(2, 3, 4, 5).to(dev, memory_format=torch.channels_last)\n"
            "    transposed = x.t()\n    made_on_dev = torch.Generator(dev).manual_seed(3)\n"
            "    seeded = None if g is None else torch.Generator(device=dev).manual_seed(4)\n    return {}\n")


@pytest.mark.parametrize("draw", DRAWS)
def test_device_draw_is_numerically_identical_on_cpu(draw):
    before = TEMPLATE.format(draw)
    after = fix(before, "device-rng")
    assert after != before, "the draw was not rewritten"
    assert "device=dev" not in after.split("return", 1)[1]
    results = []
    for code in (before, after):
        namespace: dict = {}
        exec(compile(code, "draw.py", "exec"), namespace)
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(5)
        results.append(namespace["draw"]("cpu", generator))
    first, second = results
    assert torch.equal(first, second)
    assert (first.dtype, first.device, first.requires_grad) == (second.dtype, second.device, second.requires_grad)
    assert first.stride() == second.stride()


def test_device_draw_keeps_generator_and_moves_after():
    """A generator parameter that no call in the file sets is None: kept, and the draw moved."""
    out = fix("import torch\n\n\ndef f(d, g=None):\n    return torch.randn(2, device=d, generator=g, requires_grad=flag)\n"
              "\n\nx = f(\"cuda\")\n", "device-rng")
    assert "torch.randn(2, generator=g).to(d).requires_grad_(flag)" in out


@pytest.mark.parametrize("given", ["g", "self.generator", "g if g is not None else None"])
def test_device_draw_with_a_generator_made_elsewhere_is_noted(given):
    """A generator handed in (a diffusers pipeline's `generator=`) may be made on the device, which a CPU draw
    refuses ("Expected a 'cpu' device type for generator"): the draw is left, with what its generator needs."""
    code = f"import torch\n\n\ndef f(self, d, g):\n    return torch.randn(2, device=d, generator={given})\n"
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code and len(notes) == 1
    assert "draw on the CPU and move the result (`torch.randn(2, " in notes[0]
    assert f"(with `generator={given}`, which may be made on the device" in notes[0]


def test_diffusers_draw_keeps_a_generator_a_caller_may_pass():
    """Open-Sora's `sample(self, generator=None)`: no call in the file sets it, so diffusers draws on the device; a
    caller elsewhere may still pass one, which decides where it draws as before."""
    code = ("import torch\nfrom diffusers.utils.torch_utils import randn_tensor\n\n\nclass Posterior:\n"
            "    def sample(self, generator=None):\n"
            "        return randn_tensor(self.mean.shape, generator=generator, device=self.mean.device)\n")
    assert "randn_tensor(self.mean.shape, generator=generator or torch.default_generator, device=self.mean.device)" \
        in fix(code, "device-rng")


def test_device_draw_with_out_is_left_alone():
    code = "import torch\n\n\ndef f(d, buf):\n    return torch.randn(2, device=d, out=buf)\n"
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code and any("not rewritten (it writes into `out=`)" in n for n in notes)


def test_a_draw_from_an_index_of_a_device_tensor_is_drawn_from_its_cpu_copy():
    """BLIP's hard-negative mining: `torch.multinomial(weights_t2i[b], 1).item()` for each row of a device tensor;
    `x[:, 0].bernoulli()` is named twice by the rewrite, which an index of names allows."""
    code = ("import torch\n\n\ndef negatives(weights_t2i, x, bs):\n    weights_t2i = weights_t2i.cuda()\n"
            "    x = x.cuda()\n    idx = [torch.multinomial(weights_t2i[b], 1).item() for b in range(bs)]\n"
            "    return idx, torch.bernoulli(x[:, 0]), torch.bernoulli(x[f(0)])\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert "torch.multinomial(weights_t2i[b].cpu(), 1).item()" in strip(out)
    assert "torch.bernoulli(x[:, 0].cpu()).to(x[:, 0].device)" in strip(out)
    assert any("its input `x[f(0)]` is not a plain name or an index of one" in note for note in notes), notes


def test_device_draw_left_alone_says_why_and_shows_the_cpu_draw():
    code = ("import torch\nfrom torch import nn\n\n\ndef f(w, logits):\n    w = w.cuda()\n    nn.init.normal_(w)\n"
            "    return torch.empty_like(logits.cuda()).exponential_(), torch.randn_like(logits.cuda()).normal_()\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code
    assert notes[0] == ("/p/m.py:7: device draw not rewritten (an initialiser fills its tensor in place): draw on the "
                        "CPU as the finding shows (`w.data.copy_(nn.init.normal_(torch.empty(w.shape)))`)")
    assert "(its input `logits.cuda()` is not a plain name or an index of one)" in notes[1]
    assert any("filled again on the device" in n for n in notes[2:])


def test_device_block_of_a_device_held_in_a_name_is_noted():
    """torchtune: `with training.set_default_dtype(dtype), self._device:` is left with a note, as `torch.device`."""
    code = ("import torch\nfrom torchtune import config, training, utils\n\n\nclass Recipe:\n"
            "    def __init__(self, cfg):\n        self._device = utils.get_device(device=cfg.device)\n\n"
            "    def setup(self, cfg):\n        with training.set_default_dtype(self._dtype), self._device:\n"
            "            return config.instantiate(cfg.model)\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code and len(notes) == 1 and notes[0].startswith("/p/m.py:10: not rewritten: modules built")


def test_draw_in_an_rng_tracker_fork_is_noted_with_the_tracker_advice():
    """Megatron's MTP mixing: a CPU draw in the tracker's fork would leave its per-rank stream: noted, not rewritten."""
    code = ("import torch\nfrom megatron.core import tensor_parallel\n\n\ndef mix(h):\n"
            "    tracker = tensor_parallel.get_cuda_rng_tracker()\n"
            "    context = tracker.fork(\"data\") if tracker.is_initialized() else nullcontext()\n"
            "    with context:\n        return torch.randint(4, (8,), device=h.device)\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code and len(notes) == 1 and notes[0].startswith("/p/m.py:9: not rewritten: `torch.randint(")
    assert "`model_parallel_cuda_manual_seed`" in notes[0] and "draw on the CPU yourself" not in notes[0]


def test_device_draw_read_on_the_host_is_not_moved_back():
    """BLIP: a negative drawn and read with `.item()` at once: drawn from a CPU copy, and not moved back."""
    code = ("import torch\n\n\ndef pick(w, dev):\n    w = w.to(dev)\n    i = torch.multinomial(w, 1).item()\n"
            "    return i, torch.randint(0, 4, (1,), device=dev).tolist(), torch.multinomial(w, 1)\n")
    after = fix(code, "device-rng")
    assert "i = torch.multinomial(w.cpu(), 1).item()" in after
    assert "torch.randint(0, 4, (1,)).tolist(), torch.multinomial(w.cpu(), 1).to(w.device)" in after
    namespace: dict = {}
    exec(compile(after, "pick.py", "exec"), namespace)
    assert namespace["pick"](torch.full((3,), 1 / 3), "cpu")[0] in (0, 1, 2)


def test_module_function_is_not_rewritten_as_a_tensor_draw():
    """audiocraft: `utils` is a module (`from ..utils import utils`): `utils.cpu().multinomial(...)` would crash."""
    code = ("import torch\nfrom torch import nn\nfrom ..utils import utils\n\n\nclass LM(nn.Module):\n"
            "    def forward(self, probs):\n        return utils.multinomial(probs, num_samples=1)\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code and notes == []


def test_device_module_that_may_be_meta_or_initialised_again_is_noted():
    """OLMo's `device=config.init_device` may be "meta": a CPU build of a meta model is not what it asks for;
    gpt-neox's router layer is initialised again on the GPU: both are left with a note."""
    code = ("import torch\nfrom torch import nn\n\n\ndef build(config, init_method):\n"
            "    head = nn.Linear(8, 8, device=config.init_device)\n"
            "    layer = nn.Linear(8, 8, bias=False, device=torch.cuda.current_device())\n    init_method(layer.weight)\n"
            "    return head, layer\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert out == code and len(notes) == 2
    assert notes[0].startswith("/p/m.py:6: not rewritten: `Linear(..., device=...)` draws") and "meta" in notes[0]
    assert notes[1].startswith("/p/m.py:8: not rewritten: `init_method(layer.weight)` initialises again")


def test_diffusers_cpu_generator_log_line_is_noted_once():
    code = ("import torch\nfrom diffusers import AutoencoderKL\n\n\ndef step(vae, x, device):\n"
            "    a = vae.encode(x.to(device)).latent_dist.sample()\n"
            "    return a + vae.encode(x.to(device)).latent_dist.sample()\n")
    out, notes = instrument_text("/p/m.py", code, only("device-rng"))
    assert strip(out).count("sample(generator=torch.default_generator)") == 2
    assert len(notes) == 1 and notes[0].startswith("/p/m.py:6: diffusers logs \"The passed generator was created")


# --- data ---------------------------------------------------------------------------------------------
def test_dataloader_positional_shuffle_and_samplers():
    out = fix("import torch.utils.data as tud\n\nloader = tud.DataLoader(ds, 8, True)\n"
              "s = tud.RandomSampler(ds, replacement=True, num_samples=10)\nd = tud.DistributedSampler(ds, 2, 0, True)\n",
              "data-shuffle")
    assert "tud.DataLoader(ds, 8, False)" in out
    assert "s = tud.SequentialSampler(ds)" in out
    assert "tud.DistributedSampler(ds, 2, 0, False)" in out


def test_sampler_rename_keeps_the_import_tidy():
    out = fix("from torch.utils.data import DataLoader, RandomSampler, TensorDataset\n\n"
              "loader = DataLoader(ds, sampler=RandomSampler(ds))\n", "data-shuffle")
    assert out.startswith("from torch.utils.data import DataLoader, SequentialSampler, TensorDataset\n")


def test_sampler_still_used_elsewhere_keeps_its_import():
    out = fix("from torch.utils.data import DataLoader, RandomSampler\n\nloader = DataLoader(ds, sampler=RandomSampler(ds))\n"
              "print(RandomSampler)\n", "data-shuffle")
    assert "RandomSampler" in out.splitlines()[0] and "SequentialSampler" in out


def test_library_shuffles_dropped_or_noted():
    """A Hugging Face or webdataset `.shuffle(...)` is dropped; what cannot be dropped is left with a note."""
    code = ("import torch\nimport webdataset as wds\nfrom datasets import load_dataset\n\n"
            "data = load_dataset(\"json\", data_files=\"a.json\")\ntrain = data[\"train\"].shuffle().map(len)\n"
            "split = data[\"train\"].train_test_split(test_size=0.1)\n"
            "urls = wds.WebDataset(shards).shuffle(1000).decode(\"pil\")\nstages = [wds.shuffle(bufsize=1000)]\n")
    out, notes = instrument_text("/p/m.py", code, only("data-shuffle"))
    assert 'train = data["train"].map(len)' in out and 'wds.WebDataset(shards).decode("pil")' in out
    assert "train_test_split(test_size=0.1)" in out and "wds.shuffle(bufsize=1000)" in out
    assert [n.split(": ", 1)[0] for n in notes] == ["/p/m.py:7", "/p/m.py:9"]
    assert "`seed=`" in notes[0] and "rng=random.Random(seed)" in notes[1]


def test_subset_random_sampler_reads_its_indices_in_order():
    code = ("import mindspore.dataset as ds\nfrom torch.utils.data import DataLoader, SubsetRandomSampler\n\n"
            "a = DataLoader(data, batch_size=4, sampler=SubsetRandomSampler(indices=ids, generator=None))\n"
            "b = SubsetRandomSampler(ids)\nc = ds.SubsetRandomSampler([0, 2], num_samples=1)\n")
    out, notes = instrument_text("/p/m.py", code, only("data-shuffle"))
    assert "sampler=list(ids))" in out and "b = SubsetRandomSampler(ids)" in out
    assert "c = ds.SubsetSampler([0, 2], num_samples=1)" in out
    assert len(notes) == 1 and "/p/m.py:5" in notes[0] and "sampler=list(indices)" in notes[0]


def test_a_file_that_checks_for_a_random_sampler_keeps_one_seeded():
    """SlowFast's `shuffle_dataset` asserts the loader's sampler is a `RandomSampler` (or `DistributedSampler`) every
    epoch: loaders and `RandomSampler`s keep shuffling, from a seeded generator; a given `generator=` is kept."""
    code = ("from torch.utils.data import DataLoader, RandomSampler\n\n"
            "a = DataLoader(ds, shuffle=True)\nb = DataLoader(ds, sampler=RandomSampler(ds))\n"
            "c = DataLoader(ds, shuffle=True, generator=g)\n\n\ndef check(loader):\n"
            "    return type(loader.sampler) is RandomSampler\n")
    out, notes = instrument_text("/p/m.py", code, only("data-shuffle"))
    seeded = "generator=torch.Generator().manual_seed(torch.initial_seed())"
    assert f"a = DataLoader(ds, shuffle=True, {seeded})" in strip(out)
    assert f"b = DataLoader(ds, sampler=RandomSampler(ds, {seeded}))" in strip(out)
    assert "c = DataLoader(ds, shuffle=True, generator=g)" in strip(out)
    assert [n.split(": ", 1)[0] for n in notes] == ["/p/m.py:3", "/p/m.py:4", "/p/m.py:5"]
    assert "shuffling kept" in notes[0] and "its `generator=` is kept" in notes[2]


def test_mindspore_dataset_beside_a_sampler_that_may_be_given():
    """MindSpore refuses `shuffle=` beside a sampler: `shuffle=False` only while a sampler parameter is None."""
    code = ("import mindspore.dataset as ds\n\n\ndef create(source, sampler=None):\n"
            "    return ds.GeneratorDataset(source, [\"x\"], sampler=sampler)\n\n\n"
            "def other(source, args, sampler=None):\n"
            "    return ds.GeneratorDataset(source, [\"x\"], sampler=sampler, shuffle=args.shuffle and args.train)\n")
    out = fix(code, "data-shuffle")
    assert 'sampler=sampler, shuffle=False if sampler is None else None)' in out
    assert "shuffle=False if sampler is None else (args.shuffle and args.train))" in out


def test_sampler_chosen_between_classes_is_noted():
    code = ("from torch.utils.data import DataLoader, RandomSampler\nfrom torch.utils.data.distributed import "
            "DistributedSampler\n\n\nclass Provider:\n    def __init__(self, single):\n"
            "        self.sampler = RandomSampler if single else DistributedSampler\n\n"
            "    def loader(self, ds):\n        return DataLoader(ds, sampler=self.sampler(ds))\n")
    out, notes = instrument_text("/p/m.py", code, only("data-shuffle"))
    assert undo_source_text(out) == code and strip(out) == code and len(notes) == 1


def test_mindspore_dataset_shuffle_and_chain():
    out = fix("import mindspore.dataset as ds\n\ndata = ds.MnistDataset(\"mnist/\").shuffle(64).batch(32)\n"
              "other = ds.GeneratorDataset(source, [\"x\"], shuffle=True)\n", "data-shuffle")
    assert 'ds.MnistDataset("mnist/", shuffle=False).batch(32)' in out
    assert 'ds.GeneratorDataset(source, ["x"], shuffle=False)' in out


def test_workers_seeded_generator_and_strict_mode():
    code = "import torch as T\n\nloader = T.utils.data.DataLoader(ds, num_workers=4, persistent_workers=True)\n"
    assert "generator=T.Generator().manual_seed(T.initial_seed())" in fix(code, "data-workers")
    strict = fix(code, "data-workers", data_strict=True)
    assert "num_workers=0, persistent_workers=False)" in strict


def test_workers_generator_that_may_be_none_is_kept_where_set():
    code = ("import torch\nimport webdataset as wds\nfrom torch.utils.data import DataLoader\n\n\n"
            "def make(ds, n, seeded, args):\n    g = None\n    if seeded:\n        g = torch.Generator().manual_seed(0)\n"
            "    a = DataLoader(ds, num_workers=n, generator=g)\n    b = DataLoader(ds, num_workers=n, generator=None)\n"
            "    c = DataLoader(ds, num_workers=n, generator=args.g if seeded else None)\n"
            "    return wds.WebLoader(ds, batch_size=None, num_workers=n), a, b, c\n")
    seeded = "torch.Generator().manual_seed(torch.initial_seed())"
    out = fix(code, "data-workers")
    assert f"a = DataLoader(ds, num_workers=n, generator=g or {seeded})" in out
    assert f"b = DataLoader(ds, num_workers=n, generator={seeded})" in out
    assert f"c = DataLoader(ds, num_workers=n, generator=(args.g if seeded else None) or {seeded})" in out
    assert f"wds.WebLoader(ds, batch_size=None, num_workers=n, generator={seeded})" in out
    assert "wds.WebLoader(ds, batch_size=None, num_workers=0)" in fix(code, "data-workers", data_strict=True)


MINDSPORE_KWARGS = ("import mindspore.dataset as ds\n\nkw = {\"num_parallel_workers\": 4}\n"
                    "data = ds.GeneratorDataset(source, [\"x\"], **kw)\n")


@pytest.mark.parametrize("code", [e.code for e in RULES_BY_NAME["data-workers"].invalid] + [MINDSPORE_KWARGS])
def test_workers_findings_are_fixable_where_the_transform_rewrites_them(code):
    """MSP302's per-finding `fixable` says what msprobe-instrument does: rewrite the call, or leave it with a note."""
    findings = lint_source("/project/model.py", code.encode(), [RULES_BY_NAME["data-workers"]]).findings
    out, notes = instrument_text("/project/model.py", code, only("data-workers"))
    assert {f.line for f in findings if not f.fixable} == {int(note.split(":")[1]) for note in notes}
    assert (strip(out) != code) == any(f.fixable for f in findings)


def test_multiline_call_gets_its_argument_on_its_own_line():
    code = "from torch.utils.data import DataLoader\n\nloader = DataLoader(\n    ds,\n    num_workers=4,\n)\n"
    out = fix(code, "data-workers")
    assert out.endswith("    num_workers=4,\n    generator=torch.Generator().manual_seed(torch.initial_seed()),\n)\n")
    assert "import torch\n" in out


def test_mindspore_workers():
    out = fix("import mindspore.dataset as ds\n\nds.config.set_num_parallel_workers(8)\n"
              "data = ds.GeneratorDataset(source, [\"x\"], shuffle=False, num_parallel_workers=8)\n", "data-workers")
    assert "set_num_parallel_workers(1)" in out and "num_parallel_workers=1)" in out


def test_a_data_module_naming_no_framework_is_fixed_as_lint_reports_it():
    """Every file lint reads is instrumented: a split script naming only `random` gets its listing sorted."""
    code = "import os\nimport random\n\nfor name in os.listdir(folder):\n    rows.append(name)\nrandom.shuffle(rows)\n"
    assert "for name in sorted(os.listdir(folder)):" in fix(code, "unsorted-file-list")


def test_loaders_imported_from_the_project_are_fixed_as_their_base(tmp_path):
    """A DataLoader subclass of another project file gets `shuffle=False` and a seeded generator; a project
    class that is no loader keeps its arguments (never MindSpore's `num_parallel_workers`)."""
    loaders = ("import torch\n\n\nclass FastLoader(torch.utils.data.DataLoader):\n"
               "    pass\n\n\nclass Prefetcher:\n    pass\n")
    code = ("import torch\nfrom loaders import FastLoader, Prefetcher\n\n"
            "a = FastLoader(ds, shuffle=True, num_workers=4)\nb = Prefetcher(ds, shuffle=True, num_workers=4)\n")
    out = fix_in(tmp_path, "train.py", code, {"loaders.py": loaders}, "data-shuffle", "data-workers")
    assert "a = FastLoader(ds, shuffle=False, num_workers=4, generator=torch.Generator()" in out
    assert "b = Prefetcher(ds, shuffle=True, num_workers=4)\n" in out


# --- augmentation -------------------------------------------------------------------------------------
def test_augment_list_edges_keep_commas():
    out = fix("from torchvision.transforms import v2\n\n"
              "a = v2.Compose([v2.ToImage(), v2.RandomHorizontalFlip()])\nb = (v2.RandomRotation(10),)\n"
              "c = [v2.RandomCrop(8), v2.ToDtype(float)]\n", "random-augment")
    assert "a = v2.Compose([v2.ToImage()])" in out
    assert "b = ()" in out
    assert "c = [v2.CenterCrop(8), v2.ToDtype(float)]" in out


@pytest.mark.parametrize("last", ["", "    T.ToTensor(),\n"])
def test_augment_twins_keep_an_end_of_line_comment_once(last):
    code = f"import torchvision.transforms as T\n\ntf = T.Compose([\n    T.RandomResizedCrop(224),  # scale (0.08, 1)\n{last}])\n"
    out = fix(code, "random-augment")
    assert out.count("# scale (0.08, 1)") == 1 and "T.CenterCrop(224)" in out


def test_augment_leaves_draws_written_by_hand_with_a_note():
    code = ("import random\n\nfrom torch.utils.data import Dataset\n\n\nclass Flips(Dataset):\n"
            "    def __getitem__(self, i):\n        return self.data[i][::-1] if random.random() < 0.5 else self.data[i]\n")
    out, notes = instrument_text("train.py", code, only("random-augment"))
    assert strip(out) == code
    assert notes == ["train.py:8: random draw written by hand not rewritten: make it deterministic yourself"]


def test_augment_twins_of_a_last_element_are_separated_like_the_list():
    out = fix("import torchvision.transforms as T\n\none = T.Compose([T.RandomResizedCrop(224)])\n"
              "lines = T.Compose([\n    T.ToTensor(),\n    T.RandomResizedCrop(8),\n])\n", "random-augment")
    assert "one = T.Compose([T.Resize(224), T.CenterCrop(224)])" in out
    assert "lines = T.Compose([\n    T.ToTensor(),\n    T.Resize(8),\n    T.CenterCrop(8),\n])" in out


def test_augment_mindspore_map_operations():
    out = fix("import mindspore.dataset.vision as V\n\ndata = data.map(operations=[V.RandomResizedCrop(32), "
              "V.RandomColorAdjust(0.4), V.HWC2CHW()], input_columns=\"image\")\n", "random-augment")
    assert "operations=[V.Resize(32), V.CenterCrop(32), V.HWC2CHW()]" in out


def test_noqa_keeps_a_finding_from_being_fixed():
    code = "import torch\n\nx = torch.randn(3, device=\"cuda\")  # noqa: device-rng\n"
    assert fix(code, "device-rng") == code


# --- contiguous and cuDNN -----------------------------------------------------------------------------
def test_contiguous_through_a_variable():
    out = fix("import torch\n\n\nclass F(torch.autograd.Function):\n    @staticmethod\n"
              "    def backward(ctx, g):\n        x, = ctx.saved_tensors\n        g_t = g.t()\n"
              "        return torch.mm(g_t, x)\n", "noncontiguous")
    assert "torch.mm(g_t.contiguous(), x)" in out


def test_cudnn_switches():
    out = fix("import torch\n\ntorch.backends.cudnn.benchmark = True\n", "cudnn-benchmark")
    assert "torch.backends.cudnn.benchmark = False" in out


# --- selection ----------------------------------------------------------------------------------------
def test_selection_by_transform_rule_name_and_code():
    assert select(["seed-missing"], []) == {"seed"}
    assert select(["MSP201"], []) == {"device-rng"}
    assert "grad-probe" not in select([], [])
    assert "grad-probe" in select([], [], grad_probe=True)
    assert "debugger" not in select([], ["debugger"])
    with pytest.raises(SelectionError):
        select(["no-such-thing"], [])


# --- other frameworks --------------------------------------------------------------------------------
JAX_SCRIPT = ("import random\n\nimport jax\nimport numpy as np\nimport optax\nfrom torch.utils.tensorboard import "
              "SummaryWriter\n\nif __name__ == \"__main__\":\n    random.seed(1)\n    key = jax.random.PRNGKey(1)\n"
              "    for step in range(10):\n        params = optax.apply_updates(params, updates)\n")


def test_a_jax_script_that_takes_only_torch_utils_is_left_unchanged():
    out, notes = instrument_text("/p/dqn_jax.py", JAX_SCRIPT, Options())
    assert out == JAX_SCRIPT
    assert notes == ["/p/dqn_jax.py: this file is written for JAX (from PyTorch it takes only torch.utils): "
                     "msprobe-instrument instruments PyTorch and MindSpore code, so it is left unchanged"]


def test_a_jax_script_is_said_to_be_written_for_jax_and_its_modules_are_left_quietly():
    """vision_transformer: train.py is noted; models_vit.py (flax, no torch, no entry point) is left without a word."""
    entry = "import jax\nimport numpy as np\n\nif __name__ == \"__main__\":\n    key = jax.random.PRNGKey(0)\n"
    assert instrument_text("/p/train.py", entry, Options())[1] == [
        "/p/train.py: this file is written for JAX: msprobe-instrument instruments PyTorch and MindSpore code, so it "
        "is left unchanged"]
    module = "import flax.linen as nn\nimport jax.numpy as jnp\nimport numpy as np\n\nx = np.random.rand(3)\n"
    assert instrument_text("/p/models_vit.py", module, Options()) == (module, [])


def test_a_torch_script_that_also_imports_jax_is_instrumented():
    code = JAX_SCRIPT.replace("import optax\n", "import optax\nimport torch\n")
    out, _ = instrument_text("/p/train.py", code, Options())
    assert "seed_all(" in out


def test_an_entry_script_that_trains_through_a_torch_helper_is_no_tensorflow_script(tmp_path, monkeypatch):
    """score_sde's main.py takes tf.io.gfile from TensorFlow; its training is run_lib.train, a PyTorch loop."""
    (tmp_path / "run_lib.py").write_text("import torch\n\n\ndef train(model, data):\n    opt = torch.optim.Adam(model.parameters())\n"
                                         "    for x in data:\n        model(x).sum().backward()\n        opt.step()\n")
    code = ("import run_lib\nimport tensorflow as tf\n\n\ndef main():\n    tf.io.gfile.makedirs('work')\n"
            "    run_lib.train(model, data)\n\n\nif __name__ == \"__main__\":\n    main()\n")
    monkeypatch.chdir(tmp_path)
    out, notes = instrument_text("main.py", code, Options())
    assert "seed_all(" in out
    assert notes == ["main.py: the training loop is not in this file but in `train` in run_lib.py: instrument that file "
                     "too (msprobe-instrument --write main.py run_lib.py); debugger not added here"]


def test_augment_keeps_a_transform_whose_dropped_argument_calls_something():
    """open_clip's `RandomResizedCrop(size, scale=cfg.pop('scale'))`: dropping `scale=` would leave the key in the
    dict its pipeline then checks; `int(...)` and the carried size are harmless."""
    code = ("import torchvision.transforms as T\n\n\ndef make(size, cfg):\n"
            "    return T.Compose([T.RandomResizedCrop(int(size), scale=cfg.pop('scale')), T.ToTensor()])\n")
    out, notes = instrument_text("train.py", code, only("random-augment"))
    assert out == code
    assert any("`cfg.pop('scale')` calls something" in note for note in notes)


def test_augment_albumentations_twins_take_height_and_width():
    """latent-diffusion's `self.cropper = albumentations.RandomCrop(height=..., width=...)`; albumentations' resized
    crops carry their size by keyword only (their positions changed between versions)."""
    out = fix("import albumentations\nimport torch\n\n\nclass SR:\n    def __init__(self, s):\n"
              "        self.cropper = albumentations.RandomCrop(height=s, width=s)\n"
              "        self.sized = albumentations.RandomSizedCrop((50, 100), height=s, width=s, interpolation=1)\n"
              "        self.shift = albumentations.ShiftScaleRotate(p=0.5)\n", "random-augment")
    assert "self.cropper = albumentations.CenterCrop(height=s, width=s)" in out
    assert "self.sized = albumentations.Resize(height=s, width=s, interpolation=1)" in out
    assert "self.shift = albumentations.ShiftScaleRotate(p=0.0)" in out


@pytest.mark.parametrize("call", ["A.RandomResizedCrop(size=(224, 224))", "A.RandomSizedCrop((50, 100), 256, 256)",
                                  "T.RandomCrop(**crop_cfg)"])
def test_augment_leaves_a_crop_whose_size_the_twin_cannot_read(call):
    code = f"import albumentations as A\nimport torchvision.transforms as T\n\ncrop = {call}\n"
    out, notes = instrument_text("train.py", code, only("random-augment"))
    assert strip(out) == code
    assert len(notes) == 1 and "not rewritten: its twin" in notes[0]


def test_augment_open_clip_factory_is_left_with_a_note_and_timm_kwargs_get_is_training_false():
    code = ("import open_clip\nfrom timm.data import create_transform\n\n"
            "model, preprocess_train, preprocess_val = open_clip.create_model_and_transforms('ViT-B-32')\n"
            "kwargs = dict(input_size=224, is_training=True, **aug_cfg)\ntf = create_transform(**kwargs)\n"
            "run(model, preprocess_train)\n")
    out, notes = instrument_text("train.py", code, only("random-augment"))
    assert "tf = create_transform(**{**kwargs, \"is_training\": False})" in strip(out)
    assert notes == ["train.py:4: `create_model_and_transforms` not rewritten: train with the validation transform it "
                     "returns (`preprocess_val`) while debugging"]


def test_augment_twin_already_imported_is_not_imported_twice():
    code = ("from torchvision.transforms import CenterCrop, Compose, RandomResizedCrop\n\n"
            "train = Compose([RandomResizedCrop(224)])\nval = Compose([CenterCrop(224)])\n")
    out = fix(code, "random-augment")
    assert out.splitlines()[0] == "from torchvision.transforms import Resize, CenterCrop, Compose"
    assert "train = Compose([Resize(224), CenterCrop(224)])" in out


def test_train_step_cell_rebound_to_its_own_name_is_no_cycle(tmp_path):
    """`network = TrainingWrapper(network, optimizer)` with the optimizer built from a helper given `network`:
    the cell holds itself through the name; the debugger still gets the network (this recursed without end)."""
    netmod = ("import mindspore as ms\nfrom mindspore import nn\n\n\n"
              "class TrainingWrapper(nn.TrainOneStepWithLossScaleCell):\n"
              "    def construct(self, item):\n        loss = self.network(item)\n"
              "        self.optimizer(self.grad(self.network, self.weights)(item))\n        return loss\n\n\n"
              "def get_param_groups(network):\n    return [{'params': network.trainable_params()}]\n")
    code = ("import mindspore as ms\nfrom mindspore import nn\nfrom netmod import TrainingWrapper, get_param_groups\n\n"
            "network = nn.Dense(4, 2)\noptimizer = nn.Adam(params=get_param_groups(network), learning_rate=0.1)\n"
            "network = TrainingWrapper(network, optimizer)\nfor i in range(3):\n    loss = network(x)\n")
    out = fix_in(tmp_path, "train.py", code, {"netmod.py": netmod}, "debugger")
    assert "    debugger.start(model=network)\n" in out


def test_a_module_the_project_imports_is_seeded_under_its_guard(tmp_path):
    """PointNet's `show3d_balls.py` seeds in its `__main__` demo, and `show_seg.py` imports it: importing it must
    not reseed (before, a literal seed went to the module level)."""
    code = ("import numpy as np\nimport torch\n\n\ndef show(x):\n    return torch.as_tensor(x)\n\n\n"
            "if __name__ == \"__main__\":\n    np.random.seed(100)\n    show(np.random.rand(3))\n")
    out = fix_in(tmp_path, "show3d_balls.py", code, {"show_seg.py": "from show3d_balls import show\n"}, "seed")
    assert "if __name__ == \"__main__\":\n    seed_all(seed=100, mode=False, rm_dropout=True)\n" in out


def test_an_entry_script_that_only_calls_the_projects_training_function_is_seeded(tmp_path):
    """LLaVA's train_mem.py is `from llava.train.train import train` and `train()` under its guard: it is the
    script that runs, so it gets seed_all (train.py, imported by it, is seeded only under its own guard)."""
    trainer = ("import torch\n\n\ndef train():\n    model = torch.nn.Linear(2, 1)\n"
               "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
               "        model(x).sum().backward()\n        opt.step()\n")
    code = "from train import train\n\nif __name__ == \"__main__\":\n    train()\n"
    out = fix_in(tmp_path, "train_mem.py", code, {"train.py": trainer}, "seed")
    assert "from train import train\nfrom msprobe_runtime.pytorch import seed_all\nseed_all(seed=1234, " in out


def test_a_ray_driver_that_trains_nowhere_is_told_where_seeding_goes():
    """MindSpeed-LLM's rlhf_gpt.py starts Ray and its actors train: module code never runs in them."""
    code = ("import ray\nimport torch\nfrom workers import ActorWorker\n\n\n@ray.remote\ndef train(config):\n"
            "    actor = ActorWorker.remote(config)\n    ray.get(actor.fit.remote())\n\n\n"
            "if __name__ == \"__main__\":\n    ray.init()\n    torch.manual_seed(1)\n    ray.get(train.remote({}))\n")
    out, notes = instrument_text("/project/rlhf.py", code, only("seed"))
    assert out == code
    assert any("this script drives Ray" in note for note in notes), notes


def test_each_alternative_function_that_seeds_with_its_parameter_gets_seed_all():
    """DeepSpeed's pipeline example seeds `args.seed` in `train_base(args)` and in `train_pipe(args)`, and runs
    one of them; a seed tested for None is no alternative."""
    code = ("import torch\n\n\ndef train_base(args):\n    torch.manual_seed(args.seed)\n"
            "    return torch.nn.Linear(2, 1)\n\n\ndef train_pipe(args):\n    torch.manual_seed(args.seed)\n"
            "    return torch.nn.Linear(2, 1)\n\n\ndef evaluate(args):\n    if args.seed is not None:\n"
            "        torch.manual_seed(args.seed)\n\n\nif __name__ == \"__main__\":\n    args = get_args()\n"
            "    if args.pipeline_parallel_size == 0:\n        train_base(args)\n    else:\n        train_pipe(args)\n"
            "    evaluate(args)\n")
    out = fix(code, "seed")
    for name in ("train_base", "train_pipe"):
        assert f"def {name}(args):\n    seed_all(seed=args.seed, mode=False, rm_dropout=True)\n" in out
    assert "def evaluate(args):\n    if args.seed" in out


AUGMENTATION = ("import torchvision.transforms as T\n{wrapper}\n"
                "tf = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor()])\n"
                "data = ImageFolder(root, {use})\n")


@pytest.mark.parametrize(("wrapper", "use", "others"), [
    # MoCo: the wrapper in a project module applies the same transform twice
    ("import moco.loader\n", "moco.loader.TwoCropsTransform(tf)",
     {"moco/__init__.py": "", "moco/loader.py": "class TwoCropsTransform:\n    def __init__(self, base):\n"
      "        self.base = base\n\n    def __call__(self, x):\n        return [self.base(x), self.base(x)]\n"}),
    # SimCLR: views made in a comprehension
    ("\n\nclass Views:\n    def __init__(self, base, n):\n        self.base, self.n = base, n\n\n"
     "    def __call__(self, x):\n        return [self.base(x) for _ in range(self.n)]\n\n", "Views(tf, 2)", {}),
], ids=["MoCo", "SimCLR"])
def test_random_augmentation_feeding_a_multi_view_wrapper_is_left_with_a_note(tmp_path, wrapper, use, others):
    (tmp_path / "moco").mkdir()
    code = AUGMENTATION.format(wrapper=wrapper, use=use)
    for other, text in others.items():
        (tmp_path / other).write_text(text)
    out, notes = instrument_text(str(tmp_path / "main.py"), code, only("random-augment"))
    assert out == code
    assert any("applies a transform several times to each sample" in note for note in notes), notes


def test_a_wrapper_applying_each_transform_once_is_no_multi_view_wrapper():
    wrapper = ("\n\nclass Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n\n"
               "    def __call__(self, x):\n        return self.a(x), self.b(x)\n\n")
    out = fix(AUGMENTATION.format(wrapper=wrapper, use="Pair(tf, T.ToTensor())"), "random-augment")
    assert "T.Compose([T.Resize(224), T.CenterCrop(224), T.ToTensor()])" in out


def test_a_wrapper_applying_two_augmented_transforms_to_each_sample_makes_views(tmp_path):
    """MoCo v3's main_moco.py: `TwoCropsTransform(Compose(augmentation1), Compose(augmentation2))` applies each
    random pipeline to the same image; without them the two views would be the same image."""
    (tmp_path / "moco").mkdir()
    (tmp_path / "moco" / "__init__.py").write_text("")
    (tmp_path / "moco" / "loader.py").write_text(
        "class TwoCropsTransform:\n    def __init__(self, base_transform1, base_transform2):\n"
        "        self.base_transform1 = base_transform1\n        self.base_transform2 = base_transform2\n\n"
        "    def __call__(self, x):\n        im1 = self.base_transform1(x)\n        im2 = self.base_transform2(x)\n"
        "        return [im1, im2]\n")
    code = ("import torchvision.transforms as T\nimport moco.loader\n\n"
            "augmentation1 = [T.RandomResizedCrop(224), T.ToTensor()]\n"
            "augmentation2 = [T.RandomResizedCrop(224), T.RandomGrayscale(p=0.2), T.ToTensor()]\n"
            "data = ImageFolder(root, moco.loader.TwoCropsTransform(T.Compose(augmentation1), T.Compose(augmentation2)))\n")
    out, notes = instrument_text(str(tmp_path / "main_moco.py"), code, only("random-augment"))
    assert out == code
    assert any("`TwoCropsTransform` applies a transform several times" in note for note in notes), notes


DEFINED_WRAPPER = ("import torchvision.transforms as T\n\n\nclass Augmentation:\n    def __init__(self, n):\n"
                   "        self.n = n\n        self.crop = T.Compose([T.RandomResizedCrop(96), T.RandomHorizontalFlip()])\n\n"
                   "    def __call__(self, image):\n{body}")


@pytest.mark.parametrize("body", [
    # DINOv2's DataAugmentationDINO: built in another module; the same crop twice, and in a comprehension
    "        first = self.crop(image)\n        second = self.crop(image)\n        return [first, second]\n",
    "        return [self.crop(image) for _ in range(self.n)]\n",
], ids=["twice", "comprehension"])
def test_random_augmentation_in_a_multi_view_class_the_file_defines_is_left_with_a_note(body):
    code = DEFINED_WRAPPER.format(body=body)
    out, notes = instrument_text("/project/augmentations.py", code, only("random-augment"))
    assert out == code
    assert any("`Augmentation` applies a transform several times" in note for note in notes), notes


def test_a_collator_drawing_per_sample_is_no_multi_view_wrapper():
    """ijepa's `MaskCollator` samples a block mask for each sample of the batch: not views of one image."""
    code = ("import torch\n\n\nclass MaskCollator:\n    def __call__(self, batch):\n"
            "        return [self._mask(len(batch)) for _ in range(len(batch))]\n\n"
            "    def _mask(self, n):\n        return torch.randint(0, n, (1,))\n")
    _, notes = instrument_text("/project/masks.py", code, only("random-augment"))
    assert not any("applies a transform several times" in note for note in notes), notes


def test_detectron2_flips_never_crops_go_and_resizes_drawing_a_size_are_left_with_a_note():
    """DiffusionDet's mapper: `RandomFlip` takes `prob`; detectron2 has no centre crop; a resize drawing its size
    is kept (without it the images keep the size they were read at)."""
    code = ("from detectron2.data import transforms as T\n\naugs = []\naugs.append(T.RandomFlip())\n"
            "crop = [T.ResizeShortestEdge([400, 500, 600], sample_style=\"choice\"), T.RandomCrop(\"absolute\", 384)]\n")
    out, notes = instrument_text("/project/mapper.py", code, only("random-augment"))
    assert "augs.append(T.RandomFlip(prob=0.0))" in strip(out)
    assert "crop = [T.ResizeShortestEdge([400, 500, 600], sample_style=\"choice\")]" in strip(out)
    assert any("`ResizeShortestEdge` not rewritten" in note for note in notes), notes


def test_a_transform_applied_to_each_frame_or_to_an_image_and_its_mask_makes_no_views():
    for body in ("        return [self.crop(frame) for frame in image]\n",
                 "        return self.crop(image), self.crop(image.mask)\n",
                 "        image = self.crop(image)\n        image = self.crop(image)\n        return image\n"):
        assert "T.Compose([T.Resize(96), T.CenterCrop(96)])" in fix(DEFINED_WRAPPER.format(body=body), "random-augment")


def test_a_method_named_like_a_stepping_function_is_no_step():
    """ResNet18's `validate` calls `losses.update(...)` of an AverageMeter, while `profiling` defines a nested
    `update` that steps: the validation loop is not wrapped."""
    code = ("import torch\n\n\nclass AverageMeter:\n    def update(self, val):\n        self.val = val\n\n\n"
            "def profiling(loader, model, optimizer):\n    def update(x):\n        model(x).sum().backward()\n"
            "        optimizer.step()\n    for x in loader:\n        update(x)\n\n\n"
            "def validate(loader, model):\n    losses = AverageMeter()\n    for x in loader:\n"
            "        losses.update(model(x).sum().item())\n")
    assert fix(code, "debugger").count("debugger.start(") == 1


def test_a_seed_that_varies_gets_the_literal_seed_seed_all_sets():
    """`random.seed()` beside `ms.set_seed(1)`: both seed with 1, so instrumenting again changes nothing."""
    code = ("import random\n\nimport mindspore as ms\n\nms.set_seed(1)\nrandom.seed()\nnet = ms.nn.Dense(2, 2)\n"
            "if __name__ == \"__main__\":\n    print(net)\n")
    out = fix(code, "seed")
    assert "seed_all(seed=1, " in out and "random.seed(1)\n" in out


def test_a_seed_a_project_helper_draws_when_none_gets_a_fallback(tmp_path):
    """ADDA's `init_random_seed(config.manual_seed)` draws a seed when given None (its YAML's `null`): seed_all,
    which rejects None, goes after it with the fixed seed as the fallback."""
    utils = ("import random\n\nimport mindspore as ms\n\n\ndef init_random_seed(manual_seed):\n    seed = manual_seed\n"
             "    if manual_seed is None:\n        seed = random.randint(1, 10000)\n    random.seed(seed)\n"
             "    ms.set_seed(seed)\n")
    code = ("import mindspore as ms\nfrom utils import init_random_seed\n\n\ndef main(config):\n"
            "    init_random_seed(config.manual_seed)\n    net = ms.nn.Dense(2, 2)\n\n\n"
            "if __name__ == \"__main__\":\n    main(load())\n")
    out = fix_in(tmp_path, "train.py", code, {"utils.py": utils}, "seed")
    assert ("    init_random_seed(config.manual_seed)\n    seed_all(seed=config.manual_seed if config.manual_seed is "
            "not None else 1234, mode=False, rm_dropout=True)\n") in out


def test_torchtune_set_seed_given_a_seed_that_may_be_none_gets_seed_all_before_it():
    """torchtune's `set_seed(seed=None)` draws a seed from torch's generator, and the recipe keeps it (for its
    sampler): seed_all goes before it, with a fallback for None, so that draw is seeded too and the deterministic
    mode `set_seed(debug_mode=...)` sets is not switched off again; the user's seed is kept."""
    code = ("import torch\nfrom torchtune import training\n\n\nclass Recipe:\n    def __init__(self, cfg):\n"
            "        self.seed = training.set_seed(seed=cfg.seed, debug_mode=cfg.get(\"mode\", None))\n"
            "        self.model = torch.nn.Linear(2, 2)\n\n\nif __name__ == \"__main__\":\n    Recipe(load())\n")
    for target in ("runtime", "msprobe"):
        out = fix(code, "seed", target=target)
        assert ("    def __init__(self, cfg):\n        seed_all(seed=cfg.seed if cfg.seed is not None else 1234, "
                "mode=False, rm_dropout=True)\n        self.seed = training.set_seed(seed=cfg.seed,") in out


def test_deterministic_seed_goes_before_communication_started_on_import():
    """Arcface starts HCCL at module level (in a try block) and seeds in `main`: with --deterministic a
    seed_all(mode=True) also goes before that try, where HCCL reads its settings."""
    code = ("import torch\nimport torch.distributed as dist\n\ntry:\n    dist.init_process_group(backend=\"hccl\")\n"
            "except KeyError:\n    dist.init_process_group(backend=\"hccl\", init_method=\"tcp://127.0.0.1:1\")\n\n\n"
            "def main(cfg):\n    torch.manual_seed(cfg.seed)\n    model = torch.nn.Linear(2, 2)\n\n\n"
            "if __name__ == \"__main__\":\n    main(load())\n")
    out = fix(code, "seed", deterministic=True)
    assert "\nseed_all(seed=1234, mode=True, rm_dropout=True)\ntry:\n" in out
    assert "def main(cfg):\n    seed_all(seed=cfg.seed, mode=True, rm_dropout=True)\n" in out


DATA_MODULE = ("import torch\nfrom torch.utils.data import DataLoader\n\n\ndef build_loader(data):\n"
               "    return DataLoader(data, batch_size=8, shuffle=True)\n")
ENTRY = ("import torch\nfrom data import build_loader\n\n\ndef main():\n    model = torch.nn.Linear(2, 1)\n"
         "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in build_loader(range(8)):\n"
         "        model(x).sum().backward()\n        opt.step()\n\n\nif __name__ == \"__main__\":\n    main()\n")


def test_data_code_in_a_project_module_the_run_leaves_out_is_noted(tmp_path):
    """Swin's main.py builds its loaders in data/build.py: instrumenting main.py alone leaves them shuffling."""
    (tmp_path / "data.py").write_text(DATA_MODULE)
    main = str(tmp_path / "main.py")
    _, notes = instrument_text(main, ENTRY, only("data-shuffle"))
    assert any("left out of this run" in note and "data.py (MSP301 x1)" in note for note in notes), notes
    given = replace(only("data-shuffle"), given=frozenset({main, str(tmp_path / "data.py")}))
    assert not any("left out" in note for note in instrument_text(main, ENTRY, given)[1])
    assert not any("left out" in note for note in instrument_text(main, ENTRY, only("seed"))[1])


def test_each_function_called_of_a_module_is_followed(tmp_path):
    """BLIP's pretrain.py calls `create_sampler` and then `create_dataset` of data/__init__.py; the dataset that
    `create_dataset` builds, data/pretrain_dataset.py, lists its files with `glob` and is named too."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "__init__.py").write_text(
        "from data.pretrain_dataset import pretrain_dataset\n\n\ndef create_sampler(data):\n    return None\n\n\n"
        "def create_dataset(path):\n    return pretrain_dataset(path)\n")
    (tmp_path / "data" / "pretrain_dataset.py").write_text(
        "import glob\nimport os\n\nfrom torch.utils.data import Dataset\n\n\nclass pretrain_dataset(Dataset):\n"
        "    def __init__(self, path):\n        self.files = glob.glob(os.path.join(path, '*.json'))\n\n"
        "    def __getitem__(self, index):\n        return self.files[index]\n")
    code = ENTRY.replace("from data import build_loader", "from data import create_dataset, create_sampler").replace(
        "    for x in build_loader(range(8)):\n", "    sampler = create_sampler(None)\n"
        "    for x in create_dataset('x'):\n")
    notes = instrument_text(str(tmp_path / "main.py"), code, only("unsorted-file-list"))[1]
    assert any("left out of this run" in note and "pretrain_dataset.py (MSP304 x1)" in note for note in notes), notes


def test_a_project_function_or_class_handed_to_a_call_is_followed(tmp_path):
    """OpenRLHF's train_ppo_ray.py hands `PolicyModelActor` to `PPORayActorGroup(...)`, which Ray runs: the loaders
    built in openrlhf/trainer/ray/ppo_actor.py are named."""
    (tmp_path / "data.py").write_text(DATA_MODULE)
    code = ENTRY.replace("    for x in build_loader(range(8)):\n", "    group = ActorGroup(build_loader)\n"
                         "    for x in group.run(range(8)):\n")
    notes = instrument_text(str(tmp_path / "main.py"), code, only("data-shuffle"))[1]
    assert any("left out of this run" in note and "data.py (MSP301 x1)" in note for note in notes), notes


def test_code_of_a_project_module_the_script_never_reaches_is_not_counted(tmp_path):
    """FastChat's train_mem.py calls `replace_llama_attn_with_flash_attn()` of llama2_flash_attn_monkey_patch.py,
    whose device draws are in its self-test `test()`, which only that module's `__main__` block calls: not counted."""
    (tmp_path / "data.py").write_text(DATA_MODULE + "\n\ndef test():\n    return DataLoader(range(4), shuffle=True)\n\n\n"
                                      "if __name__ == \"__main__\":\n    test()\n    DataLoader(range(4), shuffle=True)\n")
    notes = instrument_text(str(tmp_path / "main.py"), ENTRY, only("data-shuffle"))[1]
    assert any("left out of this run" in note and "data.py (MSP301 x1)" in note for note in notes), notes


def test_a_project_module_of_a_src_layout_package_is_noted(tmp_path):
    """lerobot's src/lerobot/scripts/lerobot_train.py imports `lerobot.transforms...`, src/lerobot/transforms/, as the
    installed package (pyproject.toml: `where = ["src"]`)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    (tmp_path / "src" / "pkg" / "scripts").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "data.py").write_text(DATA_MODULE)
    for main in (tmp_path / "train.py", tmp_path / "src" / "pkg" / "scripts" / "train.py"):
        notes = instrument_text(str(main), ENTRY.replace("from data", "from pkg.data"), only("data-shuffle"))[1]
        assert any("left out of this run" in note and "pkg/data.py (MSP301 x1)" in note for note in notes), notes


def test_project_modules_the_instrument_would_not_change_are_not_named(tmp_path):
    """DINO's utils.py draws by hand (a note, no rewrite): naming it would send the user to a file that stays as it
    is. sd-scripts' train_util.py draws its noise on the device: a rewrite, so it is named."""
    (tmp_path / "data.py").write_text("import random\nimport torch\n\n\nclass Flip(torch.utils.data.Dataset):\n"
                                      "    def __getitem__(self, i):\n        img = self.data[i]\n"
                                      "        if random.random() < 0.5:\n            img = img.flip(-1)\n"
                                      "        return img\n\n\ndef build_loader(data):\n    return Flip(data)\n")
    main = str(tmp_path / "main.py")
    assert not any("left out" in note for note in instrument_text(main, ENTRY, only("random-augment"))[1])
    (tmp_path / "data.py").write_text("import torch\n\n\ndef build_loader(data):\n"
                                      "    return [x + torch.randn(3, device=\"cuda\") for x in data]\n")
    notes = instrument_text(main, ENTRY, only("device-rng"))[1]
    assert any("data.py (MSP201 x1)" in note for note in notes), notes


def test_a_module_dict_of_factories_the_script_calls_an_item_of_is_followed(tmp_path):
    """DiT's `DiT_models[args.model](...)`, `DiT_models` a dict of models.py's factory functions: the model they
    build draws on the device every step, so models.py is named. A dict of what the module does not define (or no
    dict) is not followed."""
    (tmp_path / "models.py").write_text(
        "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x * (torch.rand(x.shape[0], device=x.device) < 0.1)\n\n\ndef net_s():\n    return Net()\n\n\n"
        "NETS = {'s': net_s}\nOTHERS = {'s': torch.nn.Linear}\n")
    main = str(tmp_path / "main.py")
    entry = ENTRY.replace("from data import build_loader", "from models import NETS, OTHERS").replace(
        "torch.nn.Linear(2, 1)", "NETS[args.model]()")
    notes = instrument_text(main, entry, only("device-rng"))[1]
    assert any("left out of this run" in note and "models.py (MSP201 x1)" in note for note in notes), notes
    notes = instrument_text(main, entry.replace("NETS[", "OTHERS["), only("device-rng"))[1]
    assert not any("left out" in note for note in notes), notes


def test_generators_seed_all_cannot_reach_get_a_note_in_any_file():
    """mindocr's label assignment builds `ops.RandomChoiceWithMask` with seed 0 in a library module: seed_all does
    not reach it, and the note says so (the seed transform claims no fix of unseeded-generator)."""
    code = "import numpy as np\nimport mindspore as ms\nfrom mindspore import ops\n\nrng = np.random.default_rng()\nop = ops.UniformReal()\n"
    out, notes = instrument_text("/project/assign.py", code, only("seed"))
    assert out == code
    assert [note.split(":")[1] for note in notes if "does not reach" in note] == ["5", "6"]
    assert all("unseeded-generator" not in transform.fixes for transform in ALL_TRANSFORMS)


def test_a_scandir_bound_by_with_is_left_with_the_rules_advice():
    """dinov2's `with os.scandir(path) as entries:`: `sorted(...)` there would break the `with`; a note says where
    to sort."""
    code = ("import os\nimport torch\n\n\nclass Folder(torch.utils.data.Dataset):\n    def __init__(self, p):\n"
            "        with os.scandir(p) as entries:\n            self.items = [e.path for e in entries]\n")
    out, notes = instrument_text("/p/data.py", code, only("unsorted-file-list"))
    assert out == code
    assert len(notes) == 1 and "not rewritten: `os.scandir` lists files" in notes[0]
    assert "sorted(entries, key=lambda entry: entry.name)" in notes[0]


RANDAUGMENT = ("import numpy as np\n\n\nclass RandomAugment:\n    def __call__(self, img):\n"
               "        for _ in np.random.choice(self.ops, 2):\n            img = self.apply(img)\n        return img\n\n\n"
               "class RandomPair:\n    def __call__(self, image, target):\n        if np.random.rand() < 0.5:\n"
               "            image = image[::-1]\n        return image, target\n")


def test_a_project_transform_drawing_globally_is_removed_from_a_compose_list(tmp_path):
    """LAVIS's `RandomAugment` (randaugment.py) in blip_processors.py's Compose: removed with a note; a step
    returning something else than its input (an image with its target) stays."""
    (tmp_path / "randaugment.py").write_text(RANDAUGMENT)
    code = ("from torchvision import transforms\n\nfrom randaugment import RandomAugment, RandomPair\n\n"
            "tf = transforms.Compose([\n    RandomAugment(2, 5, isPIL=True),\n    transforms.ToTensor(),\n])\n"
            "pairs = transforms.Compose([RandomPair(), transforms.ToTensor()])\n")
    out, notes = instrument_text(str(tmp_path / "processors.py"), code, only("random-augment"))
    assert "tf = transforms.Compose([\n    transforms.ToTensor(),\n])\n" in strip(out)
    assert "pairs = transforms.Compose([RandomPair(), transforms.ToTensor()])\n" in strip(out)
    assert any("`RandomAugment` removed from this list" in note and "randaugment.py:6" in note for note in notes), notes


SAMPLERS = ("import random\n\nimport torch\n\n\nclass LengthBasedBatchSampler(torch.utils.data.BatchSampler):\n"
            "    def __init__(self, data, batch_size, drop_last, shuffle=True):\n        self.batches = [[i] for i in data]\n"
            "        self.shuffle = shuffle\n\n    def __iter__(self):\n        if self.shuffle:\n"
            "            random.shuffle(self.batches)\n        yield from self.batches\n\n\n"
            "class AlwaysShuffledSampler(torch.utils.data.Sampler):\n    def __init__(self, n, shuffle=True):\n"
            "        self.n, self.shuffle = n, shuffle\n\n    def __iter__(self):\n"
            "        return iter(random.sample(range(self.n), self.n))\n")


def test_a_project_sampler_whose_shuffle_gates_its_draw_gets_shuffle_false(tmp_path):
    """llama-cookbook's `LengthBasedBatchSampler(..., shuffle=mode == "train")`: `shuffle=False` stops its draw
    (also given by position); a sampler drawing whatever `shuffle` says keeps its note."""
    (tmp_path / "sampler.py").write_text(SAMPLERS)
    code = ("import torch\nfrom sampler import AlwaysShuffledSampler, LengthBasedBatchSampler\n\n\ndef build(ds, mode):\n"
            "    a = LengthBasedBatchSampler(ds, 4, drop_last=True, shuffle=mode == \"train\")\n"
            "    b = LengthBasedBatchSampler(ds, 4, True, mode == \"train\")\n    c = AlwaysShuffledSampler(8, shuffle=True)\n"
            "    return a, b, c\n")
    out, notes = instrument_text(str(tmp_path / "config_utils.py"), code, only("data-shuffle"))
    assert "a = LengthBasedBatchSampler(ds, 4, drop_last=True, shuffle=False)\n" in strip(out)
    assert "b = LengthBasedBatchSampler(ds, 4, True, False)\n" in strip(out)
    assert "c = AlwaysShuffledSampler(8, shuffle=True)\n" in strip(out)
    assert any("config_utils.py:8: shuffling not turned off" in note for note in notes), notes


def test_a_builtin_given_the_seeds_object_does_not_move_seed_all():
    code = ("import argparse\n\nimport torch\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
            "    args = parser.parse_args()\n    print(args)\n    torch.manual_seed(args.seed)\n\n\n"
            "if __name__ == \"__main__\":\n    main()\n")
    assert "args = parser.parse_args()\n    seed_all(seed=args.seed" in fix(code, "seed")


def test_seeding_through_a_project_helper_that_takes_no_seed_is_noted(tmp_path):
    """OpenRLHF's train_sft.py: `strategy.setup_distributed()` seeds `args.seed` inside; seed_all (1234) goes
    after the imports, and a note says the helper reseeds with the script's seed."""
    (tmp_path / "strategy.py").write_text("import torch\n\n\nclass Strategy:\n    def __init__(self, args):\n"
                                          "        self.args = args\n\n    def setup_distributed(self):\n"
                                          "        torch.manual_seed(self.args.seed)\n\n\n"
                                          "def get_strategy(args):\n    return Strategy(args)\n")
    code = ("import torch\nfrom strategy import get_strategy\n\n\ndef train(args):\n    strategy = get_strategy(args)\n"
            "    strategy.setup_distributed()\n    model = torch.nn.Linear(2, 2)\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for x in torch.randn(4, 8, 2):\n"
            "        model(x).sum().backward()\n        opt.step()\n\n\n"
            "if __name__ == \"__main__\":\n    train(parse())\n")
    out, notes = instrument_text(str(tmp_path / "train_sft.py"), code, only("seed"))
    assert "from strategy import get_strategy\nfrom msprobe_runtime.pytorch import seed_all\nseed_all(seed=1234" in strip(out)
    assert any("train_sft.py:7: `strategy.setup_distributed(...)` seeds again" in note for note in notes), notes


@pytest.mark.parametrize(("seeding", "expected", "noted"), [
    ("set_seed(5)", "seed_all(seed=5, ", False),  # mindrl's c51_trainer.py: the run's seed is 5
    ("set_seed(CONFIG['seed'])", "seed_all(seed=1234, ", True),  # a seed seed_all cannot read: noted
    ("SEED = 42\nset_seed(SEED)", "seed_all(seed=42, ", False),  # mindrl's a2c.py: `np.random.seed(SEED)`
])
def test_a_seed_set_when_a_project_module_is_imported_is_kept(tmp_path, seeding, expected, noted):
    """mindrl's c51 example imports `c51_trainer`, which runs `set_seed(5)` at its top level: msprobe-lint counts
    that seeding, and seed_all, which runs after it, keeps its seed rather than replacing it with 1234."""
    trainer = f"from mindspore import set_seed\n\nCONFIG = {{'seed': 5}}\n{seeding}\n\n\nclass CategoricalDQNTrainer:\n    pass\n"
    code = ("import mindspore as ms\nfrom c51_trainer import CategoricalDQNTrainer\n\n\ndef train():\n"
            "    net = ms.nn.Dense(2, 2)\n    opt = ms.nn.Momentum(net.trainable_params(), 0.1, 0.9)\n"
            "    ms.train.Model(net, ms.nn.MSELoss(), opt).train(1, data)\n\n\n"
            "if __name__ == \"__main__\":\n    train()\n")
    (tmp_path / "c51_trainer.py").write_text(trainer)
    out, notes = instrument_text(str(tmp_path / "train.py"), code, only("seed"))
    assert expected in out
    assert any("importing this seeds" in note for note in notes) is noted


def test_a_literal_seed_a_project_helper_seeds_with_is_seed_all_s(tmp_path):
    """segment-anything's train.py calls utils.py's `set_env(args)`, which runs `ms.set_seed(42)`: seed_all takes
    42, and no note says it cannot read the seed."""
    (tmp_path / "utils.py").write_text("import mindspore as ms\n\n\ndef set_env(args):\n    ms.set_seed(42)\n")
    code = ("import mindspore as ms\nfrom utils import set_env\n\n\ndef main(args):\n    set_env(args)\n"
            "    ms.train.Model(net, loss, opt).train(1, data)\n\n\nif __name__ == \"__main__\":\n    main(None)\n")
    out, notes = instrument_text(str(tmp_path / "train.py"), code, only("seed"))
    assert "seed_all(seed=42, " in out
    assert not any("cannot read" in note for note in notes), notes


def test_a_seed_set_by_a_module_imported_under_the_main_guard_is_kept(tmp_path):
    """mindpose's tools/train_on_openi.py runs `from train import train` under its `__main__` guard, and importing
    tools/train.py runs `ms.set_seed(0)`: seed_all keeps 0."""
    (tmp_path / "train.py").write_text("import mindspore as ms\n\nms.set_seed(0)\n\n\ndef train(args):\n"
                                       "    ms.train.Model(net, loss, opt).train(1, data)\n")
    code = ("import os\n\n\ndef parse_args():\n    return os.environ\n\n\nif __name__ == \"__main__\":\n"
            "    from train import train\n\n    train(parse_args())\n")
    out, notes = instrument_text(str(tmp_path / "train_on_openi.py"), code, only("seed"))
    assert "seed_all(seed=0, " in out, (out, notes)


@pytest.mark.parametrize(("option", "expected"), [
    ("parser.add_argument('--seed', type=int, help='Random seed.')",  # torchrec's dlrm_main.py
     "    args = parse_args(argv)\n    seed_all(seed=args.seed if args.seed is not None else 1234, "),
    ("parser.add_argument('--seed', default=7, type=int)", "    args = parse_args(argv)\n    seed_all(seed=args.seed, "),
    ("parser.add_argument('--lr', default=0.1)", "seed_all(seed=1234, "),  # no seed option: the fixed seed
])
def test_a_seed_option_the_script_seeds_nothing_with_is_the_seed(tmp_path, option, expected):
    """A script that seeds nothing but has a `--seed` option: seed_all takes it, right after the parse (torchrec's
    dlrm_main.py hands `args.seed`, default None, only to its data shuffling)."""
    code = ("import argparse\n\nimport torch\n\n\ndef parse_args(argv):\n    parser = argparse.ArgumentParser()\n"
            f"    {option}\n    return parser.parse_args(argv)\n\n\ndef main(argv):\n    args = parse_args(argv)\n"
            "    model = torch.nn.Linear(2, 2)\n\n\nif __name__ == '__main__':\n    main(None)\n")
    out = strip(instrument_text(str(tmp_path / "train.py"), code, only("seed"))[0])
    assert expected in out, out


def test_a_seed_option_parsed_in_an_imported_module_is_the_seed(tmp_path):
    """applications' mae/src/pretrain.py imports `mae_train_config`, which config/config.py parses at its top level
    with `--seed` (2022) that nothing reads."""
    (tmp_path / "config.py").write_text("import argparse\n\n\ndef train_parse_args():\n"
                                        "    parser = argparse.ArgumentParser()\n"
                                        "    parser.add_argument('--seed', default=2022, type=int)\n"
                                        "    return parser.parse_args()\n\n\nmae_train_config = train_parse_args()\n")
    code = ("import mindspore as ms\nfrom config import mae_train_config\n\n\ndef main(args):\n"
            "    net = ms.nn.Dense(2, 2)\n\n\nif __name__ == '__main__':\n    main(mae_train_config)\n")
    out = strip(instrument_text(str(tmp_path / "pretrain.py"), code, only("seed"))[0])
    assert "from config import mae_train_config\nfrom msprobe_runtime.mindspore import seed_all\n" \
           "seed_all(seed=mae_train_config.seed, " in out, out


def test_seeding_through_a_project_helper_under_the_main_guard_is_noted(tmp_path):
    """llm-foundry's train.py only calls `train_from_yaml(...)`, which seeds with its YAML's seed: seed_all goes under
    the `__main__` guard, and a note says that the helper reseeds with the script's own seed."""
    (tmp_path / "foundry.py").write_text("import random\n\n\ndef train_from_yaml(path, args):\n"
                                         "    seed = load(path)['seed']\n    random.seed(seed)\n")
    code = ("import sys\n\nfrom foundry import train_from_yaml\n\nif __name__ == '__main__':\n"
            "    train_from_yaml(sys.argv[1], sys.argv[2:])\n")
    out, notes = instrument_text(str(tmp_path / "train.py"), code, only("seed"))
    assert "if __name__ == '__main__':\n    seed_all(seed=1234" in strip(out)
    assert any("train.py:6: `train_from_yaml(...)` seeds again after seed_all (Python's `random`)" in note
               for note in notes), notes


def test_the_note_on_a_helper_reseeding_names_the_scripts_seed_option(tmp_path):
    """OpenRLHF's train_sft.py: `strategy.setup_distributed()` seeds with `--train.seed` (42 by default), handed to
    the strategy by `get_strategy(args)`: the note names the option and its default."""
    (tmp_path / "strategy.py").write_text("import random\n\n\ndef setup_distributed(args):\n"
                                          "    random.seed(args.train.seed)\n")
    code = ("import argparse\n\nfrom strategy import setup_distributed\n\nif __name__ == '__main__':\n"
            "    parser = argparse.ArgumentParser()\n    parser.add_argument('--train.seed', type=int, default=42)\n"
            "    setup_distributed(parser.parse_args())\n")
    _, notes = instrument_text(str(tmp_path / "train.py"), code, only("seed"))
    assert any("with the script's own seed (`--train.seed`, 42 unless given)" in note
               and note.endswith("give msprobe-instrument the same with --seed (--seed 42 for the default)")
               for note in notes), notes


def test_a_helper_seeding_only_when_a_config_value_is_not_none_is_noted_as_it_may(tmp_path):
    """mindediting's init_env(cfg) seeds only `if cfg.system.random_seed is not None` (null in most of its configs):
    the note says it may reseed, and on what."""
    (tmp_path / "init_utils.py").write_text("import random\n\n\ndef init_env(cfg):\n"
                                            "    if cfg.system.random_seed is not None:\n"
                                            "        random.seed(cfg.system.random_seed)\n")
    code = ("import sys\n\nfrom init_utils import init_env\n\nif __name__ == '__main__':\n"
            "    init_env(load(sys.argv[1]))\n")
    _, notes = instrument_text(str(tmp_path / "train.py"), code, only("seed"))
    assert any("train.py:6: `init_env(...)` may seed again after seed_all (Python's `random`), depending on "
               "`cfg.system.random_seed is not None` (init_utils.py:5)" in note and "where it does, the run" in note
               for note in notes), notes


def test_a_helper_seeding_every_generator_is_noted_without_listing_frameworks_the_script_does_not_use(tmp_path):
    """FastChat's train_mem.py: `train()` builds a Hugging Face trainer, which seeds every generator; the note says
    so instead of naming MindSpore's and DGL's."""
    (tmp_path / "trainer.py").write_text("from transformers import set_seed\n\n\ndef train(seed):\n    set_seed(seed)\n")
    code = "import sys\n\nfrom trainer import train\n\nif __name__ == '__main__':\n    train(int(sys.argv[1]))\n"
    _, notes = instrument_text(str(tmp_path / "train.py"), code, only("seed"))
    assert any("`train(...)` seeds again after seed_all (every generator)" in note for note in notes), notes


@pytest.mark.parametrize("trainer", ["from transformers import Trainer", "from trl import SFTTrainer as Trainer"])
def test_a_hugging_face_trainers_seed_is_kept_after_the_arguments_are_parsed(trainer):
    """TRL's and LLaVA's scripts: `Trainer(args=training_args)` seeds with `training_args.seed`, readable right after
    `HfArgumentParser(...).parse_args_into_dataclasses()`: seed_all goes there with it, as after `parse_args()`."""
    code = (f"import torch\nfrom transformers import HfArgumentParser, TrainingArguments\n{trainer}\n\n\n"
            "def train():\n    parser = HfArgumentParser((TrainingArguments,))\n"
            "    (training_args,) = parser.parse_args_into_dataclasses()\n    model = torch.nn.Linear(2, 2)\n"
            "    Trainer(model=model, args=training_args).train()\n\n\nif __name__ == \"__main__\":\n    train()\n")
    out, notes = instrument_text("train.py", code, only("seed"))
    assert ("(training_args,) = parser.parse_args_into_dataclasses()\n"
            "    seed_all(seed=training_args.seed, mode=False, rm_dropout=True)\n") in strip(out)
    assert not any("seeds again" in note for note in notes), notes


@pytest.mark.parametrize("submit", ["    executor.submit(Trainer(args))\n", "    submit_jobs(Trainer, args)\n"])
def test_a_submitit_job_is_seeded_where_it_runs(tmp_path, submit):
    """ConvNeXt's run_with_submitit.py and dinov2's run/train/train.py only submit a job under `__main__`; submitit
    runs `Trainer.__call__` in a fresh process: seed_all goes first there."""
    (tmp_path / "main.py").write_text("import torch\n\n\ndef main(args):\n    model = torch.nn.Linear(2, 2)\n"
                                      "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                      "    for x in torch.randn(4, 8, 2):\n        model(x).sum().backward()\n"
                                      "        opt.step()\n")
    code = ("import submitit\nimport torch\nfrom main import main as train_main, parse_args\n\n\nclass Trainer:\n"
            "    def __init__(self, args):\n        self.args = args\n\n    def __call__(self):\n"
            "        train_main(self.args)\n\n\ndef main():\n    args = parse_args()\n"
            "    executor = submitit.AutoExecutor(folder=args.job_dir)\n" + submit
            + "\n\nif __name__ == \"__main__\":\n    main()\n")
    out, notes = instrument_text(str(tmp_path / "run_with_submitit.py"), code, only("seed"))
    assert ("    def __call__(self):\n        seed_all(seed=1234, mode=False, rm_dropout=True)\n"
            "        train_main(self.args)\n") in strip(out)
    assert "if __name__ == \"__main__\":\n    main()\n" in strip(out)
    assert any("submitit runs `Trainer.__call__` in a process of its own" in note for note in notes), notes


def test_a_trainer_seeding_torch_only_is_noted_so(tmp_path):
    """trl's experimental PPOTrainer never runs `Trainer.__init__`: it seeds torch alone (`torch.manual_seed(args.seed)`),
    so NumPy and `random` keep seed_all's seed; the note says which generators it seeds again."""
    code = ("import torch\nfrom trl.experimental.ppo import PPOTrainer\n\n\nif __name__ == \"__main__\":\n"
            "    PPOTrainer(args=make_args(), model=torch.nn.Linear(2, 2)).train()\n")
    _, notes = instrument_text(str(tmp_path / "ppo.py"), code, only("seed"))
    note = next(note for note in notes if "seeds again" in note)
    assert "(torch's global generator and torch's accelerator generators)" in note, note


def test_a_seed_openmmlab_draws_for_none_keeps_a_seed_given():
    """InternImage: `init_random_seed(args.seed)` draws from unseeded NumPy when `--seed` is not given; it is given
    the fixed seed for None, and seed_all takes the seed it returns (`args.seed + rank` here)."""
    code = ("import argparse\n\nimport torch.distributed as dist\nfrom mmseg.apis import init_random_seed, set_random_seed\n\n"
            "parser = argparse.ArgumentParser()\nparser.add_argument('--seed', type=int, default=None)\n"
            "args = parser.parse_args()\n\nif __name__ == '__main__':\n"
            "    seed = init_random_seed(args.seed, device='cuda')\n    seed = seed + dist.get_rank()\n"
            "    set_random_seed(seed, deterministic=False)\n")
    assert ("    seed = init_random_seed(args.seed if args.seed is not None else 7, device='cuda')\n"
            "    seed = seed + dist.get_rank()\n    seed_all(seed=seed, ") in fix(code, "seed", seed=7)

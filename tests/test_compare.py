"""msprobe-compare end to end on real dumps of a small model written by our runtime, and its CLI."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys

import pytest
from compare_support import dump_run, line_of
from msprobe_runtime import compare, compare_distributed
from msprobe_runtime.core.compare import CompareError


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Dump roots (2 steps, hashes) of the base run, a second base run and each injected change."""
    root = tmp_path_factory.mktemp("runs")
    names = ("base", "base-again", "gelu-tanh", "extra-call", "dropout-seed")
    return {name: dump_run(root / name, name.replace("-again", ""), steps=2, summary_mode="hash") for name in names}


def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "msprobe_runtime.compare_cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def read_rows(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_identical_runs_have_no_divergence(runs, tmp_path):
    result = compare(runs["base-again"], runs["base"], tmp_path)
    assert result.exit_code == 0 and result.first is None
    assert [summary.pair.label for summary in result.pairs] == ["step0/rank0", "step1/rank0"]
    rows = read_rows(tmp_path / "compare_result_step0_rank0.csv")
    assert rows and {row["Result"] for row in rows} == {"pass"}
    assert rows[0]["NPU hash"] == rows[0]["Bench hash"]


def test_a_changed_argument_is_the_first_difference_at_its_line(runs, tmp_path):
    result = compare(runs["gelu-tanh"], runs["base"], tmp_path)
    found = result.first.divergence
    assert result.exit_code == 1 and result.first.pair.label == "step0/rank0"
    assert found.call.name == "Functional.gelu.0.forward" and found.call.argument_differs
    assert found.call.source.line == line_of("changed argument")
    assert found.call.source.file.endswith("compare_support.py")
    assert [call.name for call in found.previous][-1] == "Functional.linear.0.forward"


def test_a_call_with_equal_inputs_and_different_outputs_is_the_divergence(runs, tmp_path):
    found = compare(runs["dropout-seed"], runs["base"], tmp_path).first.divergence
    assert found.kind == "divergence" and found.call.name == "Functional.dropout.0.forward"
    assert found.call.status == "differs" and found.call.source.line == line_of("dropout")
    assert found.call.rows == ["Functional.dropout.0.forward.output.0"]


@pytest.mark.parametrize("fuzzy", [False, True])
def test_an_extra_call_is_reported_where_it_happens(runs, tmp_path, fuzzy):
    found = compare(runs["extra-call"], runs["base"], tmp_path, fuzzy_match=fuzzy).first.divergence
    assert found.call.name == "Tensor.__mul__.0.forward" and found.call.status == "only in target"
    assert found.call.source.line == line_of("extra call")
    reverse = compare(runs["base"], runs["extra-call"], tmp_path, fuzzy_match=fuzzy).first.divergence
    assert "Tensor.__mul__.0.forward" in reverse.golden_only_before


def test_statistics_mode_without_hashes_also_finds_it(tmp_path):
    base = dump_run(tmp_path / "a", "base")
    changed = dump_run(tmp_path / "b", "dropout-seed")
    found = compare(changed, base, tmp_path / "out").first.divergence
    assert found.call.name == "Functional.dropout.0.forward"
    rows = read_rows(tmp_path / "out" / "compare_result_step0_rank0.csv")
    assert "NPU hash" not in rows[0] and rows[0]["Max diff"] == "0"


def test_tensor_mode_reads_our_npy_files(tmp_path):
    base = dump_run(tmp_path / "a", "base", task="tensor")
    changed = dump_run(tmp_path / "b", "dropout-seed", task="tensor")
    result = compare(changed, base, tmp_path / "out")
    assert result.pairs[0].mode == "tensor"
    assert result.first.divergence.call.name == "Functional.dropout.0.forward"
    rows = {row["NPU Name"]: row for row in read_rows(tmp_path / "out" / "compare_result_step0_rank0.csv")}
    linear = rows["Functional.linear.0.forward.output.0"]
    assert linear["Cosine"] == "1.0" and linear["MaxAbsErr"] == "0.0" and ".npy" in linear["Data_name"]
    assert float(rows["Functional.dropout.0.forward.output.0"]["MaxAbsErr"]) > 0


def test_tensor_rows_without_a_readable_file_are_counted_and_said(tmp_path):
    """A missing .npy is not silent: the row is compared by its statistics, and the summary says how many."""
    base = dump_run(tmp_path / "a", "base", task="tensor")
    again = dump_run(tmp_path / "b", "base", task="tensor")
    next((again / "step0" / "rank0" / "dump_tensor_data").glob("Functional.linear.0.forward.output*.npy")).unlink()
    done = cli(again, base, "-o", tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  1 tensor rows had no readable data file and were compared by their statistics" in done.stdout
    rows = {row["NPU Name"]: row for row in read_rows(tmp_path / "out" / "compare_result_step0_rank0.csv")}
    assert "Dump file not readable" in rows["Functional.linear.0.forward.output.0"]["Err_message"]


def test_mix_level_pairs_modules_and_parameter_gradients(tmp_path):
    base = dump_run(tmp_path / "a", "base", level="mix", summary_mode="hash")
    changed = dump_run(tmp_path / "b", "dropout-seed", level="mix", summary_mode="hash")
    result = compare(changed, base, tmp_path / "out")
    assert result.first.divergence.call.name == "Functional.dropout.0.forward"
    names = [row["NPU Name"] for row in read_rows(result.first.output)]
    assert "Module.fc1.Linear.parameters_grad.0.weight" in names
    assert "Module.fc1.Linear.forward.0.parameters.weight" in names


@pytest.mark.parametrize("covered", [True, False])
def test_old_content_an_in_place_call_overwrites_is_no_difference(tmp_path, covered):
    """`torch.empty_like(p).scatter_(0, p, ...)` (pack_padded_sequence inverting a permutation) reads memory
    never initialised, different in every run: when the call writes all of it, its result agrees and the
    runs do too; when it leaves some, the old content shows in the result and is reported."""
    import torch
    from msprobe_runtime.pytorch import PrecisionDebugger

    dumps = []
    for old in (1.0, 2.0):
        dumps.append(tmp_path / str(old))
        debugger = PrecisionDebugger(task="statistics", dump_path=str(dumps[-1]), level="L1")
        with debugger.start():
            destination = torch.tensor([old] * 3)  # not recorded, as torch.empty_like is not
            index = torch.arange(3).flip(0) if covered else torch.zeros(3, dtype=torch.long)
            destination.scatter_(0, index, torch.arange(3.0)).sum()
        debugger.close()
    found = compare(dumps[1], dumps[0], tmp_path / "out").first
    if covered:
        assert found is None
    else:
        assert (found.divergence.kind, found.divergence.call.name) == ("difference", "Tensor.scatter_.0.forward")


def test_mix_names_the_changed_call_inside_a_module_not_the_module(tmp_path):
    """A setting the module's forward reads (not an argument of the module): its record's inputs agree
    and its outputs differ, but the call inside it whose argument changed is where the runs part."""
    import torch
    from msprobe_runtime.pytorch import PrecisionDebugger

    class Block(torch.nn.Module):
        def __init__(self, approximate: str):
            super().__init__()
            self.fc, self.approximate = torch.nn.Linear(4, 4), approximate

        def forward(self, x):
            return torch.nn.functional.gelu(self.fc(x), approximate=self.approximate)

    dumps = []
    for approximate in ("none", "tanh"):
        torch.manual_seed(0)
        model = torch.nn.Sequential(Block(approximate))
        dumps.append(tmp_path / approximate)
        debugger = PrecisionDebugger(task="statistics", dump_path=str(dumps[-1]), level="mix")
        with debugger.start(model):
            model(torch.randn(2, 4)).sum().backward()
        debugger.close()
    found = compare(dumps[1], dumps[0], tmp_path / "out").first
    assert (found.divergence.kind, found.divergence.call.name) == ("difference", "Functional.gelu.0.forward")


def test_a_module_called_twice_is_not_blamed_for_its_summed_gradient(tmp_path):
    """A module run twice in one backward pass (a Siamese tower, CycleGAN's generator): its parameters_grad.0
    sums the gradients of both calls. When only the second call's gradient differs (a loss weight changed),
    the weight's multiplication is named, not the parameter gradient."""
    import torch
    from msprobe_runtime.pytorch import PrecisionDebugger

    dumps = []
    for weight in (2.0, 3.0):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 4))
        a, b = torch.randn(2, 4), torch.randn(2, 4)
        dumps.append(tmp_path / str(weight))
        debugger = PrecisionDebugger(task="statistics", dump_path=str(dumps[-1]), level="mix")
        with debugger.start(model):
            (model(a).sum() + weight * model(b).sum()).backward()
        debugger.close()
    found = compare(dumps[1], dumps[0], tmp_path / "out").first
    assert found.divergence.call.name == "Tensor.__rmul__.0.forward"


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "html"])
def test_report_formats(runs, tmp_path, fmt):
    result = compare(runs["dropout-seed"], runs["base"], tmp_path, fmt=fmt)
    output = result.pairs[0].output
    assert output.suffix == f".{fmt}" and output.stat().st_size > 0
    if fmt == "xlsx":
        from openpyxl import load_workbook

        sheet = load_workbook(output, read_only=True).active
        header = next(sheet.iter_rows(max_row=1, values_only=True))
        assert header[:2] == ("NPU Name", "Bench Name") and "Result" in header
    if fmt == "html":
        page = output.read_text()
        assert "data:image/png;base64," in page and "Functional.dropout.0.forward" in page
        assert "<script" not in page and "http" not in page.split("<body>")[1].split("data:image")[0]


def test_dump_json_files_and_step_folders_pair_too(runs, tmp_path):
    target = runs["dropout-seed"] / "step1" / "rank0"
    golden = runs["base"] / "step1" / "rank0"
    assert compare(target / "dump.json", golden / "dump.json", tmp_path).pairs[0].output.name == "compare_result.csv"
    assert compare(target, golden / "dump.json", tmp_path).exit_code == 1
    assert compare_distributed(target.parent, golden.parent, tmp_path).pairs[0].pair.rank == 0


def test_ranks_pair_by_number_and_rank_filters(runs, tmp_path):
    roots = {}
    for name in ("base", "dropout-seed"):
        root = tmp_path / name
        for step in ("step0", "step1"):
            for rank in (0, 1):
                shutil.copytree(runs[name] / step / "rank0", root / step / f"rank{rank}")
        roots[name] = root
    result = compare(roots["dropout-seed"], roots["base"], tmp_path / "out")
    assert [s.pair.label for s in result.pairs] == ["step0/rank0", "step0/rank1", "step1/rank0", "step1/rank1"]
    assert [s.pair.label for s in compare(roots["dropout-seed"], roots["base"], tmp_path / "o", rank=1).pairs] == \
        ["step0/rank1", "step1/rank1"]
    shutil.rmtree(roots["base"] / "step1" / "rank1")
    with pytest.raises(CompareError, match="ranks do not pair"):
        compare(roots["dropout-seed"], roots["base"], tmp_path / "out")
    shutil.rmtree(roots["base"] / "step1")
    with pytest.raises(CompareError, match="steps do not pair.*step0, step1.*step0"):
        compare(roots["dropout-seed"], roots["base"], tmp_path / "out")


def test_cli_first_line_is_the_divergence_and_exit_codes(runs, tmp_path):
    done = cli(runs["dropout-seed"], runs["base"], "-o", tmp_path, "--format", "html")
    assert done.returncode == 1, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("first divergence (step0/rank0): Functional.dropout.0.forward at ")
    assert first.endswith(f"compare_support.py:{line_of('dropout')}")
    assert "calls before it:" in done.stdout and (tmp_path / "compare_report_step0_rank0.html").is_file()
    same = cli(runs["base-again"], runs["base"], "-o", tmp_path)
    assert same.returncode == 0 and same.stdout.startswith("no divergence")


def test_cli_bad_inputs_give_one_line_and_exit_2(runs, tmp_path):
    truncated = tmp_path / "truncated.json"
    truncated.write_text((runs["base"] / "step0" / "rank0" / "dump.json").read_text()[:500])
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"task": "statistics", "data": {}}))
    not_json = tmp_path / "not.json"
    not_json.write_text("garbage")
    golden = runs["base"] / "step0" / "rank0" / "dump.json"
    cases = {
        (tmp_path / "missing", golden): "TARGET '.*missing' does not exist",
        (truncated, golden): "not a valid dump.json: the file ends before its JSON does",
        (empty, golden): "empty dump",
        (not_json, golden): "not a valid dump.json",
        (runs["base"], runs["base"] / "step0"): "dump folder but GOLDEN .* is a step folder",
        (tmp_path, golden): "holds no dump",
    }
    for (target, golden_path), message in cases.items():
        done = cli(target, golden_path, "-o", tmp_path / "out")
        assert done.returncode == 2, (message, done.stdout)
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert done.stderr.startswith("msprobe-compare: error: ")
        assert re.search(message, done.stderr), done.stderr
    assert cli(runs["base"], runs["base"], "--format", "pdf").returncode == 2
    assert cli(runs["base"], runs["base"], "--rank", "3").returncode == 2

"""Findings in evaluation-only code (files, functions, loaders named for evaluation) drop to info."""

from __future__ import annotations

import pytest
from msprobe_rewriter.lint.engine import lint_source
from msprobe_rewriter.rules import ALL_RULES

LOADER = "from torch.utils.data import DataLoader\n\n{target} = DataLoader(data, shuffle=True)\n"


def severities(path: str, source: str) -> set[str]:
    return {f.severity for f in lint_source(path, source.encode(), ALL_RULES).findings if f.code == "MSP301"}


@pytest.mark.parametrize("path", ["eval_linear.py", "test.py", "validate.py", "evaluation_utils.py", "infer.py", "predict.py",
                                  # mindrlhf's reward scripts, open_clip's zero-shot evaluation, a model zoo's export
                                  # script, unit tests (also of training code)
                                  "reward_eval.py", "reward_infer.py", "genlip_zeroshot.py", "zero_shot.py",
                                  "export.py", "onnx_export.py", "utils_test.py", "test_train.py"])
def test_files_named_for_evaluation_are_info(path):
    assert severities(path, LOADER.format(target="loader")) == {"info"}


@pytest.mark.parametrize(("importer", "target", "expected"), [("main", "train_data, test_data", "warning"),
                                                               ("main", "memory, test_data", "info"),
                                                               ("eval_image_retrieval", "train_features", "info")])
def test_a_file_named_for_testing_that_builds_training_data_keeps_its_severity(tmp_path, importer, target, expected):
    """MoCo's main.py does `train_data, memory_data, test_data = create_dataset(args.dataset)` with
    `create_dataset` from dataset_test.py: its loaders feed the training run. dino's eval_image_retrieval.py names
    the features of the training split it evaluates on `train_features`: that is no training run."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    data = tmp_path / "dataset_test.py"
    data.write_text("from torch.utils.data import DataLoader\n\n\ndef create_dataset(data):\n"
                    "    return DataLoader(data, shuffle=True), DataLoader(data)\n")
    (tmp_path / f"{importer}.py").write_text(f"from dataset_test import create_dataset\n\n"
                                             f"{target} = create_dataset(rows)\n")
    assert severities(str(data), data.read_text()) == {expected}


@pytest.mark.parametrize(("importer", "expected"), [("utils/callbacks.py", "info"), ("loss/lpips_loss.py", "warning")])
def test_a_metrics_package_is_evaluation_code_unless_a_loss_imports_it(tmp_path, importer, expected):
    """mindediting's metrics/lpips.py builds a network that only scores predictions; a loss importing a metric's
    file trains against it."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    metric = tmp_path / "metrics" / "lpips.py"
    metric.parent.mkdir()
    metric.write_text(LOADER.format(target="loader"))
    (tmp_path / importer).parent.mkdir()
    (tmp_path / importer).write_text("from metrics.lpips import loader\n")
    assert severities(str(metric), metric.read_text()) == {expected}


@pytest.mark.parametrize(("target", "expected"), [("test_dataset", "info"), ("train_dataset", "warning")])
def test_a_dataset_named_at_the_end_of_a_method_chain(target, expected):
    """MindSpore-GAN's context_encoder.py: `test_dataset = CelebADataset(..., shuffle=True).map(...).batch(12)`, read
    only to save sample images."""
    code = (f"import mindspore.dataset as ds\n\n{target} = ds.CelebADataset('data', shuffle=True)"
            ".map(operations=[f], input_columns=['image']).batch(12)\n")
    assert severities("context_encoder.py", code) == {expected}


@pytest.mark.parametrize("path", ["train.py", "train_eval.py", "latest.py", "inferno.py", "evaluate_and_train.py",
                                  "lora_finetune_eval.py", "multi_token_prediction.py", "export_dataset.py",
                                  "retest_losses.py",
                                  # InternImage's training config named for the split it evaluates on
                                  "dino_4scale_cbinternimage_h_objects365_lvis_val_ss.py"])
def test_training_files_keep_their_severity(path):
    assert severities(path, LOADER.format(target="loader")) == {"warning"}


@pytest.mark.parametrize("target", ["val_loader", "test_loader", "eval_dl", "valid_loader", "valid_set"])
def test_loaders_named_for_evaluation_are_info(target):
    assert severities("train.py", LOADER.format(target=target)) == {"info"}


@pytest.mark.parametrize("target", ["valid_inds", "valid_mask"])
def test_valid_as_an_adjective_is_not_evaluation(target):
    """mmyolo's copy-paste augmentation picks `valid_inds` at random: "valid" means allowed there."""
    assert severities("train.py", LOADER.format(target=target)) == {"warning"}


def test_functions_named_for_evaluation_are_info():
    source = "from torch.utils.data import DataLoader\n\n\ndef evaluate(data):\n    return DataLoader(data, shuffle=True)\n"
    assert severities("train.py", source) == {"info"}


@pytest.mark.parametrize("name", ["train_eval", "train_and_evaluate", "fit_and_test"])
def test_functions_that_also_train_keep_their_severity(name):
    source = f"from torch.utils.data import DataLoader\n\n\ndef {name}(data):\n    return DataLoader(data, shuffle=True)\n"
    assert severities("train.py", source) == {"warning"}


@pytest.mark.parametrize(("name", "severity"), [("is_valid_field", "warning"), ("check_valid_boxes", "warning"),
                                               ("valid_mask", "warning"), ("valid_epoch", "info"), ("valid", "info")])
def test_functions_testing_what_is_valid_are_not_evaluation(name, severity):
    """audiocraft's `is_valid_field` drops text fields at random in a training dataset: "valid" means allowed."""
    source = f"from torch.utils.data import DataLoader\n\n\ndef {name}(data):\n    return DataLoader(data, shuffle=True)\n"
    assert severities("train.py", source) == {severity}


def test_a_script_training_in_train_eval_needs_seeding():
    """mindspore models PL_FGSA: the training loop is in `train_eval`, and nothing seeds."""
    source = ("from mindspore import nn\n\n\ndef train_eval(data):\n    model = nn.Dense(4, 2)\n"
              "    optim = nn.Adam(model.trainable_params(), learning_rate=1e-3)\n"
              "    net = nn.TrainOneStepCell(nn.WithLossCell(model, nn.MSELoss()), optim)\n"
              "    for x, y in data:\n        net(x, y)\n\n\nif __name__ == \"__main__\":\n    train_eval([])\n")
    findings = lint_source("train.py", source.encode(), ALL_RULES).findings
    assert [f.code for f in findings if f.code == "MSP101"] == ["MSP101"]

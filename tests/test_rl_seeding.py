"""Reinforcement learning: Stable-Baselines3 algorithms train through `learn()` and seed through `seed=`; gymnasium
envs and action spaces have generators of their own (seed-missing, seed-partial)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from msprobe_rewriter.instrument import Options, instrument_text, undo_source_text
from msprobe_rewriter.instrument.markers import strip
from msprobe_rewriter.instrument.transforms import select
from project_helpers import lint, lint_findings, write

SEEDS_TORCH = "import torch\n\nif __name__ == '__main__':\n    torch.manual_seed(0)\n"


def script(tmp_path: Path, text: str) -> Path:
    return write(tmp_path, {"train.py": text}) / "train.py"


@pytest.mark.parametrize("imports, build", [
    ("from stable_baselines3 import PPO", "PPO('MlpPolicy', 'CartPole-v1')"),
    ("from stable_baselines3.ppo.ppo import PPO", "PPO('MlpPolicy', 'CartPole-v1', seed=None)"),
    ("import sb3_contrib", "sb3_contrib.QRDQN('MlpPolicy', 'CartPole-v1')"),
])
def test_an_algorithm_built_without_a_seed_trains_unseeded(tmp_path, imports, build):
    path = script(tmp_path, f"{imports}\n\nif __name__ == '__main__':\n    model = {build}\n    model.learn(100)\n")
    [finding] = lint_findings(path, "seed-missing")
    assert "pass `seed=seed` to" in finding.message


@pytest.mark.parametrize("text", [
    "from stable_baselines3 import PPO\n\nif __name__ == '__main__':\n    PPO('MlpPolicy', 'CartPole-v1', seed=3).learn(100)\n",
    # a restored model keeps the seed it was saved with, which the file does not show; building alone trains nothing
    "from stable_baselines3 import PPO\n\nif __name__ == '__main__':\n    PPO.load('ppo.zip').learn(100)\n",
    "from stable_baselines3 import PPO\n\nif __name__ == '__main__':\n    model = PPO('MlpPolicy', 'CartPole-v1')\n",
])
def test_a_seeded_restored_or_untrained_algorithm_is_no_unseeded_training(tmp_path, text):
    assert lint(script(tmp_path, text), "seed-missing") == []


@pytest.mark.parametrize("extra, numpy", [("", True), ("    np.random.seed(0)\n", False)])
def test_an_unseeded_algorithm_beside_other_seeding_is_partial(tmp_path, extra, numpy):
    text = ("import numpy as np\nfrom stable_baselines3 import DQN\n" + SEEDS_TORCH + extra
            + "    DQN('MlpPolicy', 'CartPole-v1').learn(100)\n")
    [finding] = lint_findings(script(tmp_path, text), "seed-partial")
    assert finding.line == 7 + bool(extra)
    assert ("NumPy's global generator, which this file leaves unseeded" in finding.message) is numpy


@pytest.mark.parametrize("loop, expected", [
    ("env.reset(seed=0)\n    for _ in range(9):\n        env.reset()\n", []),
    ("env.seed(0)\n    env.reset()\n", []),  # gym < 0.26
    ("env.reset(seed=None)\n", [7]),
    ("env.action_space.seed(0)\n    env.reset(seed=0)\n    env.action_space.sample()\n", []),
    ("env.reset(seed=0)\n    env.action_space.sample()\n", [8]),
    # cleanrl's isaacgym script: the env is made with a seed, then wrapped
    ("env = isaacgymenvs.make(seed=1)\n    env = gym.wrappers.RecordVideo(env, 'v')\n    env.reset()\n", []),
])
def test_gymnasium_env_and_action_space_seeding(tmp_path, loop, expected):
    text = "import gymnasium as gym\n" + SEEDS_TORCH + "    env = gym.make('CartPole-v1')\n    " + loop
    assert [line for _, line in lint(script(tmp_path, text), "seed-partial")] == expected


def test_an_env_the_file_does_not_build_from_gymnasium_is_not_judged(tmp_path):
    text = SEEDS_TORCH + "    from envs import make_env\n    env = make_env()\n    env.reset()\n"
    assert lint(script(tmp_path, text), "seed-partial") == []


def instrumented(text: str) -> tuple[str, list[str]]:
    """The seed transform's output (markers left out) and its notes."""
    out, notes = instrument_text("/project/train.py", text, replace(Options(), selected=select(("seed",), [])))[:2]
    assert undo_source_text(out) == text
    return strip(out), notes


def test_the_instrument_keeps_a_seed_option_that_is_none_by_default():
    text = ("import argparse\nfrom stable_baselines3 import DQN\n\nif __name__ == '__main__':\n"
            "    parser = argparse.ArgumentParser()\n    parser.add_argument('--seed', type=int, default=None)\n"
            "    args = parser.parse_args()\n    DQN('MlpPolicy', 'CartPole-v1', seed=args.seed).learn(100)\n")
    out, _ = instrumented(text)
    assert "DQN('MlpPolicy', 'CartPole-v1', seed=args.seed if args.seed is not None else 1234).learn(100)" in out


def test_the_instrument_leaves_a_mapping_and_notes_the_action_space():
    text = ("import gymnasium as gym\nfrom stable_baselines3 import SAC\n\nif __name__ == '__main__':\n"
            "    env = gym.make('Pendulum-v1')\n    env.reset(seed=3)\n    env.action_space.sample()\n"
            "    SAC(**hyperparams).learn(100)\n")
    out, notes = instrumented(text)
    assert "SAC(**hyperparams)" in out and "env.reset(seed=3)" in out
    assert any("call `env.action_space.seed(1234)` once at the start" in note for note in notes)


def test_device_rng_examples_use_the_files_name_for_torch(tmp_path):
    """Stable-Baselines3 imports torch as `th` (td3.py's target policy noise): the suggested code must say `th.`."""
    text = ("import torch as th\n\n\ndef noise(actions, scale):\n    actions = actions.cuda()\n"
            "    return actions.clone().normal_(0, scale), th.nn.init.normal_(actions)\n")
    findings = lint_findings(script(tmp_path, text), "device-rng")
    assert len(findings) == 2 and all("th.empty(" in f.message and "torch." not in f.message for f in findings)


def test_with_gym_the_reset_is_noted_not_rewritten():
    """gym before 0.26 takes no `reset(seed=)` (cleanrl's procgen scripts): which gym runs is not known."""
    text = ("import gym\nimport torch\n\nif __name__ == '__main__':\n    torch.manual_seed(0)\n"
            "    envs = gym.wrappers.RecordEpisodeStatistics(make())\n    obs = envs.reset()\n")
    out, notes = instrumented(text)
    assert "obs = envs.reset()\n" in out
    assert any("before gym 0.26: `envs.seed(0)`" in note for note in notes)

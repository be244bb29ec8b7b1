"""The product's knowledge as data: what draws random numbers, shuffles, drops out, and how to fix it.

Detection (lint rules) and rewriting (codemods) both read these tables, so teaching the tool about a
new API is one line here. Names are fully qualified, as `ImportTracker.resolve` produces them.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# --- seeding ---------------------------------------------------------------------------------
# Generator family -> calls that seed it. MindSpore 2.10 (mindspore/common/seed.py,
# mindspore/dataset/core/config.py, mindspore/common/generator.py) has three separate states:
#   - `mindspore.set_seed(s)` seeds NumPy, calls `mindspore.dataset.config.set_seed(s)` and resets the
#     operator seeds: it seeds `random`, NumPy, the data pipeline and the random operators. (Older docs
#     and issue 2 say it leaves `random` alone: no longer true, `dataset.config.set_seed` seeds it.)
#   - `mindspore.dataset.config.set_seed(s)` seeds the pipeline, `random` and NumPy, NOT the operators.
#   - `mindspore.manual_seed(s)` seeds only the default generator that `mint` draws use; neither
#     `set_seed` touches it (unseeded, it starts from seed 0 whatever the script's seed is).
# `mindspore.common.initializer` seeds its draws from `np.random`, so NumPy's seed pins initial weights.
_MS_SET_SEED = frozenset({"mindspore.set_seed", "mindspore.common.set_seed", "mindspore.common.seed.set_seed"})
_MS_DATASET_SEED = frozenset({"mindspore.dataset.config.set_seed", "mindspore.dataset.core.config.set_seed",
                              "mindspore.dataset.set_seed"})  # the same function, re-exported
_TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed", "lightning.seed_everything",
                          "pytorch_lightning.seed_everything", "lightning.pytorch.seed_everything", "transformers.set_seed",
                          "accelerate.utils.set_seed", "transformers.enable_full_determinism",
                          "diffusers.training_utils.set_seed"})
_ACCELERATOR_SEEDS = frozenset({
    *(f"{module}.{name}" for module in ("torch.cuda", "torch.cuda.random", "torch.npu", "torch_npu.npu", "torch.xpu")
      for name in ("manual_seed", "manual_seed_all")),
    "torch.mps.manual_seed",
    # Megatron's: the CUDA generator and its tensor-parallel RNG tracker, not the CPU generator
    "megatron.core.tensor_parallel.model_parallel_cuda_manual_seed",
    "megatron.core.tensor_parallel.random.model_parallel_cuda_manual_seed",
})
SEED_CALLS: dict[str, frozenset[str]] = {
    "random": frozenset({"random.seed"}) | _MS_SET_SEED | _MS_DATASET_SEED,
    "numpy": frozenset({"numpy.random.seed"}) | _MS_SET_SEED | _MS_DATASET_SEED,
    "torch": _TORCH_SEEDS,
    # The accelerators' generators (CUDA, NPU, XPU, MPS): `torch.manual_seed` seeds them with the CPU one, the
    # device seeders seed them alone.
    "torch-accelerator": _TORCH_SEEDS | _ACCELERATOR_SEEDS,
    "mindspore": _MS_SET_SEED,  # the random operators (`ops.standard_normal`, `nn.Dropout`, ...)
    "mindspore-generator": frozenset({"mindspore.manual_seed", "mindspore.common.manual_seed",
                                      "mindspore.common.generator.manual_seed"}),  # `mint` draws
    "mindspore-dataset": _MS_SET_SEED | _MS_DATASET_SEED,
    "dgl": frozenset({"dgl.seed", "dgl.random.seed"}),  # DGL's C++ generator, which its samplers draw from
}
# Generator state getters and setters, by the family they save or put back: code that saves a state and puts it
# back (`state = torch.get_rng_state()` ... `torch.set_rng_state(state)`, sd-scripts' sample_images_common around
# the seeds of its sample prompts) leaves no seeding of that family behind. A state loaded from a checkpoint is not
# such a pair.
RNG_STATE_GETTERS: dict[str, str] = {
    **dict.fromkeys(("torch.get_rng_state", "torch.random.get_rng_state"), "torch"),
    **dict.fromkeys((f"torch.{device}.{module}get_rng_state{suffix}" for device in ("cuda", "npu", "xpu")
                     for module in ("", "random.") for suffix in ("", "_all")), "torch-accelerator"),
    "random.getstate": "random", "numpy.random.get_state": "numpy",
}
RNG_STATE_SETTERS: dict[str, str] = {
    name.replace("get_rng_state", "set_rng_state").replace("getstate", "setstate").replace("get_state", "set_state"):
        family for name, family in RNG_STATE_GETTERS.items()}
# `with torch.random.fork_rng():` puts torch's generators (the CPU one and the devices') back when its block ends.
RNG_FORKS = frozenset({"torch.random.fork_rng"})
# Packages whose import makes `torch` mindtorch, a torch API that runs on MindSpore (mindnlp imports it, and
# its patched transformers and TRL then train mindtorch modules): such a script runs MindSpore, not PyTorch.
TORCH_ON_MINDSPORE = ("mindnlp", "mindtorch")
# mindtorch's torch API, also under its former name `mindnlp.core` (mindnlp before 0.5 moved it out: its examples
# still import `from mindnlp.core.optim import AdamW` and `from mindnlp.core import value_and_grad`). Not known roots:
# resolved from any import.
TORCH_API_ON_MINDSPORE = ("mindtorch", "mindnlp.core")
TORCH_API_ON_MINDSPORE_PREFIXES = tuple(f"{root}." for root in TORCH_API_ON_MINDSPORE)
# MindSpore's model suites: a script may import one of them and never mindspore itself (mindformers' run_mindformer.py).
MINDSPORE_SUITES = ("mindformers", "mindcv", "mindyolo", "mindocr", "mindone", "mindaudio")
# mindformers' Trainer: it trains through MindSpore's Model.train and takes MindSpore callbacks in `callbacks=`.
MINDFORMERS_TRAINERS = frozenset({"mindformers.Trainer", "mindformers.trainer.Trainer",
                                  "mindformers.trainer.trainer.Trainer"})
# MindSpore Reinforcement (mindspore_rl): `Session(config).run(class_type=DQNTrainer, episode=n)` builds the trainer
# and runs its `train(episodes, callbacks, ckpt_path)` unless given `is_train=False` (mindspore_rl/core/session.py); a
# Trainer's `train(...)` runs the episodes. Nothing on the way seeds (initialisers, exploration and replay buffers draw
# from the global generators); examples subclass both (`class DQNSession(Session)`): method -> the classes it trains.
MINDSPORE_RL_RUNS = {
    "run": frozenset({"mindspore_rl.core.Session", "mindspore_rl.core.session.Session"}),
    "train": frozenset({"mindspore_rl.agent.Trainer", "mindspore_rl.agent.trainer.Trainer"}),
}
MINDSPORE_RL_EVAL_SWITCH = "is_train"  # `session.run(class_type=..., is_train=False)` evaluates
# TRL's trainers and configs subclass transformers' Trainer and TrainingArguments (trl/trainer/base_trainer.py,
# base_config.py); its diffusion trainers (DDPO, AlignProp) do not.
_TRL_PEFT = ("SFT", "DPO", "GRPO", "KTO", "Reward", "RLOO", "BCO", "CPO", "GKD", "IterativeSFT", "NashMD",
             "OnlineDPO", "ORPO", "PPO", "PRM", "XPO")
# trl.experimental's others (2026): each subclasses TRL's `_BaseTrainer` (transformers' Trainer) or one above.
_TRL = (*_TRL_PEFT, "AsyncGRPO", "Distillation", "GMPO", "GOLD", "GRPOWithReplayBuffer", "IWOPD", "MiniLLM",
        "SDFT", "SDPO", "ServerDistillation", "SSD", "TPO")
HF_TRAINERS = frozenset({"transformers.Trainer", "transformers.trainer.Trainer", "transformers.Seq2SeqTrainer",
                         "transformers.trainer_seq2seq.Seq2SeqTrainer", *(f"trl.{n}Trainer" for n in _TRL)})
# Lightning's Trainer, under every name its packages export it by (`from pytorch_lightning.trainer import Trainer`:
# latent and stable diffusion), and what builds one: the class, or Lightning 1.x's
# `Trainer.from_argparse_args(args, **kwargs)` (the keywords override the parsed arguments).
LIGHTNING_TRAINERS = frozenset(f"{package}.Trainer" for package in (
    "lightning", "lightning.pytorch", "lightning.pytorch.trainer", "lightning.pytorch.trainer.trainer",
    "pytorch_lightning", "pytorch_lightning.trainer", "pytorch_lightning.trainer.trainer"))
LIGHTNING_TRAINER_BUILDS = LIGHTNING_TRAINERS | {f"{trainer}.from_argparse_args" for trainer in LIGHTNING_TRAINERS}
LIGHTNING_CLI = frozenset({"lightning.pytorch.cli.LightningCLI", "pytorch_lightning.cli.LightningCLI",
                           "pytorch_lightning.utilities.cli.LightningCLI"})
# MosaicML Composer's Trainer (composer/trainer/trainer.py, 2026), keyword-only: `Trainer(*, model, ..., seed=None,
# deterministic_mode=False, ...)` calls `reproducibility.seed_all(seed)` (random, NumPy, torch, CUDA) when built, with
# a seed drawn from the clock (`get_random_seed()`: `time.time_ns()`) for None, and with `deterministic_mode=True`
# `configure_deterministic_mode()` (`torch.use_deterministic_algorithms(True)`, cuDNN's flag, CUBLAS_WORKSPACE_CONFIG);
# `trainer.fit()` trains (llm-foundry's train.py).
COMPOSER_TRAINERS = frozenset({"composer.Trainer", "composer.trainer.Trainer", "composer.trainer.trainer.Trainer"})
COMPOSER_DETERMINISTIC_KEYWORD = "deterministic_mode"
# Stable-Baselines3's algorithms and sb3_contrib's (not a known root: resolved from any import). Built, each runs
# `_setup_model()`, whose `set_random_seed(self.seed)` returns at once for `seed=None` (the default) and otherwise
# seeds `random`, NumPy and torch (`th.manual_seed`, the accelerators with it; cuDNN's deterministic flag on a CUDA
# device), the action space (`action_space.seed`) and the env (`env.seed`) (common/base_class.py); `model.learn(...)`
# trains, drawing from NumPy's global generator (replay sampling, PPO's minibatch order, epsilon-greedy, action
# noise: buffers.py, dqn.py, noise.py), the action space's and the env's. `PPO.load(...)` restores a saved seed.
SB3_ALGORITHMS = frozenset(
    {f"stable_baselines3.{name}" for name in ("A2C", "DDPG", "DQN", "PPO", "SAC", "TD3")}
    | {f"stable_baselines3.{name.lower()}.{name}" for name in ("A2C", "DDPG", "DQN", "PPO", "SAC", "TD3")}
    | {f"stable_baselines3.{name.lower()}.{name.lower()}.{name}" for name in ("A2C", "DDPG", "DQN", "PPO", "SAC", "TD3")}
    | {f"sb3_contrib.{name}" for name in ("ARS", "CrossQ", "MaskablePPO", "QRDQN", "RecurrentPPO", "TQC", "TRPO")}
    | {f"sb3_contrib.{module}.{name}" for module, name in (
        ("ars", "ARS"), ("crossq", "CrossQ"), ("ppo_mask", "MaskablePPO"), ("qrdqn", "QRDQN"),
        ("ppo_recurrent", "RecurrentPPO"), ("tqc", "TQC"), ("trpo", "TRPO"))})
SB3_LEARN = "learn"
# Its `set_random_seed(seed, using_cuda=False)` seeds `random`, NumPy and torch, not an env or an action space.
SB3_SET_RANDOM_SEED = frozenset({"stable_baselines3.common.utils.set_random_seed"})
SB3_SEEDED_FAMILIES = frozenset({"random", "numpy", "torch", "torch-accelerator"})
# gymnasium (and gym >= 0.26): an env seeds its generator from OS entropy at its first `reset()` not given `seed=`
# (later resets continue it), and each space has its own generator, seeded only by `space.seed(seed)`; neither is
# reached by `random`, NumPy or torch seeding.
GYM_ROOTS = ("gymnasium", "gym")
GYM_ACTION_SPACES = frozenset({"action_space", "single_action_space"})
# Defaults of the fields of transformers' TrainingArguments (trl's configs derive from it) and trl's ModelConfig that
# decide a hazard, for `args.<field>` in a file importing either library where the file declares no such option
# (trl's `self.args.dataloader_num_workers` in its trainers' reference-logp loaders): no workers, no full
# determinism, no LoRA (transformers 5.x training_args.py, trl model_config.py).
HF_ARGUMENT_ROOTS = ("transformers", "trl")
HF_ARGUMENT_DEFAULTS: dict[str, object] = {"dataloader_num_workers": 0, "full_determinism": False, "use_peft": False}
HF_TRAINING_ARGUMENTS = frozenset({"transformers.TrainingArguments", "transformers.training_args.TrainingArguments",
                                   "transformers.Seq2SeqTrainingArguments",
                                   "transformers.training_args_seq2seq.Seq2SeqTrainingArguments",
                                   *(f"trl.{n}Config" for n in _TRL)})
LIGHTNING_SEED_EVERYTHING = frozenset({
    "lightning.seed_everything", "pytorch_lightning.seed_everything", "lightning.pytorch.seed_everything",
    "lightning.fabric.seed_everything", "lightning.fabric.utilities.seed.seed_everything",
    "lightning.pytorch.utilities.seed.seed_everything", "pytorch_lightning.utilities.seed.seed_everything",
})
# `fabric.seed_everything(s)` on a `lightning.Fabric` object
FABRIC_SEED_EVERYTHING = frozenset({"lightning.Fabric.seed_everything", "lightning.fabric.Fabric.seed_everything"})
# SpeechBrain's `seed_everything(seed, verbose, deterministic=False)`: random, NumPy, torch and CUDA.
SPEECHBRAIN_SEED_EVERYTHING = frozenset({"speechbrain.utils.seed_everything", "speechbrain.utils.seed.seed_everything"})
# Seeders that return the seed they used (and draw one when given None).
SEED_RETURNING = LIGHTNING_SEED_EVERYTHING | FABRIC_SEED_EVERYTHING
# `seed_all(..., rm_dropout=True)`: its position, and whether it also removes stochastic depth (msprobe-kit's
# runtime does, by name; msprobe's own leaves `DropPath` drawing).
RM_DROPOUT_SEEDERS: dict[str, tuple[int, bool]] = {
    "msprobe_runtime.pytorch.seed_all": (2, True), "msprobe_runtime.mindspore.seed_all": (2, True),
    "msprobe.pytorch.seed_all": (2, False), "msprobe.mindspore.seed_all": (2, False),
}
# Megatron's set-up, `initialize_megatron` (which `pretrain` runs before it trains, megatron/training/training.py):
# it seeds `random`, NumPy, torch and the tensor-parallel CUDA generators with `--seed` (default 1234,
# `_set_random_seed`) and starts the process group (`--distributed-backend`, nccl by default); see MEGATRON_SETUPS.
_MEGATRON_INITIALIZE_MODULES = ("megatron.training.initialize", "megatron.training", "megatron.initialize")
MEGATRON_INITIALIZE = frozenset(f"{module}.initialize_megatron" for module in _MEGATRON_INITIALIZE_MODULES)
# OpenMMLab 1.x codebases and mmcv 1.x seed with `set_random_seed(seed, deterministic=False)` (mmdet's, mmseg's and
# mmcls's `apis/train.py`, mmcv's `runner/utils.py`): `random`, NumPy, torch and CUDA, and, with `deterministic` true,
# cuDNN's flags only (`cudnn.deterministic = True`, `benchmark = False`): name -> (position, keyword) of that switch.
# mmengine's `set_random_seed(seed=None, deterministic=False)` also calls `torch.use_deterministic_algorithms(True)`.
OPENMMLAB_SET_RANDOM_SEED: dict[str, tuple[int, str]] = dict.fromkeys((
    *(f"{package}.apis{module}.set_random_seed" for package in ("mmdet", "mmseg", "mmcls") for module in ("", ".train")),
    "mmcv.runner.set_random_seed", "mmcv.runner.utils.set_random_seed"), (1, "deterministic"))
MMENGINE_SET_RANDOM_SEED = frozenset({"mmengine.runner.set_random_seed", "mmengine.runner.utils.set_random_seed"})
# Their `init_random_seed(seed=None, device='cuda')` (mmdet, mmseg, mmcls, mmpose, mmdet3d, mmaction2, mmocr: `apis`)
# returns the seed it is given, or, for None, one drawn from NumPy's global generator (`np.random.randint(2**31)` on
# rank 0, broadcast to the others): name -> (position, keyword) of the seed.
SEEDS_DRAWN_FOR_NONE: dict[str, tuple[int, str]] = dict.fromkeys((
    f"{package}.apis{module}.init_random_seed" for package in ("mmdet", "mmseg", "mmcls", "mmpose", "mmdet3d", "mmaction",
                                                                "mmocr") for module in ("", ".train")), (0, "seed"))
# Their training entry points (`apis`), which build an mmcv runner and run its workflow (`runner.run(loaders, workflow)`).
OPENMMLAB_TRAIN_APIS = frozenset(f"{package}.apis{module}.{name}" for package, name in (
    ("mmdet", "train_detector"), ("mmseg", "train_segmentor"), ("mmcls", "train_model"), ("mmpose", "train_model"),
    ("mmdet3d", "train_model"), ("mmaction", "train_model"), ("mmocr", "train_detector")) for module in ("", ".train"))
# Helpers from popular libraries that seed every generator at once.
SEED_ALL_CALLS = frozenset({
    "transformers.set_seed", "transformers.enable_full_determinism",
    "accelerate.utils.set_seed", "msprobe_runtime.pytorch.seed_all", "msprobe_runtime.mindspore.seed_all",
    "msprobe.pytorch.seed_all", "msprobe.mindspore.seed_all", "timm.utils.random_seed",
    "transformers.trainer_utils.set_seed", "transformers.trainer_utils.enable_full_determinism",
    "accelerate.utils.random.set_seed", "diffusers.training_utils.set_seed", *LIGHTNING_SEED_EVERYTHING,
    *FABRIC_SEED_EVERYTHING, *SPEECHBRAIN_SEED_EVERYTHING, *OPENMMLAB_SET_RANDOM_SEED, *MMENGINE_SET_RANDOM_SEED,
    "composer.utils.reproducibility.seed_all",  # random, NumPy, torch and CUDA
    # Megatron's set-up (MindSpeed-LLM's and other Megatron-based scripts start with it)
    *MEGATRON_INITIALIZE, *(f"{module}._set_random_seed" for module in _MEGATRON_INITIALIZE_MODULES),
})
# fairseq's hub models (`BARTModel.from_pretrained(...)`, `torch.hub.load("pytorch/fairseq", ...)`): their
# `sample(sentences, beam=1, **kwargs)` generates by beam search (fairseq/hub_utils.py, models/bart/hub_interface.py),
# drawing only when given `sampling=True`.
FAIRSEQ_ROOT = "fairseq"
FAIRSEQ_HUB_SAMPLE = "sample"
FAIRSEQ_SAMPLING_SWITCH = "sampling"
TORCH_HUB_LOADS = frozenset({"torch.hub.load"})
# transformers' `model.generate(..., do_sample=True)` (or `generation_config=GenerationConfig(do_sample=True)`) samples
# each token from torch's generator (`torch.multinomial`) on the model's device (generation/utils.py, 5.x).
HF_GENERATE = "generate"
HF_SAMPLING_SWITCH = "do_sample"
HF_GENERATION_CONFIGS = frozenset({"transformers.GenerationConfig", "transformers.generation.GenerationConfig",
                                   "transformers.generation.configuration_utils.GenerationConfig"})
# Loaders of a configuration that seeds when loaded, taking no seed argument: SpeechBrain recipes seed in their
# hparams YAML (`__set_seed: !apply:speechbrain.utils.seed_everything [!ref <seed>]`), which loading it runs.
# The file is named on the command line, so it is trusted to.
SEEDING_LOADERS = frozenset({"hyperpyyaml.load_hyperpyyaml", "hyperpyyaml.core.load_hyperpyyaml"})
# Classes that seed every generator when constructed, taking no seed argument: name -> (position, keyword) of
# the argument that stops them when a literal False, or None. Hugging Face trainers seed with `args.seed`
# (default 42; transformers 5.23, `Trainer.__init__`); LightningCLI calls `seed_everything(seed, workers=True)`
# before it builds the model unless given `seed_everything_default=False`.
SEEDING_CLASSES: dict[str, tuple[int, str] | None] = {
    **dict.fromkeys(HF_TRAINERS), **dict.fromkeys(LIGHTNING_CLI, (6, "seed_everything_default")),
}
# Of those, the ones that seed torch's generators only: trl's experimental PPOTrainer never runs `Trainer.__init__`
# (its one `super().__init__()` is its policy-and-value wrapper's) and calls `torch.manual_seed(args.seed)` itself, so
# NumPy (its minibatch order, `np.random.permutation`) and `random` keep what they had (trl 2026, ppo_trainer.py).
TORCH_SEEDING_CLASSES = frozenset({"trl.PPOTrainer"})
# What draws before a Hugging Face Trainer seeds (seed-missing). transformers heads that a base checkpoint
# lacks, so `from_pretrained` initialises them randomly (a classifier for `num_labels=`, a QA span head, a CTC
# head); a causal or masked LM head is loaded (or tied), nothing is drawn.
HF_NEW_HEADS = tuple(f"For{head}" for head in (
    "SequenceClassification", "TokenClassification", "ImageClassification", "AudioClassification",
    "AudioFrameClassification", "VideoClassification", "QuestionAnswering", "MultipleChoice", "CTC",
    "SemanticSegmentation"))
HF_FROM_CONFIG = frozenset({"from_config", "_from_config"})  # every weight initialised randomly
# PEFT's `get_peft_model(model, config)` initialises LoRA's A matrices randomly (`kaiming_uniform_`, normal for
# "gaussian", random both for False, a random orthogonal basis for "orthogonal"); the other `init_lora_weights`
# ("pissa", "olora", "loftq", "eva", "corda", ...) derive them from the weights or data, and other adapters (IA3,
# VeRA, RoAd, BOFT, OSF, ...) mostly start from fixed values: left alone (peft 0.20).
PEFT_ADAPTERS = frozenset({"peft.get_peft_model", "peft.mapping.get_peft_model", "peft.mapping_func.get_peft_model"})
PEFT_LORA_CONFIGS = frozenset({"peft.LoraConfig", "peft.AdaLoraConfig", "peft.tuners.lora.LoraConfig"})
PEFT_RANDOM_LORA_INITS = (True, False, "gaussian", "orthogonal")
# TRL trainers that wrap their model with `get_peft_model(model, peft_config)` (or `prepare_peft_model`) in
# `__init__` before they seed (trl main, 2026: SFT, DPO, KTO, GRPO, RLOO; the trl.experimental ones, also those that
# subclass them: GOLD and GKD of SFT, MiniLLM and GMPO of GRPO; PPO before its `torch.manual_seed`): the LoRA matrices
# are drawn unseeded. RewardTrainer calls `set_seed` first; IterativeSFT and AsyncGRPO take no `peft_config=`.
TRL_PEFT_BEFORE_SEED = frozenset(f"trl.{n}Trainer" for n in _TRL if n not in ("Reward", "IterativeSFT", "AsyncGRPO"))
# trl's `get_peft_config(model_args)` returns a `LoraConfig` (random `init_lora_weights`) only when the ModelConfig
# field `use_peft` (False by default, `--use_peft`) is set, else None (trl/trainer/utils.py).
TRL_PEFT_CONFIG_BUILDERS = frozenset({"trl.get_peft_config", "trl.trainer.get_peft_config",
                                      "trl.trainer.utils.get_peft_config"})
TRL_PEFT_SWITCH = "use_peft"
# Layers whose construction draws their weights: from torch's generator, or (MindSpore) NumPy's, as
# MINDSPORE_INIT_DRAWS; norms, activations and losses start from constants or hold no weights.
TORCH_WEIGHTED_LAYERS = frozenset("torch.nn." + n for n in (
    "Linear", "Bilinear", "LazyLinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
    "ConvTranspose3d", "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU", "MultiheadAttention", "Transformer",
    "TransformerEncoderLayer", "TransformerDecoderLayer"))
MINDSPORE_WEIGHTED_LAYERS = frozenset("mindspore.nn." + n for n in (
    "Dense", "BiDense", "Conv1d", "Conv2d", "Conv3d", "Conv1dTranspose", "Conv2dTranspose", "Conv3dTranspose",
    "Embedding", "RNN", "LSTM", "GRU", "MultiheadAttention", "Transformer", "TransformerEncoderLayer",
    "TransformerDecoderLayer"))
# Data splits and shuffles that draw unless given a seed: name -> (position, keyword) of the arguments that seed
# them, and of a `shuffle` switch (None: none). Hugging Face `datasets` methods by name (`Dataset.shuffle` draws
# its seed from NumPy's global generator, `IterableDataset.shuffle` from fresh entropy; `DatasetDict.shuffle` takes
# `seeds=` or `generators=` too); scikit-learn's `train_test_split` shuffles with NumPy's global generator.
SeedArgument = tuple[int | None, str]
UNSEEDED_SPLITS: dict[str, tuple[tuple[SeedArgument, ...], SeedArgument | None]] = {
    "shuffle": (((0, "seed"), (1, "generator"), (None, "seeds"), (None, "generators")), None),
    "train_test_split": (((4, "seed"), (5, "generator")), (2, "shuffle")),
    "sklearn.model_selection.train_test_split": (((None, "random_state"),), (None, "shuffle")),
}
# Module-level functions of Python's `random` and NumPy's legacy global RNG that draw numbers.
PYTHON_RANDOM_DRAWS = frozenset({
    "random.random", "random.randint", "random.randrange", "random.choice", "random.choices",
    "random.shuffle", "random.sample", "random.uniform", "random.gauss", "random.normalvariate",
    "random.betavariate", "random.expovariate", "random.triangular", "random.lognormvariate",
    "random.getrandbits", "random.randbytes", "random.binomialvariate",
})
NUMPY_RANDOM_DRAWS = frozenset(
    "numpy.random." + n for n in (
        "rand", "randn", "randint", "random", "random_sample", "ranf", "sample", "choice", "shuffle",
        "permutation", "uniform", "normal", "standard_normal", "binomial", "poisson", "beta", "gamma",
        "exponential", "multinomial", "multivariate_normal", "dirichlet", "bytes", "random_integers",
        "laplace", "lognormal", "geometric", "logistic", "standard_cauchy", "standard_t", "chisquare",
        "triangular", "vonmises", "weibull", "zipf", "rayleigh", "pareto", "power", "hypergeometric",
    )
)
# In-place tensor methods that fill with random numbers.
INPLACE_RANDOM_METHODS = frozenset({
    "normal_", "uniform_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
    "log_normal_",
})
# Drawing calls of torch's global generator (any device); the in-place fills as `torch.Tensor` methods, the name
# FileContext.draw_qualname gives them when called on a tensor (`torch.empty(1).uniform_(a, b)`).
TORCH_RANDOM_DRAWS = frozenset(
    "torch." + n for n in (
        "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
        "bernoulli", "multinomial", "poisson", *(f"Tensor.{m}" for m in INPLACE_RANDOM_METHODS),
    )
)
# Draws from a process-global generator (torch's: only without `generator=`).
GLOBAL_RANDOM_DRAWS = TORCH_RANDOM_DRAWS | NUMPY_RANDOM_DRAWS | PYTHON_RANDOM_DRAWS
# Those that shuffle (a data order written by hand, not augmentation).
GLOBAL_SHUFFLES = frozenset({"random.shuffle", "numpy.random.shuffle", "numpy.random.permutation", "torch.randperm"})
# MindSpore functions drawing from the operator RNG that `mindspore.set_seed` seeds (MindSpore 2.10; checked
# by running them twice): qualified name -> position of their own `seed` argument (None: keyword only).
# Given a seed, they are reproducible on their own. `ops.randperm` (a fixed seed 0 by default),
# `ops.random_categorical`, `ops.bernoulli` and the samplers take their own seed instead, so the global seed
# does not decide them (see MINDSPORE_SEEDED_FUNCTIONS).
_MS_OP_DRAWS: dict[str, int | None] = {
    "standard_normal": 1, "uniform": 3, "randn": None, "rand": None, "randint": 3, "randn_like": 1,
    "rand_like": 1, "randint_like": 3, "normal": 3, "gamma": 3, "poisson": 2, "random_gamma": 2,
    "random_poisson": 2, "standard_laplace": 1, "laplace": 3, "multinomial": 3, "shuffle": 1,
    "choice_with_mask": 2, "dropout": 3, "rrelu": None, "gumbel_softmax": None,
    "fractional_max_pool2d": None, "fractional_max_pool3d": None,  # pooling regions from `ops.rand`
}
MINDSPORE_OP_DRAWS: dict[str, int | None] = {
    **{f"{module}.{name}": seed for module in ("mindspore.ops", "mindspore.ops.functional", "mindspore.ops.function")
       for name, seed in _MS_OP_DRAWS.items()},
    "mindspore.nn.Dropout": None,  # seeded from the global seed when constructed
    **dict.fromkeys(["mindspore.nn.RReLU", "mindspore.nn.FractionalMaxPool2d", "mindspore.nn.FractionalMaxPool3d"]
                    + [f"mindspore.numpy.{n}" for n in ("rand", "randn", "randint")]),
}
# Fractional max pooling draws its regions only when not given them: name -> (position, keyword) of the samples.
MINDSPORE_GIVEN_SAMPLES: dict[str, tuple[int, str]] = {
    name: (4 if name.startswith("mindspore.nn.") else 5, "_random_samples")
    for name in MINDSPORE_OP_DRAWS if name.rpartition(".")[2].lower().startswith("fractional")
}
# `mint` draws and the in-place `ops.*_` fills take MindSpore's default generator (or `generator=`), which only
# `mindspore.manual_seed` seeds (`nn.DropoutExt` / `nn.Dropout2dExt` are `mint.nn.Dropout` / `Dropout2d`).
MINDSPORE_GENERATOR_DRAWS = frozenset(
    [f"mindspore.mint.{n}" for n in ("randn", "rand", "randint", "randperm", "normal", "bernoulli", "multinomial",
                                     "randn_like", "rand_like", "randint_like")]
    + [f"{m}.{n}" for m in ("mindspore.ops", "mindspore.ops.functional")
       for n in ("normal_", "uniform_", "random_", "bernoulli_", "exponential_", "bernoulli_ext")]
    + ["mindspore.mint.nn.Dropout", "mindspore.mint.nn.functional.dropout", "mindspore.mint.nn.Dropout2d",
       "mindspore.mint.nn.functional.dropout2d", "mindspore.nn.DropoutExt", "mindspore.nn.Dropout2dExt"]
)
# MindSpore dropouts that draw no mask for a literal rate: name -> (keyword, position, value meaning "off").
MINDSPORE_DROPOUT_OFF: dict[str, tuple[tuple[str, int | None, float], ...]] = {
    "mindspore.nn.Dropout": (("p", None, 0), ("keep_prob", 0, 1)),
    **dict.fromkeys([f"{m}.dropout" for m in ("mindspore.ops", "mindspore.ops.functional", "mindspore.ops.function")]
                    + ["mindspore.mint.nn.functional.dropout"], (("p", 1, 0),)),
    **dict.fromkeys(("mindspore.mint.nn.Dropout", "mindspore.mint.nn.Dropout2d", "mindspore.nn.DropoutExt",
                     "mindspore.nn.Dropout2dExt"), (("p", 0, 0),)),
    "mindspore.mint.nn.functional.dropout2d": (("p", 1, 0),),
}
# `mindspore.common.initializer` classes that draw random weights, from NumPy's global generator.
MINDSPORE_INIT_DRAWS = frozenset(
    "mindspore.common.initializer." + n for n in ("Normal", "Uniform", "HeUniform", "HeNormal", "XavierUniform",
                                                  "XavierNormal", "TruncatedNormal", "Orthogonal", "Sparse",
                                                  "VarianceScaling")
)

CUDNN_MODULES = frozenset({"torch.backends.cudnn"})
HCCL_DETERMINISTIC_ENV = frozenset({"HCCL_DETERMINISTIC"})
NCCL_ALGORITHM_ENV = frozenset({"NCCL_ALGO"})  # a fixed algorithm fixes NCCL's summation order
# OpenMMLab's launcher helper: `init_dist(launcher, backend="nccl", **kwargs)` calls init_process_group.
MMCV_INIT_DIST = ("mmcv.runner.init_dist", "mmcv.runner.dist_utils.init_dist", "mmengine.dist.init_dist",
                  "mmengine.dist.utils.init_dist")
# `deepspeed.initialize(...)` starts communication itself when the script has not (`dist_init_required=None`).
DEEPSPEED_INITIALIZE = frozenset({"deepspeed.initialize"})
# Composer's `dist.initialize_dist(device=None, timeout=300.0)` (composer/utils/dist.py) calls init_process_group with
# its device's backend (composer/devices): nccl for "gpu" and for None (the GPU when there is one, `get_device(None)`),
# gloo for "cpu", xla for "tpu" and "neuron"; a device given as `get_device(name)` likewise.
COMPOSER_INITIALIZE_DIST = frozenset({"composer.utils.dist.initialize_dist"})
COMPOSER_DEVICE_BACKENDS = {"gpu": "nccl", "cpu": "gloo", "tpu": "xla", "neuron": "xla"}
COMPOSER_DEFAULT_DEVICE = "gpu"
DISTRIBUTED_INIT_CALLS = frozenset({
    "torch.distributed.init_process_group", "deepspeed.init_distributed", *DEEPSPEED_INITIALIZE,
    "mindspore.communication.init", "mindspore.communication.management.init",
    "accelerate.Accelerator", "lightning.Fabric", "lightning.fabric.Fabric", *MMCV_INIT_DIST, *COMPOSER_INITIALIZE_DIST,
})
# Calls in DISTRIBUTED_INIT_CALLS that start no collectives across devices when given one device or process:
# name -> the keyword with the device count (`Fabric(devices=1)`) or the number of processes (k-diffusion's
# single-process fallback `init_process_group(world_size=1, rank=0, store=dist.HashStore())`).
DISTRIBUTED_DEVICES_KEYWORD = {"lightning.Fabric": "devices", "lightning.fabric.Fabric": "devices",
                               "torch.distributed.init_process_group": "world_size",
                               "deepspeed.init_distributed": "world_size"}
# ... and when told to run on the CPU (no HCCL or NCCL): name -> (keyword, value).
DISTRIBUTED_CPU_KEYWORD = {"lightning.Fabric": ("accelerator", "cpu"),
                           "lightning.fabric.Fabric": ("accelerator", "cpu"), "accelerate.Accelerator": ("cpu", True)}
# Where an init call takes its backend (`init_process_group("gloo")`: CPU collectives, no HCCL or NCCL).
DISTRIBUTED_BACKEND_ARGUMENT = {
    "torch.distributed.init_process_group": (0, "backend"), "deepspeed.init_distributed": (0, "dist_backend"),
    "mindspore.communication.init": (0, "backend_name"),
    "mindspore.communication.management.init": (0, "backend_name"),
    **dict.fromkeys(MMCV_INIT_DIST, (1, "backend")),
}
# (MindSpore's `init("mccl")`: its collectives for CPU hardware, mindspore/communication/management.py.)
CPU_BACKENDS = frozenset({"gloo", "mccl"})
# Backends neither HCCL's nor NCCL's settings concern: gloo and MPI on the CPU, Intel's oneCCL (XPU), XLA (TPU),
# SageMaker's smddp, and torch's `fake` (shapes of collectives' results without any communication: torchtitan's
# single-process precompile).
OTHER_BACKENDS = CPU_BACKENDS | frozenset({"mpi", "ccl", "xccl", "xla", "smddp", "fake"})
NCCL_BACKENDS = frozenset({"nccl"})

CPU_DEVICE_STRINGS = frozenset({"cpu", "meta"})


def is_cpu_device(text: object) -> bool:
    """A device string naming the CPU or the meta device (`"cpu"`, `"cpu:0"`, `"meta"`)."""
    return isinstance(text, str) and text.strip().split(":", 1)[0].lower() in CPU_DEVICE_STRINGS



class DrawSignature(NamedTuple):
    """How a torch draw takes its arguments (detection reads `inputs`; a rewrite needs all of it)."""

    positional: tuple[str, ...]  # parameter names in order; "*size" takes every remaining positional
    inputs: tuple[str, ...]  # tensor parameters whose device the result inherits
    keyword_only: tuple[str, ...]  # generator, dtype, device, ...


_FACTORY_KEYWORDS = ("generator", "out", "dtype", "layout", "device", "requires_grad", "pin_memory")
_LIKE_KEYWORDS = ("generator", "dtype", "layout", "device", "requires_grad", "memory_format")
# Draws of torch's global generators (torch 2.13 signatures). On an accelerator (through `device=` or an
# input tensor living there) they use that device's generator, whose numbers differ between CUDA and
# NPU for one seed. `torch.randint(high, size)` leaves out `low`; the `torch.normal(mean: float,
# std: float, size)` overload is the one that takes `device=`.
TORCH_DEVICE_DRAWS: dict[str, DrawSignature] = {
    "torch.rand": DrawSignature(("*size",), (), _FACTORY_KEYWORDS),
    "torch.randn": DrawSignature(("*size",), (), _FACTORY_KEYWORDS),
    "torch.randint": DrawSignature(("low", "high", "size"), (), _FACTORY_KEYWORDS[:-1]),
    "torch.randperm": DrawSignature(("n",), (), _FACTORY_KEYWORDS),
    "torch.rand_like": DrawSignature(("input",), ("input",), _LIKE_KEYWORDS),
    "torch.randn_like": DrawSignature(("input",), ("input",), _LIKE_KEYWORDS),
    "torch.randint_like": DrawSignature(("input", "low", "high"), ("input",), _LIKE_KEYWORDS),
    "torch.normal": DrawSignature(("mean", "std", "size"), ("mean", "std"), _FACTORY_KEYWORDS[:-1]),
    "torch.bernoulli": DrawSignature(("input", "p"), ("input",), ("generator", "out")),
    "torch.multinomial": DrawSignature(("input", "num_samples", "replacement"), ("input",), ("generator", "out")),
    "torch.poisson": DrawSignature(("input", "generator"), ("input",), ()),
}
# diffusers' noise helper, `randn_tensor(shape, generator=None, device=None, ...)`: it draws on `device`, unless
# its generator is a CPU one (then it draws on the CPU and moves the result).
DIFFUSERS_RANDN_TENSOR = frozenset({"diffusers.utils.torch_utils.randn_tensor", "diffusers.utils.randn_tensor"})
# Library functions projects copy into their own modules (a vendored diffusers pipeline imports
# `from ...utils.torch_utils import randn_tensor`, its copy of diffusers' helper): a project function of that name
# with those leading parameters stands for the library's (see project.copied_functions).
COPIED_FUNCTIONS = {"randn_tensor": ("diffusers.utils.torch_utils.randn_tensor", ("shape", "generator", "device"))}
# `vae.encode(x).latent_dist.sample(generator=None)`: diffusers' VAE posterior, drawn through randn_tensor on
# the VAE's device.
DIFFUSERS_LATENT_DISTRIBUTION = "latent_dist"
TORCH_DISTRIBUTIONS = "torch.distributions"  # its distributions sample where their parameters live
# Tensor methods that draw on the tensor's own device, besides INPLACE_RANDOM_METHODS.
TENSOR_DRAW_METHODS = frozenset({"bernoulli", "multinomial"})
# `torch.nn.init` functions that fill their first argument with random numbers, on its device.
# torch.nn modules whose construction draws their initial weights (`reset_parameters`), where `device=` puts them.
TORCH_RANDOM_INIT_MODULES = frozenset("torch.nn." + n for n in (
    "Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "Embedding", "EmbeddingBag", "RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "MultiheadAttention",
    "Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer"))
TORCH_INIT_DRAWS = frozenset(
    "torch.nn.init." + n for n in ("uniform_", "normal_", "trunc_normal_", "xavier_uniform_", "xavier_normal_",
                                   "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_")
)
# Generator family of each global draw.
DRAW_FAMILY = {
    **dict.fromkeys(PYTHON_RANDOM_DRAWS, "random"),
    **dict.fromkeys(NUMPY_RANDOM_DRAWS | MINDSPORE_INIT_DRAWS, "numpy"),
    **dict.fromkeys(TORCH_RANDOM_DRAWS | TORCH_INIT_DRAWS, "torch"),
    **dict.fromkeys(MINDSPORE_OP_DRAWS, "mindspore"),
    **dict.fromkeys(MINDSPORE_GENERATOR_DRAWS, "mindspore-generator"),
}
# Tensor methods that move a tensor to an accelerator.
ACCELERATOR_METHODS = frozenset({"cuda", "npu", "xpu", "mps", "hpu", "ipu", "mlu"})
# Tensor methods and attributes whose result lives where the tensor lives.
DEVICE_PRESERVING_METHODS = frozenset({
    "float", "half", "double", "bfloat16", "long", "int", "short", "bool", "type_as", "contiguous", "detach",
    "clone", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "repeat", "squeeze", "unsqueeze",
    "flatten", "permute", "transpose", "t", "requires_grad_", "narrow", "chunk", "split", "mul", "add", "sub",
    "div", "mul_", "add_", "sub_", "div_", "abs", "sqrt", "exp", "log", "sum", "mean",
})
DEVICE_PRESERVING_ATTRIBUTES = frozenset({"data", "T", "mT", "real", "imag"})
# Calls that create a tensor on the default device (the CPU) unless given `device=`.
TORCH_TENSOR_FACTORIES = frozenset(
    "torch." + n for n in ("tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "eye",
                           "rand", "randn", "randint", "randperm", "from_numpy", "empty_strided", "Tensor",
                           "FloatTensor", "LongTensor")
)
TORCH_DEVICE_CONSTRUCTORS = frozenset({"torch.device"})
# Classes of torch.nn that wrap the tensor they are given, where it lives (not modules that build weights).
TORCH_TENSOR_WRAPPERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                                   "torch.nn.parameter.Buffer"})
# Legacy typed constructors that allocate on the GPU (`torch.cuda.FloatTensor(2, 3).normal_()`).
TORCH_CUDA_TENSOR_TYPES = frozenset("torch.cuda." + n for n in (
    "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
    "IntTensor", "LongTensor", "BoolTensor"))
# Base classes of model code: tensors flowing through their methods live on the model's device.
TORCH_MODULE_PACKAGE = "torch.nn"
LIGHTNING_MODULES = frozenset({"lightning.LightningModule", "lightning.pytorch.LightningModule",
                               "lightning.pytorch.core.LightningModule", "pytorch_lightning.LightningModule",
                               "pytorch_lightning.core.LightningModule"})
# Lightning hooks that run after the Trainer moved the LightningModule to its device (not `setup` or
# `configure_model`, which run before the move).
LIGHTNING_DEVICE_HOOKS = frozenset(
    [f"on_{stage}_{end}" for stage in ("fit", "sanity_check") for end in ("start", "end")]
    + [f"on_{stage}{part}_{end}" for stage in ("train", "validation", "test", "predict")
       for part in ("", "_epoch", "_batch") for end in ("start", "end")]
    + [f"{stage}_step" for stage in ("training", "validation", "test", "predict")])
# Deep-learning libraries whose layer classes projects derive theirs from (peft's `LoraParallelLinear`, Megatron's
# `MegatronModule`, transformers' `PreTrainedModel`, mmengine's `BaseModule`, ...).
MODULE_LIBRARY_ROOTS = frozenset({
    "transformers", "peft", "timm", "mmengine", "mmcv", "mmdet", "mmseg", "mmpretrain", "mmyolo", "diffusers",
    "megatron", "mindspeed", "deepspeed", "apex", "fairseq", "torchvision", "torchaudio", "speechbrain",
    "torch_geometric", "open_clip", "detectron2", "transformer_engine", "flash_attn", "xformers"})
# How such a library names a module class: by what it is (the last word; a `...Mixin` of one is one, as diffusers'
# `ModelMixin`), or a transformers task model (`LlamaForCausalLM`). Not configs, outputs, datasets, tokenizers,
# trainers, hooks, pipelines, transforms (`ModelOutput`, `PretrainedConfig`, `MegatronTokenizer`, `BaseTransform`).
LIBRARY_MODULE_NAME = re.compile(
    r"(Module|Model|Layer|Linear|Conv\w*|Embeddings?|Embed|Attention|MLP|Mlp|FFN|Block|Norm|Net|Transformer|Encoder"
    r"|Decoder|Head|Neck|Backbone|Router|Experts?|Detector|Segmentor|Classifier)(Mixin)?$"
    r"|For\w*(LM|Classification|Generation|Answering)$")


def is_library_module(qualified: str) -> bool:
    """A deep-learning library's module class, by its name (see LIBRARY_MODULE_NAME)."""
    root, _, rest = qualified.partition(".")
    return root in MODULE_LIBRARY_ROOTS and LIBRARY_MODULE_NAME.search(rest.rpartition(".")[2]) is not None


# Wrappers that run the module they are given where it is (a model moved to a device stays there).
DATA_PARALLEL_WRAPPERS = frozenset({
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel"})
# Calls that show a file runs on an accelerator (besides `.cuda()`, `.to(device)`, `device=`): tensors
# whose device the file does not show may live there.
ACCELERATOR_USE_CALLS = DATA_PARALLEL_WRAPPERS | frozenset({"torch.distributed.init_process_group",
    "torch.cuda.set_device", "torch.npu.set_device", "torch_npu.npu.set_device", "torch.cuda.synchronize",
    "torch.cuda.amp.autocast", "torch.cuda.amp.GradScaler", "deepspeed.initialize", "deepspeed.init_distributed",
})
# Packages whose import means the code runs where they put it: an accelerator, as a rule.
# `engine, optimizer, loader, scheduler = deepspeed.initialize(...)`: the engine is the model, and
# `engine.backward(loss); engine.step()` is the training step (the engine steps the optimizer it holds).
DEEPSPEED_INITIALIZE = frozenset({"deepspeed.initialize"})
ACCELERATOR_FRAMEWORK_ROOTS = ("lightning", "pytorch_lightning", "accelerate", "deepspeed", "torch_npu")
# Base classes of data-loading code (datasets, samplers): it runs on the CPU, in loader workers.
TORCH_DATA_PACKAGE = "torch.utils.data"

# --- data pipeline --------------------------------------------------------------------------------
# torchdata's StatefulDataLoader takes DataLoader's arguments, in its order; webdataset's WebLoader hands its own
# to the `DataLoader(*args, **kw)` it wraps (webdataset 1.0).
TORCH_DATALOADERS = frozenset({
    "torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader",
    "torchdata.stateful_dataloader.StatefulDataLoader",
    "torchdata.stateful_dataloader.stateful_dataloader.StatefulDataLoader",
    "webdataset.WebLoader", "webdataset.compat.WebLoader",
})
TORCH_RANDOM_SAMPLERS = frozenset({  # each draws from torch's global generator unless given `generator=`
    "torch.utils.data.RandomSampler", "torch.utils.data.sampler.RandomSampler",
    "torch.utils.data.SubsetRandomSampler", "torch.utils.data.sampler.SubsetRandomSampler",
    "torch.utils.data.WeightedRandomSampler", "torch.utils.data.sampler.WeightedRandomSampler",
    "torchvision.datasets.samplers.RandomClipSampler", "torchvision.datasets.samplers.clip_sampler.RandomClipSampler",
    "transformers.trainer_pt_utils.LengthGroupedSampler", "torchdata.stateful_dataloader.sampler.RandomSampler",
    # re-exported by `transformers.trainer`, which imports them (InternVL's patch of `Trainer._get_train_sampler`)
    "transformers.trainer.RandomSampler", "transformers.trainer.LengthGroupedSampler",
})
# The deterministic sampler to use instead of a random one, where it is not SequentialSampler.
ORDERED_SAMPLER_INSTEAD = {"RandomClipSampler": "UniformClipSampler"}
TORCH_DISTRIBUTED_SAMPLERS = frozenset({  # torchdata's stateful one takes DistributedSampler's arguments
    "torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler",
    "torchdata.stateful_dataloader.sampler.StatefulDistributedSampler",
})
# Classes whose subclasses in a file are taken for them (they keep the arguments and the data order).
SUBCLASSED_DATA_CLASSES = TORCH_DATALOADERS | TORCH_DISTRIBUTED_SAMPLERS
# Deterministic replacement for a shuffling sampler (rewriter).
SAMPLER_TWINS = {
    "torch.utils.data.RandomSampler": "torch.utils.data.SequentialSampler",
    "torch.utils.data.sampler.RandomSampler": "torch.utils.data.SequentialSampler",
    "torchdata.stateful_dataloader.sampler.RandomSampler": "torch.utils.data.SequentialSampler",
    "transformers.trainer.RandomSampler": "torch.utils.data.SequentialSampler",  # torch's, re-exported
    **{f"mindspore.dataset.{m}RandomSampler": "mindspore.dataset.SequentialSampler"
       for m in ("", "samplers.", "engine.samplers.")},
    **{f"mindspore.dataset.{m}SubsetRandomSampler": "mindspore.dataset.SubsetSampler"  # the same indices, in order
       for m in ("", "samplers.", "engine.samplers.")},
}
# `deepspeed.initialize(..., training_data=dataset)` (its position) returns a loader DeepSpeed builds: a
# `DistributedSampler` (or, in one process, a `RandomSampler`) that shuffles, and 2 workers per device, with no
# `worker_init_fn` (deepspeed/runtime/dataloader.py).
DEEPSPEED_TRAINING_DATA = {"deepspeed.initialize": 4}
MINDSPORE_DATASET_MODULE = "mindspore.dataset"
TORCH_WORKER_KEYWORD = "num_workers"
# torchvision datasets, which read samples in index order and draw nothing themselves (FakeData seeds per index):
# class -> positions of `transform` and `target_transform` (None: keyword only). A loader over one whose transforms
# draw nothing gets the same batches with any number of workers.
TORCHVISION_DATASETS: dict[str, tuple[int | None, int | None]] = {
    f"torchvision.datasets.{name}": positions for name, positions in (
        ("ImageFolder", (1, 2)), ("DatasetFolder", (3, 4)), ("CIFAR10", (2, 3)), ("CIFAR100", (2, 3)),
        ("MNIST", (2, 3)), ("FashionMNIST", (2, 3)), ("KMNIST", (2, 3)), ("SVHN", (2, 3)), ("STL10", (3, 4)),
        ("Flowers102", (2, 3)), ("Food101", (2, 3)), ("CelebA", (3, 4)), ("CocoDetection", (2, 3)),
        ("ImageNet", (None, None)), ("FakeData", (4, 5)))
}
# mosaicml-streaming's datasets draw nothing on the workers: `__getitem__` reads a shard, and `__iter__` partitions the
# samples over ranks and workers and shuffles them with generators of its own seeded from `shuffle_seed` (9176 unless
# given) and the epoch (streaming/base/dataset.py). Its vision datasets take transforms and are not among them.
_STREAMING_MODULES = {"StreamingDataset": ("", ".base", ".base.dataset"), "LocalDataset": ("", ".base", ".base.local"),
                      "StreamingC4": (".text", ".text.c4"), "StreamingPile": (".text", ".text.pile"),
                      "StreamingEnWiki": (".text", ".text.enwiki")}
QUIET_LIBRARY_DATASETS = frozenset(f"streaming{module}.{name}" for name, modules in _STREAMING_MODULES.items()
                                   for module in modules)
# Transforms that run the user's own function: whether they draw is not known.
USER_FUNCTION_TRANSFORMS = frozenset({"Lambda", "PyFunc"})
MINDSPORE_WORKER_KEYWORD = "num_parallel_workers"
# Where `DataLoader` takes the arguments the data rules read, by position (torch 2.13).
DATALOADER_POSITIONS = {"shuffle": 2, "sampler": 3, "batch_sampler": 4, "num_workers": 5, "worker_init_fn": 10,
                        "generator": 12}
# Graph libraries' loaders: subclasses of torch's DataLoader that pass its keywords on through `**kwargs`
# (`shuffle=`, `num_workers=`, `worker_init_fn=`, `generator=`), some taking `shuffle` third as torch's does
# (PyG 2.x, DGL 2.x): loader -> the positions they take DataLoader's arguments at.
_PYG_LOADERS = ("NeighborLoader", "LinkNeighborLoader", "HGTLoader", "LinkLoader", "NodeLoader", "ClusterLoader",
                "RandomNodeLoader", "ShaDowKHopSampler", "GraphSAINTNodeSampler", "GraphSAINTEdgeSampler",
                "GraphSAINTRandomWalkSampler", "DynamicBatchSampler", "ZipLoader")
_DGL_LOADERS = ("DataLoader", "GraphDataLoader", "NodeDataLoader", "EdgeDataLoader")
GRAPH_DATALOADERS: dict[str, dict[str, int]] = {
    **{f"torch_geometric.{module}.{name}": {"shuffle": 2} for module in ("loader", "data", "loader.dataloader")
       for name in ("DataLoader", "DenseDataLoader", "DataListLoader")},
    **{f"torch_geometric.loader.{name}": {} for name in _PYG_LOADERS},
    **{f"dgl.dataloading.{name}": {} for name in _DGL_LOADERS},
}


def loader_positions(qualified: str | None) -> dict[str, int] | None:
    """Where a PyTorch data loader (torch's, or a graph library's) takes DataLoader's arguments by position
    (those it takes by keyword only are absent); None for anything else."""
    if qualified in TORCH_DATALOADERS:
        return DATALOADER_POSITIONS
    return GRAPH_DATALOADERS.get(qualified)
DISTRIBUTED_SAMPLER_SHUFFLE_POSITION = 3
# Lightning calls that set PL_SEED_WORKERS, after which Lightning's Trainer and `Fabric.setup_dataloaders` give
# every loader without a `worker_init_fn` one of their own (lightning 2.6, `_auto_add_worker_init_fn`):
# name -> (position, keyword) of the switch (off when a literal False), and whether it is on when not given.
LIGHTNING_WORKER_SEEDING: dict[str, tuple[int, str, bool]] = {
    **dict.fromkeys(LIGHTNING_SEED_EVERYTHING, (1, "workers", False)),
    **dict.fromkeys(FABRIC_SEED_EVERYTHING, (1, "workers", True)),
    **dict.fromkeys(LIGHTNING_CLI, (6, "seed_everything_default", True)),
}
# MindSpore dataset classes (by class name) that take no `shuffle`: they keep their input's order.
MINDSPORE_ORDERED_DATASETS = frozenset({
    "PaddedDataset", "Dataset", "UnionBaseDataset", "VisionBaseDataset",
    "TextBaseDataset", "AudioBaseDataset", "BatchDataset", "BucketBatchByLengthDataset", "ConcatDataset",
    "DeserializedDataset", "FilterDataset", "MapDataset", "PaddedBatchDataset", "ProjectDataset", "RenameDataset",
    "RepeatDataset", "ShuffleDataset", "SkipDataset", "SyncWaitDataset", "TakeDataset", "TransferDataset",
    "ZipDataset",
})
# `mindspore.dataset` methods that return a new dataset (a pipeline is a chain of them).
MINDSPORE_DATASET_METHODS = frozenset({
    "map", "batch", "shuffle", "repeat", "project", "rename", "take", "skip", "zip", "concat", "filter",
    "padded_batch", "bucket_batch_by_length", "sync_wait",
})
# `mindspore.dataset` functions that return a dataset (keeping its inputs' order).
MINDSPORE_DATASET_FUNCTIONS = frozenset({"mindspore.dataset.zip", "mindspore.dataset.engine.datasets.zip"})
MINDSPORE_SAMPLER_KEYWORDS = ("sampler", "batch_sampler")
MINDSPORE_RANDOM_SAMPLERS = frozenset(
    f"mindspore.dataset.{m}{n}" for m in ("", "samplers.", "engine.samplers.")
    for n in ("RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler")
)
# MindSpore samplers with a `shuffle` argument: name -> (its position, its default).
MINDSPORE_SHUFFLE_SAMPLERS: dict[str, tuple[int, bool]] = {
    f"mindspore.dataset.{m}{n}": spec for m in ("", "samplers.", "engine.samplers.")
    for n, spec in (("DistributedSampler", (2, True)), ("PKSampler", (2, False)))
}
# webdataset's buffer shuffle seeds a generator of its own from the clock and the process id unless given `rng=`
# or `seed=` (webdataset 0.2-1.0, filters._shuffle; 0.2.86 takes no `seed=`, 0.2.100 does): function -> position
# of `bufsize`, which `initial`, `rng` and `seed` follow (`shuffle` is the pipeline stage, curried over the data;
# `_shuffle` takes the data first). A buffer of fewer than 2 samples keeps the order.
WEBDATASET_SHUFFLES = {"webdataset.shuffle": 0, "webdataset.filters.shuffle": 0, "webdataset.filters._shuffle": 1}
# webdataset's pipelines with the fluid interface, whose `.shuffle(size, **kw)` adds that stage (none when
# `size < 1`), and the methods that return such a pipeline (webdataset/compat.py, pipeline.py).
WEBDATASET_PIPELINES = frozenset(f"webdataset.{m}{name}" for m in ("", "compat.")
                                 for name in ("WebDataset", "WebLoader", "FluidWrapper"))
WEBDATASET_METHODS = frozenset({
    "batched", "unbatched", "listed", "unlisted", "log_keys", "shuffle", "map", "decode", "map_dict", "select",
    "to_tuple", "map_tuple", "slice", "rename", "rsample", "rename_keys", "extract_keys", "xdecode", "mcached",
    "lmdb_cached", "compose", "with_length", "with_epoch", "repeat",
})
# Hugging Face `datasets`: the functions and classes (with their `from_*` constructors) that make a dataset or a
# dict of them, and the methods that return one.
HF_DATASET_FUNCTIONS = frozenset(f"datasets.{name}" for name in (
    "load_dataset", "load_from_disk", "concatenate_datasets", "interleave_datasets"))
HF_DATASET_CLASSES = frozenset(f"datasets.{m}{name}" for m, names in (
    ("", ("Dataset", "DatasetDict", "IterableDataset", "IterableDatasetDict")),
    ("arrow_dataset.", ("Dataset",)), ("dataset_dict.", ("DatasetDict", "IterableDatasetDict")),
    ("iterable_dataset.", ("IterableDataset",))) for name in names)
HF_DATASET_METHODS = frozenset({
    "map", "filter", "select", "shuffle", "sort", "train_test_split", "remove_columns", "rename_column",
    "rename_columns", "select_columns", "cast", "cast_column", "flatten", "flatten_indices", "with_format",
    "with_transform", "shard", "take", "skip", "add_column", "add_item", "class_encode_column", "repeat",
})


def makes_hf_dataset(qualified: str) -> bool:
    """Whether calling `qualified` returns a Hugging Face dataset (or a dict of them)."""
    owner, _, name = qualified.rpartition(".")
    return (qualified in HF_DATASET_FUNCTIONS or qualified in HF_DATASET_CLASSES
            or owner in HF_DATASET_CLASSES and name.startswith("from_"))


MINDSPORE_SET_WORKERS = frozenset({"mindspore.dataset.config.set_num_parallel_workers"})
MINDSPORE_DEBUG_MODE = frozenset({"mindspore.dataset.config.set_debug_mode"})  # one thread, seeded
# MindSpore source datasets whose workers run the user's Python (reseeded per worker); the others read
# files in the sampler's order and draw nothing, whatever their worker count.
MINDSPORE_PYTHON_SOURCE_DATASETS = frozenset({"GeneratorDataset"})


def is_mindspore_dataset_class(qualified: str) -> bool:
    """Whether `qualified` names a `mindspore.dataset` dataset class (a source or a pipeline stage)."""
    return qualified.startswith(MINDSPORE_DATASET_MODULE + ".") and qualified.endswith("Dataset")


def shuffles_by_default(qualified: str) -> bool:
    """Whether the MindSpore dataset class `qualified` shuffles when given neither `shuffle` nor a sampler."""
    name = qualified.rpartition(".")[2]
    return is_mindspore_dataset_class(qualified) and name not in MINDSPORE_ORDERED_DATASETS

# --- random augmentation --------------------------------------------------------------------------
TORCHVISION_TRANSFORM_MODULES = (
    "torchvision.transforms", "torchvision.transforms.v2", "torchvision.transforms.transforms",
    "torchvision.transforms.autoaugment",
)
MINDSPORE_TRANSFORM_MODULES = (
    "mindspore.dataset.vision", "mindspore.dataset.vision.transforms", "mindspore.dataset.vision.c_transforms",
    "mindspore.dataset.vision.py_transforms", "mindspore.dataset.transforms",
    "mindspore.dataset.transforms.transforms", "mindspore.dataset.transforms.c_transforms",
    "mindspore.dataset.transforms.py_transforms", "mindspore.dataset.text", "mindspore.dataset.audio",
)
ALBUMENTATIONS_MODULES = (
    "albumentations", "albumentations.augmentations", "albumentations.augmentations.transforms",
    "albumentations.augmentations.crops.transforms", "albumentations.augmentations.geometric.transforms",
    "albumentations.augmentations.geometric.rotate", "albumentations.augmentations.geometric.resize",
    "albumentations.augmentations.geometric.flip", "albumentations.augmentations.blur.transforms",
    "albumentations.augmentations.dropout.coarse_dropout", "albumentations.augmentations.pixel.transforms",
    "albumentations.core.composition", "albumentations.pytorch", "albumentations.pytorch.transforms",
)
DETECTRON2_TRANSFORM_MODULES = ("detectron2.data.transforms", "detectron2.data.transforms.augmentation_impl")
# albumentations applies each transform with probability `p`, drawn like its parameters: from Python's `random`
# and NumPy's global generator before 1.4.21, then from generators of its own, seeded by `Compose(seed=...)` (from
# the OS when not given; `random.seed` does not reach them). Besides its `Random*` (and 0.x's `IAA*`) transforms,
# these draw what they do (a region, an angle, noise, a kernel size, one transform of several) ...
ALBUMENTATIONS_RANDOM_TRANSFORMS = frozenset({
    "Blur", "MotionBlur", "MedianBlur", "GaussianBlur", "GlassBlur", "AdvancedBlur", "Defocus", "ZoomBlur",
    "CropNonEmptyMaskIfExists", "BBoxSafeRandomCrop", "AtLeastOneBBoxRandomCrop",
    "ChannelDropout", "CoarseDropout", "Cutout", "Erasing", "ConstrainedCoarseDropout", "GridDropout", "MaskDropout",
    "PixelDropout", "XYMasking", "TimeMasking", "FrequencyMasking", "CoarseDropout3D",
    "ElasticTransform", "PiecewiseAffine", "OpticalDistortion", "GridDistortion", "ThinPlateSpline",
    "GridElasticDeform", "Flip", "D4", "SquareSymmetry", "CubicSymmetry", "Rotate", "SafeRotate", "Affine",
    "ShiftScaleRotate", "Perspective", "Morphological",
    "HistogramMatching", "FDA", "PixelDistributionAdaptation", "OverlayElements", "Mosaic", "TemplateTransform",
    "ImageCompression", "JpegCompression", "HueSaturationValue", "GaussNoise", "ISONoise", "CLAHE", "ChannelShuffle",
    "RGBShift", "Downscale", "MultiplicativeNoise", "FancyPCA", "ColorJitter", "Sharpen", "Emboss", "Superpixels",
    "RingingOvershoot", "UnsharpMask", "Spatter", "ChromaticAberration", "PlanckianJitter", "ShotNoise",
    "AdditiveNoise", "SaltAndPepper", "PlasmaBrightnessContrast", "PlasmaShadow", "Illumination", "HEStain",
    "TextImage", "OneOf", "SomeOf", "OneOrOther",
})
# ... these do one fixed thing, with probability `p` 0.5 by default (random through `p` only) ...
ALBUMENTATIONS_COIN_FLIPS = frozenset({
    "HorizontalFlip", "VerticalFlip", "Transpose", "TimeReverse", "ToGray", "ToSepia", "InvertImg", "Equalize",
    "AutoContrast", "Solarize", "Posterize", "Sequential", "PerChannel",
})
# ... and these one fixed thing always by default (p=1): random only given a `p` below 1 (`A.Compose([...], p=0.5)`
# runs its transforms on some samples only).
ALBUMENTATIONS_FIXED_TRANSFORMS = frozenset({
    "Compose", "ReplayCompose", "SelectiveChannelTransform", "Resize", "CenterCrop", "Crop", "Normalize", "Pad",
    "PadIfNeeded", "LongestMaxSize", "SmallestMaxSize", "ToFloat", "FromFloat", "ToRGB", "ToTensorV2", "ToTensor",
    "CenterCrop3D", "Pad3D", "PadIfNeeded3D", "Lambda",
})
# Every albumentations transform takes its probability as `p`, at a position that differs between versions.
ALBUMENTATIONS_PROBABILITY: tuple[str, int | None] = ("p", None)
# Transforms that are random although their name does not start with "Random".
TORCHVISION_RANDOM_TRANSFORMS = frozenset({
    "ColorJitter", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "ElasticTransform",
    "RandomErasing", "ScaleJitter", "CutMix", "MixUp",
    "GaussianBlur", "JPEG",  # sigma / quality drawn from a range (GaussianBlur's default is one)
    "GaussianNoise",  # v2: adds normal noise
})
# ... unless this argument (position, keyword) is one number or a range with equal bounds.
FIXED_BY_NUMBER: dict[str, dict[str, tuple[int, str]]] = {
    "torchvision": {"GaussianBlur": (1, "sigma"), "JPEG": (0, "quality")},
}
# Crops that keep the whole image when given the area range `scale=(1, 1)` (argument position, name): every try
# then asks for the whole area, and the fallback after ten failed tries is the centre crop of the largest box of an
# allowed aspect ratio (torchvision's `RandomResizedCrop.get_params`, MindSpore's): the same crop every time, to a
# pixel of rounding.
WHOLE_AREA_CROPS: dict[str, dict[str, tuple[int, str]]] = {
    "torchvision": {"RandomResizedCrop": (1, "scale")},
    "mindspore": {"RandomResizedCrop": (1, "scale"), "RandomCropDecodeResize": (1, "scale")},
}
# Methods of a torchvision transform that draw its parameters for every sample: v2's `Transform.forward` calls
# `make_params` (`_get_params` before torchvision 0.21).
TORCHVISION_PARAMETER_METHODS = frozenset({"make_params", "_get_params"})
MINDSPORE_RANDOM_TRANSFORMS = frozenset({
    "AutoAugment", "RandAugment", "TrivialAugmentWide", "CutMixBatch", "MixUpBatch", "MixUp",
    "RandomChoice", "RandomApply", "RandomColorAdjust", "SoftDvppDecodeRandomCropResizeJpeg",
    "UniformAugment", "RandomSelectSubpolicy",
    "CutOut", "BoundingBoxAugment",  # random patches; a random selection of boxes
    "MaskAlongAxisIID",  # audio: a mask of random width at a random start
})
# detectron2's augmentations draw from NumPy's global generator (`Augmentation._rand_range`, `np.random`): its
# `Random*` (`RandomFlip` with `prob=0.5`, `RandomApply`, crops, rotation, brightness, ...) and these, which draw a
# size (a scale; `ResizeShortestEdge` given several sizes, see `SAMPLED_VALUES`) or a crop's offset.
DETECTRON2_RANDOM_TRANSFORMS = frozenset({"ResizeShortestEdge", "ResizeScale", "FixedSizeCrop", "MinIoURandomCrop"})
# ... of which these set the size of the image they return: removing them would feed images at the size they
# were read, so the instrument leaves them, with a note (give them one size while debugging).
SIZING_RANDOM_TRANSFORMS = {"detectron2": frozenset({"ResizeShortestEdge", "ResizeScale", "RandomResize",
                                                     "FixedSizeCrop"})}
# detectron2's `ResizeShortestEdge` draws the shorter edge from `short_edge_length`, `RandomRotation` the angle
# from `angle` (position, keyword): between two bounds with `sample_style` (position, keyword) "range", its
# default, or among the values listed with "choice". One number, or equal values, draw nothing; a name given
# without a sample style is taken for one number (as where they resize or rotate for inference).
SAMPLED_VALUES: dict[str, dict[str, tuple[tuple[int, str], tuple[int, str]]]] = {
    "detectron2": {"ResizeShortestEdge": ((0, "short_edge_length"), (2, "sample_style")),
                   "RandomRotation": ((0, "angle"), (3, "sample_style"))},
}
# Methods of a library's base class of augmentations that draw from a global generator, called on `self` by its
# subclasses: detectron2's `Augmentation._rand_range` (`np.random.uniform`).
DRAWING_BASE_METHODS = {"_rand_range": "numpy.random.uniform"}
# Buffers a model computes from its configuration, not drawn nor learned: a checkpoint may leave them out (Swin
# deletes them before loading: "we always re-init it"). Relative-position tables (Swin, SwinV2, BEiT), window
# attention masks, position ids (Hugging Face), rotary frequencies, BatchNorm's step counter.
RECOMPUTED_BUFFERS = frozenset({"relative_position_index", "relative_coords_table", "attn_mask", "position_ids",
                                "inv_freq", "num_batches_tracked"})
# Class methods that build a model from pretrained weights (transformers, diffusers, peft): a partial checkpoint
# loaded on top leaves the rest at those weights, not at a random initialisation.
PRETRAINED_CONSTRUCTORS = frozenset({"from_pretrained"})
# `torch.nn.init` functions that fill a tensor with a constant (no draw).
CONSTANT_INITS = frozenset(f"torch.nn.init.{name}" for name in ("constant_", "zeros_", "ones_", "eye_", "dirac_"))
# Libraries' base classes of per-sample transforms (their `transform` / `get_transform` / `apply` run on each
# sample): OpenMMLab's, detectron2's augmentations, albumentations'.
LIBRARY_TRANSFORM_BASES = frozenset({
    "mmcv.transforms.BaseTransform", "mmcv.transforms.base.BaseTransform",
    "detectron2.data.transforms.Augmentation", "detectron2.data.transforms.augmentation.Augmentation",
    "albumentations.BasicTransform", "albumentations.ImageOnlyTransform", "albumentations.DualTransform",
    "albumentations.core.transforms_interface.BasicTransform",
    "albumentations.core.transforms_interface.ImageOnlyTransform",
    "albumentations.core.transforms_interface.DualTransform",
})
# Packages that read and transform images: a project class handing its `__call__` argument to one is a transform.
IMAGE_LIBRARIES = frozenset({"PIL", "cv2", "torchvision", "skimage", "albumentations", "imgaug", "kornia"})
# Deterministic twin of a random transform: (replacement names, the arguments that carry over). An empty
# tuple of twins removes the transform. Carried arguments keep their value, `size` as the first argument,
# the others by keyword; `TWIN_ARGUMENT_POSITIONS` says where the random transform takes them.
TRANSFORM_TWINS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "RandomCrop": (("CenterCrop", ("size",)),),
    "RandomResizedCrop": (("Resize", ("size", "interpolation", "antialias")), ("CenterCrop", ("size",))),
    "RandomSizedCrop": (("Resize", ("size", "interpolation")), ("CenterCrop", ("size",))),
    # an int size resizes the shorter edge only: the crop keeps the square the random transform returned
    "RandomCropDecodeResize": (("Decode", ()), ("Resize", ("size", "interpolation")), ("CenterCrop", ("size",))),
    "RandomResize": (),  # torchvision's draws the size between its bounds
}
# Twins of a library's own transform, where it differs from the one of that name above: MindSpore's
# RandomResize(size) resizes to `size` and draws only the interpolation (DANN feeds 28x28 to its model through it).
LIBRARY_TRANSFORM_TWINS: dict[str, dict[str, tuple[tuple[str, tuple[str, ...]], ...]]] = {
    "mindspore": {"RandomResize": (("Resize", ("size",)),), "RandomResizeWithBBox": (("ResizeWithBBox", ("size",)),)},
    # albumentations' crops to `height` x `width` (a random region; one holding the mask or a box), its crops
    # resized to it, and its 3D crop keep their output size
    "albumentations": {
        **dict.fromkeys(("RandomCrop", "CropNonEmptyMaskIfExists", "AtLeastOneBBoxRandomCrop"),
                        (("CenterCrop", ("height", "width")),)),
        **dict.fromkeys(("RandomResizedCrop", "RandomSizedCrop", "RandomSizedBBoxSafeCrop"),
                        (("Resize", ("height", "width", "interpolation")),)),
        "RandomCrop3D": (("CenterCrop3D", ("size",)),),
    },
    # detectron2's RandomCrop(crop_type, crop_size): no centre crop among its augmentations; removed
    "detectron2": {"RandomCrop": ()},
}
# Positions shared by torchvision's RandomResizedCrop(size, scale, ratio, interpolation, antialias),
# MindSpore's RandomCropDecodeResize(size, scale, ratio, interpolation, max_attempts) and albumentations' crops
# (height, width, ...; RandomSizedBBoxSafeCrop(height, width, erosion_rate, interpolation)) ...
TWIN_ARGUMENT_POSITIONS = {"size": 0, "interpolation": 3, "antialias": 4, "height": 0, "width": 1}
# ... except in these, read by keyword only: albumentations' resized crops moved them between versions
# ((height, width, ...) before 1.4, (size, width, height, ...) in 1.4, (size, ...) in 2).
TWIN_KEYWORD_ONLY = {"albumentations": frozenset({"RandomResizedCrop", "RandomSizedCrop"})}
# Arguments a twin cannot be built without: a call giving them otherwise (`**kwargs`, albumentations 2's
# `size=(h, w)`) is left, with a note.
TWIN_REQUIRED_ARGUMENTS = frozenset({"size", "height", "width"})
# Where a transform takes its probability of being applied: library -> class name -> (keyword, position).
# With probability 0 the transform never runs.
TRANSFORM_PROBABILITY: dict[str, dict[str, tuple[str, int]]] = {
    "torchvision": {
        **dict.fromkeys(("RandomHorizontalFlip", "RandomVerticalFlip", "RandomGrayscale", "RandomInvert",
                         "RandomEqualize", "RandomAutocontrast", "RandomErasing"), ("p", 0)),
        **dict.fromkeys(("RandomSolarize", "RandomPosterize", "RandomAdjustSharpness", "RandomApply"), ("p", 1)),
    },
    "mindspore": {
        **dict.fromkeys(("RandomHorizontalFlip", "RandomVerticalFlip", "RandomGrayscale", "RandomInvert",
                         "RandomEqualize", "RandomErasing", "RandomHorizontalFlipWithBBox",
                         "RandomVerticalFlipWithBBox"), ("prob", 0)),
        **dict.fromkeys(("RandomAdjustSharpness", "RandomApply"), ("prob", 1)),
        "RandomAutoContrast": ("prob", 2),
    },
    "detectron2": {"RandomFlip": ("prob", 0), "RandomApply": ("prob", 1)},
}
# Transforms whose only randomness is whether they run: with probability 1 they are deterministic.
PROBABILITY_ONLY_TRANSFORMS = frozenset({
    "RandomHorizontalFlip", "RandomVerticalFlip", "RandomGrayscale", "RandomInvert", "RandomEqualize",
    "RandomAutocontrast", "RandomAutoContrast", "RandomSolarize", "RandomPosterize", "RandomAdjustSharpness",
    "RandomApply", "RandomHorizontalFlipWithBBox", "RandomVerticalFlipWithBBox", "RandomFlip",
    *ALBUMENTATIONS_COIN_FLIPS,
})
# Transforms whose only randomness is drawing values from ranges: library -> class -> (range keywords,
# keywords without a degenerate default). Given only degenerate ranges (`(a, a)`, `(a, a, b, b)`, or 0 for
# a symmetric range) they are deterministic, as in AutoAugment code applying one fixed magnitude.
RANGE_ONLY_TRANSFORMS: dict[str, dict[str, tuple[frozenset[str], frozenset[str]]]] = {
    "torchvision": {
        "RandomRotation": (frozenset({"degrees"}), frozenset({"degrees"})),
        "ColorJitter": (frozenset({"brightness", "contrast", "saturation", "hue"}), frozenset()),
    },
    "mindspore": {
        "RandomRotation": (frozenset({"degrees"}), frozenset({"degrees"})),
        "RandomAffine": (frozenset({"degrees", "translate", "scale", "shear"}), frozenset({"degrees"})),
        "RandomColorAdjust": (frozenset({"brightness", "contrast", "saturation", "hue"}), frozenset()),
        "RandomColor": (frozenset({"degrees"}), frozenset({"degrees"})),
        "RandomSharpness": (frozenset({"degrees"}), frozenset({"degrees"})),
        "RandomSolarize": (frozenset({"threshold"}), frozenset({"threshold"})),
        "RandomPosterize": (frozenset({"bits"}), frozenset()),
    },
}
# timm: factories that build random training augmentation when `is_training` (position) is true ...
TIMM_TRAINING_TRANSFORMS: dict[str, int] = {
    "timm.data.create_transform": 1, "timm.data.transforms_factory.create_transform": 1,
}
# ... and loaders that, with `is_training` (position) true, shuffle and augment (unless `no_aug=True`).
TIMM_TRAINING_LOADERS: dict[str, int] = {
    "timm.data.create_loader": 3, "timm.data.loader.create_loader": 3,
    "timm.data.create_naflex_loader": 7, "timm.data.naflex_loader.create_naflex_loader": 7,
}
# ... of which these shuffle with a generator of their own, seeded with `seed=` (42 by default) + the epoch
# (timm's NaFlexMapDatasetWrapper): the order repeats on every device, not in another framework.
TIMM_SEEDED_SHUFFLE_LOADERS = frozenset({"timm.data.create_naflex_loader",
                                         "timm.data.naflex_loader.create_naflex_loader"})
# ... and random transforms / batch mixers.
TIMM_RANDOM_TRANSFORMS = frozenset({
    "timm.data.Mixup", "timm.data.mixup.Mixup", "timm.data.FastCollateMixup", "timm.data.mixup.FastCollateMixup",
    "timm.data.NaFlexMixup", "timm.data.naflex_mixup.NaFlexMixup",
    "timm.data.RandomErasing", "timm.data.random_erasing.RandomErasing",
    "timm.data.RandomResizedCropAndInterpolation", "timm.data.transforms.RandomResizedCropAndInterpolation",
    "timm.data.rand_augment_transform", "timm.data.auto_augment.rand_augment_transform",
    "timm.data.auto_augment_transform", "timm.data.auto_augment.auto_augment_transform",
    "timm.data.augment_and_mix_transform", "timm.data.auto_augment.augment_and_mix_transform",
})
# open_clip's factory returns (model, preprocess_train, preprocess_val): name -> where the training transform
# is in that tuple. It augments at random (RandomResizedCrop(scale=(0.9, 1.0)), with the colour jitter, greyscale
# or timm augmentation its `aug_cfg` asks for).
OPEN_CLIP_TRAINING_TRANSFORMS: dict[str, int] = dict.fromkeys(
    ("open_clip.create_model_and_transforms", "open_clip.factory.create_model_and_transforms"), 1)

# MindSpore model zoos (mindcv, mindyolo; named through any import, see `ImportTracker.resolve_any`).
# Loaders and datasets that shuffle: name -> (position of `shuffle`, its default). mindcv's `create_dataset`
# hands `shuffle` (default True) to the MindSpore dataset or its sampler; mindyolo's `create_loader` to a
# `GeneratorDataset` (default True; it seeds the pipeline with a constant, so the order repeats per rank and
# worker count, like a MindSpore dataset after `set_seed`).
MINDSPORE_ZOO_SHUFFLING_LOADERS: dict[str, tuple[int, bool]] = {
    **dict.fromkeys(("mindcv.data.create_dataset", "mindcv.data.dataset_factory.create_dataset"), (3, True)),
    **dict.fromkeys(("mindyolo.data.create_loader", "mindyolo.data.loader.create_loader"), (9, True)),
}
# ... that run a Python source dataset (`GeneratorDataset`) on parallel workers: name -> (position of
# `num_parallel_workers`, its default).
MINDSPORE_ZOO_WORKER_LOADERS: dict[str, tuple[int, int]] = {
    "mindyolo.data.create_loader": (8, 8), "mindyolo.data.loader.create_loader": (8, 8),
}
# mindcv transform factories that build random augmentation (random crops, flips, ...) when `is_training`
# (position) is true ...
MINDCV_TRAINING_TRANSFORMS: dict[str, int] = {
    "mindcv.data.create_transforms": 2, "mindcv.data.transforms_factory.create_transforms": 2,
}
# ... and loaders that mix batches at random (Mixup/CutMix) when `is_training` is true and `mixup` or `cutmix`
# (default 0.0) is not: name -> (position of `is_training`, (position, keyword) of the mixing rates). They do
# not shuffle: the dataset from `create_dataset` decides the order.
MINDCV_MIXING_LOADERS: dict[str, tuple[int, tuple[tuple[int, str], ...]]] = {
    name: (3, ((4, "mixup"), (5, "cutmix"))) for name in ("mindcv.data.create_loader", "mindcv.data.loader.create_loader")
}


def transform_library(qualified: str) -> str | None:
    """"torchvision", "mindspore", "albumentations" or "detectron2" when `qualified` is in one of their transform modules."""
    module = qualified.rpartition(".")[0]
    if module in TORCHVISION_TRANSFORM_MODULES:
        return "torchvision"
    if module in MINDSPORE_TRANSFORM_MODULES:
        return "mindspore"
    if module in ALBUMENTATIONS_MODULES:
        return "albumentations"
    if module in DETECTRON2_TRANSFORM_MODULES:
        return "detectron2"
    return None


def transform_twins(qualified: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The deterministic twins of a random transform (empty: it is removed)."""
    short = qualified.rpartition(".")[2]
    own = LIBRARY_TRANSFORM_TWINS.get(transform_library(qualified) or "", {})
    return own.get(short, TRANSFORM_TWINS.get(short, ()))


def twin_argument_position(qualified: str, name: str) -> int | None:
    """Where the random transform `qualified` takes the argument `name` its twin carries (None: keyword only)."""
    short = qualified.rpartition(".")[2]
    return None if short in TWIN_KEYWORD_ONLY.get(transform_library(qualified) or "", ()) else TWIN_ARGUMENT_POSITIONS[name]


def probability_argument(qualified: str) -> tuple[str, int | None] | None:
    """Where the transform `qualified` takes its probability of being applied: (keyword, position), if it does."""
    library = transform_library(qualified)
    if library == "albumentations":
        return ALBUMENTATIONS_PROBABILITY
    return TRANSFORM_PROBABILITY.get(library or "", {}).get(qualified.rpartition(".")[2])


def is_random_transform(qualified: str) -> bool:
    """Whether `qualified` names a random torchvision / MindSpore / albumentations / detectron2 data transform."""
    module, _, name = qualified.rpartition(".")
    if module in TORCHVISION_TRANSFORM_MODULES:
        return name.startswith("Random") or name in TORCHVISION_RANDOM_TRANSFORMS
    if module in MINDSPORE_TRANSFORM_MODULES:
        return name.startswith("Random") or name in MINDSPORE_RANDOM_TRANSFORMS
    if module in ALBUMENTATIONS_MODULES:
        return (name.startswith(("Random", "IAA")) or name in ALBUMENTATIONS_RANDOM_TRANSFORMS
                or name in ALBUMENTATIONS_COIN_FLIPS)
    if module in DETECTRON2_TRANSFORM_MODULES:
        return name.startswith("Random") or name in DETECTRON2_RANDOM_TRANSFORMS
    return False


def sizes_at_random(qualified: str) -> bool:
    """Whether the random transform `qualified` sets the size of the image it returns (`SIZING_RANDOM_TRANSFORMS`)."""
    return qualified.rpartition(".")[2] in SIZING_RANDOM_TRANSFORMS.get(transform_library(qualified) or "", ())


def is_sometimes_applied(qualified: str) -> bool:
    """Whether `qualified` names an albumentations transform doing one fixed thing, with a probability `p` of 1 by
    default (`Compose`, `Resize`, `Normalize`, ...): random when given a `p` below 1."""
    module, _, name = qualified.rpartition(".")
    return module in ALBUMENTATIONS_MODULES and name in ALBUMENTATIONS_FIXED_TRANSFORMS


# --- dropout --------------------------------------------------------------------------------------
# torch_npu adds `DropoutWithByteMask` to torch.nn (and has it in torch_npu.contrib), with the functional form.
TORCH_DROPOUT_MODULES = frozenset(
    ["torch.nn." + n for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                               "FeatureAlphaDropout", "DropoutWithByteMask")]
    + ["torch_npu.contrib.module.DropoutWithByteMask", "torch_npu.contrib.module.dropout.DropoutWithByteMask"]
)
TORCH_DROPOUT_FUNCTIONS = frozenset(
    ["torch.nn.functional." + n for n in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                          "feature_alpha_dropout")]
    + ["torch.dropout", "torch.alpha_dropout", "torch.feature_dropout", "torch.feature_alpha_dropout"]
    + ["torch_npu.contrib.function.dropout_with_byte_mask", "torch_npu.contrib.function.npu_functional."
       "dropout_with_byte_mask", "torch_npu.dropout_with_byte_mask"]
)
# torch_npu's fused kernels that drop at random: name -> (position, keyword) of the drop probability, always
# applied (`npu_dropout_with_add_softmax(self, x1, alpha, prob, dim)`, `_npu_dropout(self, p)`, the old
# `torch.npu_dropoutV2(self, seed, p)`).
NPU_DROP_PROBABILITY: dict[str, tuple[int, str]] = {
    "torch_npu.npu_dropout_with_add_softmax": (3, "prob"), "torch_npu._npu_dropout": (1, "p"),
    "torch.npu_dropoutV2": (2, "p"),
    # the mask alone, drawn on the NPU (ModelZoo's GPT-2 draws it ahead on a side stream for `npu_dropout_do_mask`)
    "torch_npu.npu_dropout_gen_mask": (1, "p"), "torch.npu_dropout_gen_mask": (1, "p"),
}
# Fused attention kernels that drop attention weights when their keep probability is below 1 (default 1: none):
# name -> (position, keyword) of keep_prob (position None: keyword only). torch_npu's (`npu_fusion_attention_v2`
# takes it after `*`), MindSpeed's wrapper of its own v2 kernel (keyword only, as MindSpeed-LLM's ring attention
# calls it), and MindSpore's (mindformers' flash attention: `FlashAttentionScore(head_num, keep_prob=1 - p)`).
FUSED_ATTENTION_KEEP_PROBABILITY: dict[str, tuple[int | None, str]] = {
    "torch_npu.npu_fusion_attention": (9, "keep_prob"), "torch_npu.npu_fusion_attention_v2": (None, "keep_prob"),
    "torch_npu.npu_flash_attention": (9, "keep_prob"),  # its older name (ModelZoo's ChatGLM2), same arguments
    "mindspeed.ops.fusion_attention_v2.npu_fusion_attention": (None, "keep_prob"),
    "mindspore.ops.operations.nn_ops.FlashAttentionScore": (1, "keep_prob"),
    **dict.fromkeys([f"{m}.flash_attention_score" for m in ("mindspore.ops", "mindspore.ops.function",
                                                            "mindspore.ops.function.nn_func")], (11, "keep_prob")),
}
# Modules whose constructor takes `dropout=` (and the default when it is not given).
TORCH_DROPOUT_KEYWORD_MODULES: dict[str, float] = {
    "torch.nn.MultiheadAttention": 0.0, "torch.nn.LSTM": 0.0, "torch.nn.GRU": 0.0, "torch.nn.RNN": 0.0,
    "torch.nn.Transformer": 0.1, "torch.nn.TransformerEncoderLayer": 0.1,
    "torch.nn.TransformerDecoderLayer": 0.1,
}
SDPA_FUNCTIONS = frozenset({"torch.nn.functional.scaled_dot_product_attention"})
# Transformer Engine's modules that drop inside its fused kernels (cuDNN / flash attention, fused bias-dropout-add),
# which no dropout patching reaches: name -> {keyword: ((position, default))}.
_TE_DPA = {"attention_dropout": (3, 0.0)}
_TE_MHA = {"attention_dropout": (3, 0.1)}
_TE_LAYER = {"hidden_dropout": (5, 0.1), "attention_dropout": (6, 0.1)}
TE_DROPOUT_MODULES: dict[str, dict[str, tuple[int, float]]] = {
    **dict.fromkeys(("transformer_engine.pytorch.DotProductAttention",
                     "transformer_engine.pytorch.attention.DotProductAttention"), _TE_DPA),
    **dict.fromkeys(("transformer_engine.pytorch.MultiheadAttention",
                     "transformer_engine.pytorch.attention.MultiheadAttention"), _TE_MHA),
    **dict.fromkeys(("transformer_engine.pytorch.TransformerLayer",
                     "transformer_engine.pytorch.transformer.TransformerLayer"), _TE_LAYER),
}
# Attention kernels outside torch that drop attention weights inside their own CUDA kernel, which no dropout patching
# reaches: name -> (position, keyword) of the drop probability (default 0, or required). FlashAttention 2's
# functions (flash_attn/flash_attn_interface.py, also exported by the package), its 1.x `flash_attn_unpadded_*`
# names, and xformers' `memory_efficient_attention(query, key, value, attn_bias=None, p=0.0, ...)`.
_FLASH_ATTN_DROPOUT = {"flash_attn_func": 3, "flash_attn_qkvpacked_func": 1, "flash_attn_kvpacked_func": 2,
                       "flash_attn_varlen_func": 7, "flash_attn_varlen_qkvpacked_func": 3,
                       "flash_attn_varlen_kvpacked_func": 6}
_FLASH_ATTN_1_DROPOUT = {"flash_attn_unpadded_func": 7, "flash_attn_unpadded_qkvpacked_func": 3,
                         "flash_attn_unpadded_kvpacked_func": 6}
KERNEL_ATTENTION_DROPOUT: dict[str, tuple[int, str]] = {
    **{f"{module}.{name}": (position, "dropout_p") for module in ("flash_attn", "flash_attn.flash_attn_interface")
       for name, position in _FLASH_ATTN_DROPOUT.items()},
    **{f"flash_attn.flash_attn_interface.{name}": (position, "dropout_p")
       for name, position in _FLASH_ATTN_1_DROPOUT.items()},
    **dict.fromkeys(("xformers.ops.memory_efficient_attention", "xformers.ops.fmha.memory_efficient_attention"),
                    (4, "p")),
}
# Adapter configs whose layers get a dropout of their own (PEFT wraps each adapted layer's input in `nn.Dropout(p)`):
# name -> the keyword of its probability (default 0).
ADAPTER_DROPOUT_CONFIGS: dict[str, str] = {
    f"{package}.{config}": "lora_dropout"
    for package in ("peft", "peft.tuners.lora", "peft.tuners.adalora", "mindnlp.peft", "mindnlp.peft.tuners.lora")
    for config in ("LoraConfig", "AdaLoraConfig")
}
# The keep_prob primitives (`ops.Dropout`, `Dropout2D`, `Dropout3D`) under the names model code imports them by
# (`from mindspore.ops import operations as P`: mindformers' `P.Dropout(keep_prob)`).
_MS_KEEP_PROB_PRIMITIVES = frozenset(f"{module}.{name}" for module in (
    "mindspore.ops", "mindspore.ops.operations", "mindspore.ops.auto_generate", "mindspore.ops.auto_generate.gen_ops_prim")
    for name in ("Dropout", "Dropout2D", "Dropout3D"))
MINDSPORE_DROPOUT = _MS_KEEP_PROB_PRIMITIVES | frozenset({
    "mindspore.nn.Dropout", "mindspore.nn.Dropout1d", "mindspore.nn.Dropout2d", "mindspore.nn.Dropout3d",
    "mindspore.ops.dropout", "mindspore.ops.dropout1d", "mindspore.ops.dropout2d", "mindspore.ops.dropout3d",
    "mindspore.mint.nn.Dropout", "mindspore.mint.nn.functional.dropout", "mindspore.mint.nn.Dropout2d",
    "mindspore.mint.nn.functional.dropout2d", "mindspore.nn.DropoutExt", "mindspore.nn.Dropout2dExt",
    "mindspore.ops.function.nn_func.dropout_ext", "mindspore.ops.function.nn_func.dropout2d_ext",
})
# MindSpore's generated dropout primitives, which take the probability with each call (`DropoutExt()(input, p,
# seed, offset)`: mindformers' parallel-core `Dropout`; `mint`'s dropouts call the other two): reported where made.
MINDSPORE_CALL_TIME_DROPOUT = frozenset(f"{module}.{name}" for module in (
    "mindspore.ops.auto_generate", "mindspore.ops.auto_generate.gen_ops_prim")
    for name in ("DropoutExt", "FuncDropoutExt", "Dropout2dExt"))
# ... and their ready-made instances, called at once: name -> (position, keyword) of the probability, always applied.
MINDSPORE_DROPOUT_OPS: dict[str, tuple[int, str]] = {
    f"{module}.{name}": (1, "p") for module in ("mindspore.ops.auto_generate", "mindspore.ops.auto_generate.gen_ops_prim")
    for name in ("dropout_ext_op", "func_dropout_ext_op", "dropout2d_ext_op")}
# The masks MindSpore's fused attention is given (mindformers' flash attention): msprobe-kit's seed_all leaves them.
MINDSPORE_FUSED_DROPOUT_MASKS = frozenset({"mindspore.ops.DropoutGenMask", "mindspore.ops.operations.DropoutGenMask"})

# Stochastic depth (DropPath): drops whole residual branches at random in training, like dropout, but through
# `bernoulli_`/`torch.rand`, which msprobe's `seed_all(rm_dropout=True)` and PrecisionDebugger do not patch.
# Layers: name -> (position, keyword) of the drop probability (default 0: off); torchvision's takes it required.
STOCHASTIC_DEPTH_MODULES: dict[str, tuple[int, str]] = {
    **dict.fromkeys(("timm.layers.DropPath", "timm.layers.drop.DropPath", "timm.models.layers.DropPath",
                     "timm.models.layers.drop.DropPath", "mindcv.models.layers.DropPath",
                     "mindcv.models.layers.drop_path.DropPath"), (0, "drop_prob")),
    **dict.fromkeys(("torchvision.ops.StochasticDepth", "torchvision.ops.stochastic_depth.StochasticDepth"),
                    (0, "p")),
}
# Functions: name -> ((position, keyword) of the probability, (position, keyword) of `training`, its default).
STOCHASTIC_DEPTH_FUNCTIONS: dict[str, tuple[tuple[int, str], tuple[int, str], bool]] = {
    **dict.fromkeys(("timm.layers.drop_path", "timm.layers.drop.drop_path", "timm.models.layers.drop_path"),
                    ((1, "drop_prob"), (2, "training"), False)),
    **dict.fromkeys(("torchvision.ops.stochastic_depth", "torchvision.ops.stochastic_depth.stochastic_depth"),
                    ((1, "p"), (3, "training"), True)),
}
# The class name of timm's layer, which model code copies (DINO, DeiT, Swin, ConvNeXt define their own): a
# `DropPath(p)` of the user's code is stochastic depth too.
STOCHASTIC_DEPTH_CLASS = "DropPath"
# The model-level stochastic-depth rate that timm's `create_model`, mindcv's `create_model`, `torch.hub.load`
# and the model factories of DINO, DeiT, MAE, Swin, ... take: on any call. timm's blocks take a per-block
# `drop_path=`: on calls into timm.
STOCHASTIC_DEPTH_KEYWORD = "drop_path_rate"
STOCHASTIC_DEPTH_BLOCK_KEYWORD = "drop_path"
# Model factories whose `drop_rate=` turns on the dropout layers of the model they build (timm's classifier and, in
# its ViTs, position and projection dropout; mindcv's likewise): their own layers take the rate as a parameter.
FACTORY_DROPOUT_KEYWORD = "drop_rate"
DROPOUT_MODEL_FACTORIES = frozenset({"timm.create_model", "timm.models.create_model", "mindcv.create_model",
                                     "mindcv.models.create_model"})

# Where `dropout=` sits positionally in those constructors.
TORCH_DROPOUT_KEYWORD_POSITIONS: dict[str, int] = {
    "torch.nn.MultiheadAttention": 2, "torch.nn.LSTM": 5, "torch.nn.GRU": 5, "torch.nn.RNN": 6,
    "torch.nn.Transformer": 5, "torch.nn.TransformerEncoderLayer": 3, "torch.nn.TransformerDecoderLayer": 3,
}
# Recurrent modules apply `dropout=` only between stacked layers: with `num_layers=1` (argument 2,
# the default) it never runs.
TORCH_RNN_MODULES = frozenset({"torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN"})
# Functional dropouts whose `training` argument defaults to False (they do nothing unless told).
TORCH_DROPOUT_OFF_BY_DEFAULT = frozenset({"torch.nn.functional.alpha_dropout",
                                          "torch.nn.functional.feature_alpha_dropout"})
# MindSpore dropouts whose first argument is `keep_prob` (1.0 means no dropout), not `p`.
MINDSPORE_KEEP_PROB_DROPOUT = _MS_KEEP_PROB_PRIMITIVES | {"mindspore.nn.Dropout"}

# --- training steps (loop detection) ----------------------------------------------------------
GRAD_FUNCTION_FACTORIES = frozenset({
    "mindspore.value_and_grad", "mindspore.ops.value_and_grad", "mindspore.grad", "mindspore.ops.grad",
    "mindspore.ops.composite.value_and_grad", "torch.func.grad", "torch.func.grad_and_value",
    # mindtorch's `value_and_grad(fn, params_or_argnums)` (autograd/function.py): MindSpore's, which by default also
    # adds the gradients to each parameter's `.grad` for an optimizer's `step()`
    *(f"{root}{module}.value_and_grad" for root in TORCH_API_ON_MINDSPORE
      for module in ("", ".autograd", ".autograd.function")),
})
MINDSPORE_TRAIN_STEP_CELLS = frozenset({
    "mindspore.nn.TrainOneStepCell", "mindspore.nn.TrainOneStepWithLossScaleCell",
    "mindspore.nn.wrap.TrainOneStepCell", "mindspore.boost.BoostTrainOneStepCell",
})
# Library functions that run one whole training step, optimizer update included, given the model and optimizer:
# Megatron's `train_step(forward_step_func, data_iterator, model, optimizer, scheduler, config)`, which
# MindSpeed-LLM's and other Megatron-based training loops call once per iteration.
LIBRARY_TRAIN_STEPS = frozenset({"megatron.training.training.train_step", "megatron.training.train_step"})
# torchrec's train pipelines: `pipeline.progress(dataloader_iter)` runs forward, backward and the optimizer step
# of one batch while the model trains (torchrec/distributed/train_pipeline/train_pipelines.py; not
# EvalPipelineSparseDist, nor StagedTrainPipeline, which only feeds the batch). DLRM's torchrec_dlrm/dlrm_main.py.
TORCHREC_TRAIN_PIPELINES = frozenset(
    f"{module}.{name}"
    for module in ("torchrec.distributed", "torchrec.distributed.train_pipeline",
                   "torchrec.distributed.train_pipeline.train_pipelines")
    for name in ("TrainPipelineBase", "TrainPipelinePT2", "TrainPipelineSparseDist", "TrainPipelineFusedSparseDist",
                 "TrainPipelineSemiSync", "PrefetchTrainPipelineSparseDist", "TrainPipelineSparseDistCompAutograd"))
# Megatron's `pretrain(...)`: it builds the model and runs the training loop of megatron/training/training.py.
MEGATRON_PRETRAIN = frozenset({"megatron.training.pretrain", "megatron.training.training.pretrain"})
# `mindspore.data_sink(fn, dataset, sink_size=...)`: a function that runs `fn` on `sink_size` batches per call.
MINDSPORE_DATA_SINK = frozenset({"mindspore.data_sink", "mindspore.train.data_sink",
                                 "mindspore.train.data_sink.data_sink"})
# Words of a called function's name that mark work between training steps, not of one: validation, evaluation,
# checkpointing, step-end callbacks (fairseq's `validate_and_save`, minGPT's `trigger_callbacks`, `torch.save`).
BETWEEN_STEPS_WORDS = frozenset({"valid", "validate", "validation", "val", "eval", "evaluate", "evaluation", "test",
                                 "save", "checkpoint", "ckpt", "callback", "callbacks"})
# Activation checkpointing recomputes a forward inside the step: no checkpoint saved.
ACTIVATION_CHECKPOINT_MODULES = ("torch.utils.checkpoint", "deepspeed.checkpointing",
                                 "megatron.core.tensor_parallel.random")
MINDSPORE_MODEL_CLASSES = frozenset({"mindspore.Model", "mindspore.train.Model", "mindspore.train.model.Model"})
# The keywords of MindSpore's `Model.train(epoch, dataset, callbacks=None, dataset_sink_mode=False, sink_size=-1,
# initial_epoch=0)`: in a MindSpore script they tell it, also of a model a project factory built (mindediting's
# `trainer = create_trainer_by_name(...)` then `trainer.train(..., dataset_sink_mode=...)`).
MINDSPORE_MODEL_TRAIN_KEYWORDS = frozenset({"callbacks", "dataset_sink_mode", "sink_size", "initial_epoch"})
OPTIMIZER_MODULES = ("torch.optim", *(f"{root}.optim" for root in TORCH_API_ON_MINDSPORE), "mindspore.nn", "mindspore.experimental.optim", "mindspore.mint.optim",
                     "transformers.optimization", "deepspeed.ops.adam", "apex.optimizers")
OPTIMIZER_CLASS_NAMES = frozenset({
    "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "LBFGS", "NAdam", "RAdam", "RMSprop",
    "Rprop", "SparseAdam", "Adafactor", "Momentum", "Lamb", "LAMB", "LARS", "FTRL", "ProximalAdagrad",
    "AdaSumByDeltaWeightWrapCell", "AdamWeightDecay", "FusedAdam", "DeepSpeedCPUAdam", "Muon",
})


# Library model factories that build on the CPU (unless given `device=`): torchvision's and timm's.
CPU_MODEL_FACTORY_PACKAGES = ("torchvision.models.",)
CPU_MODEL_FACTORIES = frozenset({"timm.create_model", "timm.models.create_model"})


def is_cpu_model_factory(qualified: str) -> bool:
    """`torchvision.models.resnet50`, `timm.create_model`: a model built on the CPU."""
    return qualified in CPU_MODEL_FACTORIES or qualified.startswith(CPU_MODEL_FACTORY_PACKAGES)


def is_torch_module_class(qualified: str) -> bool:
    """`torch.nn.Linear` and the other module classes of torch.nn (not its functions)."""
    return qualified.startswith(TORCH_MODULE_PACKAGE + ".") and qualified.rpartition(".")[2][:1].isupper()


def is_optimizer_class(qualified: str) -> bool:
    """Whether `qualified` names an optimizer class of a known framework."""
    module, _, name = qualified.rpartition(".")
    return name in OPTIMIZER_CLASS_NAMES and any(module == m or module.startswith(m + ".")
                                                 for m in OPTIMIZER_MODULES)


# --- observation ------------------------------------------------------------------------------
HOST_SYNC_METHODS = frozenset({"item", "cpu", "numpy", "tolist", "asnumpy"})
HOST_SYNC_CALLS = frozenset({"torch.cuda.synchronize", "torch.npu.synchronize", "torch_npu.npu.synchronize",
                             "torch.accelerator.synchronize", "mindspore.hal.synchronize", "mindspore.synchronize",
                             "mindspore.runtime.synchronize"})
# Calls that run the function they are handed after the step's device work, not in it: XLA's step closures
# (`xm.add_step_closure(print_loss, args=(loss,))`, XLA's remedy for logging a step's values).
DEFERRED_STEP_CLOSURES = frozenset({"torch_xla.core.xla_model.add_step_closure"})
BACKWARD_HOOK_METHODS = frozenset({
    "register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook",
    "register_backward_pre_hook",  # MindSpore Cell
})
# Classes that run a function they are given, at (position, keyword), under FakeTensorMode to make example inputs for
# tracing: AutoParallel's `input_fn` (`with self.fake_mode: inputs = self.input_fn()`), whose draws draw nothing.
FAKE_INPUT_FUNCTIONS = {"autoparallel.api.AutoParallel": (1, "input_fn")}
# DeepSpeed's gathering of ZeRO-3 parameters: whole, on the accelerator, in the `with` block.
DEEPSPEED_GATHERS = frozenset({"deepspeed.zero.GatheredParameters",
                               "deepspeed.runtime.zero.partition_parameters.GatheredParameters"})
# A module's hooks: the function given runs in its forward (or backward) on the tensors it takes or makes.
MODULE_HOOK_METHODS = BACKWARD_HOOK_METHODS | {"register_forward_hook", "register_forward_pre_hook"}
# Hooks installed on every module at once, and MindSpore's backward-hook primitive.
BACKWARD_HOOK_CALLS = frozenset({
    "torch.nn.modules.module.register_module_backward_hook",
    "torch.nn.modules.module.register_module_full_backward_hook",
    "torch.nn.modules.module.register_module_full_backward_pre_hook",
    "mindspore.ops.HookBackward", "mindspore.ops.operations.HookBackward",
})

# --- memory layout ----------------------------------------------------------------------------
# Tensor methods / properties / functions that return a strided (non-contiguous) view.
TRANSPOSE_METHODS = frozenset({"t", "transpose", "permute", "swapaxes", "swapdims"})
TRANSPOSE_PROPERTIES = frozenset({"T", "mT", "H", "mH"})
TRANSPOSE_FUNCTIONS = frozenset({
    "torch.t", "torch.transpose", "torch.permute", "torch.swapaxes", "torch.swapdims",
    "mindspore.ops.transpose", "mindspore.ops.permute", "mindspore.ops.swapaxes", "mindspore.ops.swapdims",
    "mindspore.ops.t", "mindspore.mint.transpose", "mindspore.mint.permute", "mindspore.mint.swapaxes",
    "mindspore.mint.t",
})
# Calls whose kernel (and summation order) depends on the memory layout of their operands.
MATMUL_FUNCTIONS = frozenset({
    "torch.matmul", "torch.mm", "torch.bmm", "torch.addmm", "torch.baddbmm", "torch.nn.functional.linear",
    "mindspore.ops.matmul", "mindspore.ops.mm", "mindspore.ops.bmm", "mindspore.ops.dense",
    "mindspore.mint.matmul", "mindspore.mint.mm", "mindspore.mint.bmm", "mindspore.mint.nn.functional.linear",
    # torch_npu's matmuls (ModelZoo's `npu_bmmV2(grad.transpose(-2, -1), self, [])`), also fused with a collective
    "torch_npu.npu_bmmV2", "torch_npu.npu_linear", "torch_npu.npu_mm_all_reduce_base",
    "torch_npu.npu_all_gather_base_mm", "torch_npu.npu_mm_reduce_scatter_base",
})
# Matmuls of the form `input @ weight.T`: they transpose their weight themselves, so a weight passed as `w.t()`
# reaches the kernel as `w`, in its own layout; only their input is a matmul operand as given.
LINEAR_FUNCTIONS = frozenset({"torch.nn.functional.linear", "torch_npu.npu_linear", "mindspore.ops.dense",
                              "mindspore.mint.nn.functional.linear"})
MATMUL_METHODS = frozenset({"matmul", "mm", "bmm"})
# Base classes of hand-written backward code (`backward` of a torch.autograd.Function).
AUTOGRAD_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function",
                                     "torch.autograd.function.InplaceFunction"})

# --- non-deterministic operators --------------------------------------------------------------
# What `torch.use_deterministic_algorithms` documents as non-deterministic on CUDA (torch 2.13), by
# qualified name (`torch.Tensor.<method>` for methods) -> the deterministic way out. Convolutions
# (cudnn rules), gather/index_select/repeat_interleave (backward only, everywhere in real code, and
# fixed by the deterministic-algorithms switch) and cumsum (mostly integer positions) are left out.
# No MindSpore counterpart: MindSpore 2.10 documents no operator as non-deterministic by atomic
# accumulation (`ops.unsorted_segment_sum`, `ScatterAdd`, `tensor_scatter_add`, `IndexAdd` say nothing of
# it). Its docstrings only warn that duplicate indices leave the winner undefined (`TensorScatterUpdate`,
# `ScatterUpdate`, `tensor_scatter_elements`, `Tensor.index_copy_`, `Tensor.index_put_` without accumulate),
# which nothing says `set_deterministic` changes, that `IndexAdd(use_lock=False)` is unpredictable, and
# that `Tensor.scatter_add_` is deterministic under `set_deterministic(True)` only with a contiguous
# index; none of those but the duplicate-index writes (mostly on unique indices) occurs in the MindSpore
# model zoos. On Ascend, CANN lists many kernels that accumulate (matmul, BatchNorm, NLLLoss, IndexAdd,
# upsample and pooling backward, ...) as non-deterministic until deterministic computing is on: the
# whole-script switch (no-deterministic-algos) is the check there, not a list of operators.
DETERMINISTIC_SWITCH_FIX = ("call `torch.use_deterministic_algorithms(True)` (with "
                            "`CUBLAS_WORKSPACE_CONFIG=:4096:8`) so it uses its deterministic kernel")
_INTERPOLATE_FIX = "its backward has no deterministic CUDA kernel in linear and bicubic modes: use mode='nearest' while debugging"
_ADAPTIVE_FIX = ("its backward has no deterministic CUDA kernel: pool with kernel_size = stride = input size // "
                 "output size when they divide (global pooling, output size 1, is already deterministic)")
_REFLECT_FIX = "its backward has no deterministic CUDA kernel: use zero or circular padding while debugging"
_NO_KERNEL_FIX = "it has no deterministic CUDA kernel: compute it on the CPU while debugging"
# FlashAttention 2 (`flash_attn`) and 3 (`flash_attn_interface`, Hopper): `deterministic=False` by default.
FLASH_ATTENTION_MODULES = ("flash_attn", "flash_attn.flash_attn_interface", "flash_attn_interface")
FLASH_ATTENTION_FUNCTIONS = ("flash_attn_func", "flash_attn_varlen_func", "flash_attn_qkvpacked_func",
                             "flash_attn_kvpacked_func", "flash_attn_varlen_qkvpacked_func",
                             "flash_attn_varlen_kvpacked_func")
# FlashAttention 1.0.x (`flash_attn.flash_attn_interface` only): its backward's heuristic may split the keys over
# thread blocks that add the query gradients with atomics; `deterministic=True` (since 1.0.0) keeps one split.
FLASH_ATTENTION_1_FUNCTIONS = ("flash_attn_unpadded_func", "flash_attn_unpadded_qkvpacked_func",
                               "flash_attn_unpadded_kvpacked_func", "flash_attn_unpadded_qkvpacked_split_func")
# transformers' FlashAttention (`from_pretrained(..., attn_implementation="flash_attention_2")`, "flash_attention_3"
# or a hub kernel "kernels-community/flash-attn2") gives flash-attn `deterministic=True` only when the environment
# holds FLASH_ATTENTION_DETERMINISTIC=1, read at every call (modeling_flash_attention_utils.py, 5.x): torch's switch
# does not reach it. `enable_full_determinism` sets it (so does the Trainer given `full_determinism=True`), and
# msprobe's `seed_all(mode=True)`; `set_seed(seed, deterministic=True)` does not.
HF_ATTENTION_KEYWORD = "attn_implementation"
FLASH_ATTENTION_DETERMINISTIC_ENV = "FLASH_ATTENTION_DETERMINISTIC"
FLASH_ATTENTION_DETERMINISM_CALLS = frozenset({
    "transformers.enable_full_determinism", "transformers.trainer_utils.enable_full_determinism",
    "msprobe_runtime.pytorch.seed_all", "msprobe.pytorch.seed_all", *HF_TRAINING_ARGUMENTS})
# xformers' `memory_efficient_attention`: its backward dispatches to FlashAttention's (atomic adds of the query
# gradients) or to cutlass's, which splits the keys over thread blocks. Under the deterministic switch xformers 0.0.22
# and later skip the flash backward (`IS_DETERMINISTIC = False`) and run cutlass's with one split (0.0.21 and earlier
# raise there: "mem_efficient_attention_backward_cutlass does not have a deterministic implementation").
XFORMERS_ATTENTION = ("xformers.ops.memory_efficient_attention", "xformers.ops.fmha.memory_efficient_attention")
_XFORMERS_ATTENTION_FIX = ("its backward (FlashAttention's, or cutlass's with the keys split over thread blocks) adds "
                           "the query gradients with atomics: " + DETERMINISTIC_SWITCH_FIX.replace(
                               "it uses its deterministic kernel", "xformers runs its deterministic cutlass backward "
                               "(0.0.22 and later; earlier versions raise under it: upgrade)"))
_NLL_2D_FIX = ("it has no deterministic CUDA kernel (it raises under the deterministic switch): put the classes "
               "last and flatten, `(N*d, C)` logits and `(N*d,)` targets (`F.cross_entropy(logits.flatten(0, 1), "
               "target.flatten())` for `(N, L, C)` logits)")
# mmcv's CUDA ops whose backward adds the input gradients with `atomicAdd` (mmcv/ops/csrc/common/cuda/: roi_align,
# deform_conv and modulated_deform_conv's col2im, ms_deform_attn's col2im), by submodule of `mmcv.ops` -> their
# names there and the way out; their forwards are deterministic. mmcv never asks torch's deterministic switch, so
# it does not reach them (torchvision's `roi_align` falls back to a deterministic implementation under it on CUDA).
_MMCV_ATOMIC = ("mmcv's CUDA backward adds the input gradients with `atomicAdd`, and torch's deterministic switch "
                "does not reach mmcv's kernels: ")
_MMCV_ON_CPU = "run it on the CPU while debugging"
MMCV_ATOMIC_OPS = {
    "roi_align": (("RoIAlign", "roi_align"), "`RoIAlign(..., use_torchvision=True)` runs torchvision's `roi_align` "
                  "instead, which falls back to a deterministic implementation under "
                  "`torch.use_deterministic_algorithms(True)` (recent torchvision)"),
    "deform_conv": (("DeformConv2d", "DeformConv2dPack", "deform_conv2d"), _MMCV_ON_CPU),
    "modulated_deform_conv": (("ModulatedDeformConv2d", "ModulatedDeformConv2dPack", "modulated_deform_conv2d"),
                              _MMCV_ON_CPU),
    "multi_scale_deform_attn": (("MultiScaleDeformableAttention",), _MMCV_ON_CPU),
}
NONDETERMINISTIC_OPS: dict[str, str] = {
    **dict.fromkeys(("torch.index_add", "torch.Tensor.index_add", "torch.Tensor.index_add_",
                     "torch.scatter_add", "torch.Tensor.scatter_add", "torch.Tensor.scatter_add_",
                     "torch.Tensor.scatter", "torch.Tensor.scatter_",  # with reduce=
                     "torch.index_put", "torch.Tensor.index_put", "torch.Tensor.index_put_",  # accumulate=True
                     "torch.index_copy", "torch.Tensor.index_copy", "torch.Tensor.index_copy_",
                     "torch.nn.MaxPool3d", "torch.nn.functional.max_pool3d",
                     "torch.nn.ReplicationPad1d", "torch.nn.ReplicationPad2d", "torch.nn.ReplicationPad3d"),
                    DETERMINISTIC_SWITCH_FIX),
    **dict.fromkeys(("torch.scatter_reduce", "torch.Tensor.scatter_reduce", "torch.Tensor.scatter_reduce_"),
                    "with reduce='sum'/'mean' " + DETERMINISTIC_SWITCH_FIX
                    + "; reduce='prod' has no deterministic CUDA kernel"),
    "torch.Tensor.put_": ("it has no deterministic CUDA kernel: use `x.view(-1).index_put_((index,), source, "
                          "accumulate=True)`, which is deterministic on CUDA"),
    **dict.fromkeys(("torch.bincount", "torch.Tensor.bincount"),
                    "with `weights` it has no deterministic CUDA kernel: use `torch.zeros(n).index_put_((x,), "
                    "weights, accumulate=True)` instead"),
    **dict.fromkeys(("torch.histc", "torch.Tensor.histc"),
                    "it has no deterministic CUDA kernel: use `torch.bucketize` + `torch.bincount` (no weights)"),
    **dict.fromkeys(("torch.median", "torch.Tensor.median"),
                    "with `dim` its indices are not deterministic on CUDA: take the middle element of "
                    "`torch.sort(x, dim, stable=True)` instead"),
    **dict.fromkeys(("torch.nn.EmbeddingBag", "torch.nn.functional.embedding_bag"),
                    "with mode='max' its backward has no deterministic CUDA kernel: use mode='sum' or 'mean'"),
    **dict.fromkeys(("torch.nn.CTCLoss", "torch.nn.functional.ctc_loss"),
                    "its backward has no deterministic CUDA kernel: compute the loss on the CPU while debugging"),
    **dict.fromkeys(("torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.Upsample",
                     "torch.nn.functional.upsample_bilinear", "torch.nn.UpsamplingBilinear2d"), _INTERPOLATE_FIX),
    **dict.fromkeys(("torch.nn.AdaptiveAvgPool2d", "torch.nn.AdaptiveAvgPool3d", "torch.nn.AdaptiveMaxPool2d",
                     "torch.nn.functional.adaptive_avg_pool2d", "torch.nn.functional.adaptive_avg_pool3d",
                     "torch.nn.functional.adaptive_max_pool2d"), _ADAPTIVE_FIX),
    **dict.fromkeys(("torch.nn.AvgPool3d", "torch.nn.functional.avg_pool3d"),
                    "its backward has no deterministic CUDA kernel: for kernel_size == stride use a reshape and "
                    "`.mean()`, otherwise compute on the CPU while debugging"),
    **dict.fromkeys(("torch.nn.FractionalMaxPool2d", "torch.nn.FractionalMaxPool3d",
                     "torch.nn.functional.fractional_max_pool2d", "torch.nn.functional.fractional_max_pool3d"),
                    "it samples random regions and its backward is not deterministic on CUDA: use MaxPool while "
                    "debugging"),
    **dict.fromkeys(("torch.nn.MaxUnpool1d", "torch.nn.MaxUnpool2d", "torch.nn.MaxUnpool3d",
                     "torch.nn.functional.max_unpool1d", "torch.nn.functional.max_unpool2d",
                     "torch.nn.functional.max_unpool3d"),
                    "it has no deterministic implementation: use nearest-neighbour upsampling while debugging"),
    **dict.fromkeys(("torch.nn.ReflectionPad1d", "torch.nn.ReflectionPad2d", "torch.nn.ReflectionPad3d"),
                    _REFLECT_FIX),
    "torch.nn.functional.pad": ("with mode='reflect'/'replicate' its backward is not deterministic on CUDA: use "
                                "mode='constant' or 'circular' while debugging"),
    **dict.fromkeys(("torch.nn.Conv1d", "torch.nn.Conv2d", "torch.nn.Conv3d"),
                    "padding_mode='reflect'/'replicate' pads with a non-deterministic CUDA backward: use "
                    "padding_mode='zeros' or 'circular' while debugging"),
    "torch.nn.functional.grid_sample": _NO_KERNEL_FIX.replace("it has", "its backward has"),
    # grid_sample's backward called explicitly (stylegan3's grid_sample_gradfix, for its double backward)
    **dict.fromkeys(("torch.ops.aten.grid_sampler_2d_backward", "torch.ops.aten.grid_sampler_3d_backward"),
                    "it is `F.grid_sample`'s backward, which has no deterministic CUDA kernel: compute it on the CPU "
                    "while debugging"),
    "torch.nn.NLLLoss2d": _NLL_2D_FIX,
    **dict.fromkeys((f"{module}.{name}" for module in FLASH_ATTENTION_MODULES for name in FLASH_ATTENTION_FUNCTIONS),
                    "its backward adds the query gradients with atomics unless told otherwise, and the deterministic "
                    "switch does not reach it: pass `deterministic=True` while debugging"),
    **dict.fromkeys((f"flash_attn.flash_attn_interface.{name}" for name in FLASH_ATTENTION_1_FUNCTIONS),
                    "its backward may split the keys over thread blocks that add the query gradients with atomics, "
                    "and the deterministic switch does not reach it: pass `deterministic=True` (flash-attn 1.0.0 and "
                    "later; 0.2.x has no such option: upgrade) while debugging"),
    **dict.fromkeys(XFORMERS_ATTENTION, _XFORMERS_ATTENTION_FIX),
    # on input of 3 or more dimensions (classes in dim 1) they run nll_loss2d, which adds atomically
    **dict.fromkeys(("torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss", "torch.nn.CrossEntropyLoss",
                     "torch.nn.NLLLoss"), "on input of 3 or more dimensions it runs `nll_loss2d`, which " + _NLL_2D_FIX[3:]),
    **{f"mmcv.ops{module}.{name}": _MMCV_ATOMIC + way_out for submodule, (names, way_out) in MMCV_ATOMIC_OPS.items()
       for name in names for module in ("", f".{submodule}")},
    **dict.fromkeys(("mmcv.ops.point_sample", "mmcv.ops.point_sample.point_sample"),
                    "it runs `F.grid_sample`, whose " + _NO_KERNEL_FIX.replace("it has", "backward has")),
}
# Entries whose forward is deterministic: only their backward is not (no finding under `torch.no_grad()`).
NONDETERMINISTIC_BACKWARD_ONLY = frozenset(
    name for name in NONDETERMINISTIC_OPS
    if name.rsplit(".", 1)[1] in {
        "EmbeddingBag", "embedding_bag", "CTCLoss", "ctc_loss", "interpolate", "upsample", "Upsample",
        "upsample_bilinear", "UpsamplingBilinear2d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool2d",
        "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d", "AvgPool3d", "avg_pool3d",
        "MaxPool3d", "max_pool3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
        "ReplicationPad2d", "ReplicationPad3d", "pad", "Conv1d", "Conv2d", "Conv3d", "grid_sample",
        *FLASH_ATTENTION_FUNCTIONS, *FLASH_ATTENTION_1_FUNCTIONS, "memory_efficient_attention", "point_sample",
        *(name for names, _ in MMCV_ATOMIC_OPS.values() for name in names),
    }
)
GRAD_DISABLING_CONTEXTS = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad",
                                     "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.inference_mode"})
# Calls that read a checkpoint: the tensors they return need no gradient.
TORCH_CHECKPOINT_LOADS = frozenset({"torch.load", "torch.hub.load_state_dict_from_url",
                                    "torch.utils.model_zoo.load_url"})
# Tensor methods whose result needs a gradient only when their receiver does (layout, dtype, device).
RECEIVER_ONLY_METHODS = frozenset({
    "float", "half", "double", "bfloat16", "contiguous", "clone", "view", "view_as", "reshape", "reshape_as",
    "expand", "expand_as", "repeat", "squeeze", "unsqueeze", "flatten", "permute", "transpose", "t", "narrow",
    "to", "cuda", "cpu", "type", "type_as",
})
# Entries that `torch.use_deterministic_algorithms(True)` makes deterministic (no finding once it is on).
NONDETERMINISTIC_FIXED_BY_SWITCH = frozenset(
    name for name, fix in NONDETERMINISTIC_OPS.items() if fix == DETERMINISTIC_SWITCH_FIX
) | frozenset(XFORMERS_ATTENTION)


# --- seeding and determinism switches, continued (seed-missing, seed-partial, no-deterministic-algos,
# dist-no-deterministic-comm) --------------------------------------------------------------------
# Seeders that draw a fresh seed when called without one (or with None): name -> where they draw it from.
SEEDS_FROM_ENTROPY_WITHOUT_ARGUMENT: dict[str, str] = {
    "random.seed": "OS entropy", "numpy.random.seed": "OS entropy",
    **dict.fromkeys(COMPOSER_TRAINERS, "the clock (Composer's `get_random_seed()`)"),
}
# Seeders that draw a seed of their own when given None (or no seed) and return it: torchtune's
# `training.set_seed(seed=None)` draws it with `torch.randint` from torch's unseeded generator. (Lightning's
# `seed_everything(None)` does not in current releases, 2.6 checked: it reads PL_GLOBAL_SEED, else uses 0.)
SEEDERS_DRAWING_FOR_NONE = frozenset({"torchtune.training.set_seed", "torchtune.training.seed.set_seed"})
# Library setups that seed every generator from a config field and draw a fresh seed from the OS while the field
# is negative, as it is by default: qualified name -> the fields read, in order. detectron2's `default_setup(cfg,
# args)` reads `cfg.SEED` (a LazyConfig's `cfg.train.seed`), -1 unless set, and then calls `seed_all_rng(None)`.
CONFIG_SEEDED_SETUPS: dict[str, tuple[str, ...]] = dict.fromkeys(
    ("detectron2.engine.default_setup", "detectron2.engine.defaults.default_setup"), ("SEED", "train.seed"))
# Calls that switch deterministic kernels on: qualified name -> (position, keyword) of the argument that
# must be truthy (position None: keyword only), or None when the call always does.
DETERMINISM_CALLS: dict[str, tuple[int | None, str] | None] = {
    "torch.use_deterministic_algorithms": (0, "mode"),
    "torch.set_deterministic_debug_mode": (0, "debug_mode"),  # "warn"/1 or "error"/2 (torchtune's `set_seed`)
    "msprobe_runtime.pytorch.seed_all": (1, "mode"), "msprobe.pytorch.seed_all": (1, "mode"),
    "transformers.set_seed": (1, "deterministic"), "transformers.trainer_utils.set_seed": (1, "deterministic"),
    "accelerate.utils.set_seed": (2, "deterministic"), "accelerate.utils.random.set_seed": (2, "deterministic"),
    "transformers.enable_full_determinism": None, "transformers.trainer_utils.enable_full_determinism": None,
    "diffusers.utils.torch_utils.enable_full_determinism": None,
    "diffusers.utils.testing_utils.enable_full_determinism": None,
    **dict.fromkeys(LIGHTNING_TRAINER_BUILDS, (None, "deterministic")),
    **dict.fromkeys(SPEECHBRAIN_SEED_EVERYTHING, (2, "deterministic")),
    **dict.fromkeys(MMENGINE_SET_RANDOM_SEED, (1, "deterministic")),
    **dict.fromkeys(HF_TRAINING_ARGUMENTS, (None, "full_determinism")),
    **dict.fromkeys(COMPOSER_TRAINERS, (None, COMPOSER_DETERMINISTIC_KEYWORD)),
    "composer.utils.reproducibility.configure_deterministic_mode": None,
    "msprobe_runtime.mindspore.seed_all": (1, "mode"), "msprobe.mindspore.seed_all": (1, "mode"),
    "mindspore.set_deterministic": (0, "deterministic"),
    "mindspore.set_context": (None, "deterministic"), "mindspore.context.set_context": (None, "deterministic"),
}
# Megatron's set-up, itself or in `pretrain`: deterministic kernels (`torch.use_deterministic_algorithms(True)`,
# CUBLAS_WORKSPACE_CONFIG, NVTE_ALLOW_NONDETERMINISTIC_ALGO=0) and a fixed NCCL_ALGO (set, or required by older
# releases) come only with `--deterministic-mode` (`ModelParallelConfig.deterministic_mode`, False by default).
MEGATRON_SETUPS = MEGATRON_INITIALIZE | MEGATRON_PRETRAIN
# `initialize_megatron(skip_mpu_initialization=True)` returns before it starts communication (and seeds).
MEGATRON_SKIP_DISTRIBUTED = "skip_mpu_initialization"
# The option that switches Megatron's determinism on, as Megatron-LM's argument files declare it
# (megatron/training/arguments.py); a fork may lack it (gpt-neox's `megatron` takes YAML keys).
MEGATRON_DETERMINISTIC_OPTION = "--deterministic-mode"
MEGATRON_ROOT = "megatron"
# cuDNN attribute whose `True` makes convolutions deterministic.
CUDNN_DETERMINISTIC_ATTR = "deterministic"
# Calls that set HCCL_DETERMINISTIC themselves (same convention as DETERMINISM_CALLS).
HCCL_DETERMINISM_CALLS: dict[str, tuple[int | None, str] | None] = {
    "msprobe_runtime.pytorch.seed_all": (1, "mode"), "msprobe_runtime.mindspore.seed_all": (1, "mode"),
    "msprobe.pytorch.seed_all": (1, "mode"), "msprobe.mindspore.seed_all": (1, "mode"),
    "transformers.enable_full_determinism": None, "transformers.trainer_utils.enable_full_determinism": None,
    # MindSpore 2.10 sets HCCL_DETERMINISTIC itself (context.py, device_manager.py)
    "mindspore.set_deterministic": (0, "deterministic"),
    "mindspore.set_context": (None, "deterministic"), "mindspore.context.set_context": (None, "deterministic"),
}
# Environment values that switch a flag off.
FALSE_ENV_VALUES = frozenset({"", "0", "false", "off", "no"})
# Switch arguments that mean off: those, and `set_deterministic_debug_mode("default")`.
FALSE_SWITCH_VALUES = FALSE_ENV_VALUES | {"default"}
OS_ENVIRON = "os.environ"
ENV_SETTERS = frozenset({"os.environ.setdefault", "os.putenv"})  # (name, value) arguments
ENV_UPDATERS = frozenset({"os.environ.update"})  # a dict literal or keywords
# Classes whose construction means "this script trains" (their fit/train runs the steps; LightningCLI's
# `fit` subcommand, or its `cli.trainer.fit(...)`).
# mmengine's runners (OpenMMLab's training loop: MMDetection, MMSegmentation, ...), built directly or from a
# config (`Runner.from_cfg(cfg)`); their hooks go in `custom_hooks=` or through `runner.register_hook(...)`.
MMENGINE_RUNNERS = frozenset({"mmengine.runner.Runner", "mmengine.runner.runner.Runner",
                              "mmengine.runner.FlexibleRunner", "mmengine.runner._flexible_runner.FlexibleRunner"})
# What builds an mmengine runner: its class, `from_cfg`, mmengine's registry. A runner also tests and validates
# (every OpenMMLab `tools/test.py` builds one), so only its `train()` means the script trains.
MMENGINE_RUNNER_BUILDS = frozenset({*MMENGINE_RUNNERS, *(f"{runner}.from_cfg" for runner in MMENGINE_RUNNERS),
                                    "mmengine.registry.RUNNERS.build"})
# detectron2's trainers (DiffusionDet's and detectron2's tools/train_net.py subclass DefaultTrainer; the lazy-config
# script builds SimpleTrainer or AMPTrainer): `trainer.train()` runs the steps, hooks go in `register_hooks([...])`.
DETECTRON2_TRAINERS = frozenset(f"detectron2.engine.{module}{name}" for module, names in (
    ("", ("DefaultTrainer", "SimpleTrainer", "AMPTrainer", "TrainerBase")), ("defaults.", ("DefaultTrainer",)),
    ("train_loop.", ("SimpleTrainer", "AMPTrainer", "TrainerBase"))) for name in names)
# SpeechBrain's `Brain`: a recipe subclasses it (`class ASR(sb.Brain)`) and runs `asr_brain.fit(...)`.
SPEECHBRAIN_BRAINS = frozenset({"speechbrain.Brain", "speechbrain.core.Brain"})
TRAINER_CLASSES = (LIGHTNING_TRAINERS | HF_TRAINERS | LIGHTNING_CLI | SPEECHBRAIN_BRAINS | DETECTRON2_TRAINERS
                   | COMPOSER_TRAINERS)
# Library classes whose subclasses in a file are taken for them (`class MyTrainer(Trainer)` seeds and trains
# as the Trainer does, a `TrainingArguments` subclass takes `full_determinism=`).
# Dropout layers a project wraps (mindcv's `class Dropout(nn.Dropout)` in models/layers/compatibility.py).
SUBCLASSED_DROPOUT = TORCH_DROPOUT_MODULES | frozenset(
    n for n in MINDSPORE_DROPOUT if ".nn." in n and n.rpartition(".")[2][:1].isupper())
# A project's own adapter configs (ms-swift's `class LoraConfig(peft.LoraConfig)`) take their `lora_dropout=`.
SUBCLASSED_CLASSES = (SUBCLASSED_DATA_CLASSES | TRAINER_CLASSES | HF_TRAINING_ARGUMENTS | SUBCLASSED_DROPOUT
                      | frozenset(ADAPTER_DROPOUT_CONFIGS))

# --- generator objects (unseeded-generator) -------------------------------------------------------
# Factories of independent generators: qualified name -> (position, keyword) of their seed argument.
GENERATOR_FACTORIES: dict[str, tuple[int, str]] = {
    "numpy.random.default_rng": (0, "seed"), "numpy.random.RandomState": (0, "seed"),
    "numpy.random.PCG64": (0, "seed"), "numpy.random.PCG64DXSM": (0, "seed"), "numpy.random.MT19937": (0, "seed"),
    "numpy.random.Philox": (0, "seed"), "numpy.random.SFC64": (0, "seed"),
    "numpy.random.SeedSequence": (0, "entropy"), "random.Random": (0, "x"),
}
# torch generator objects ignore `torch.manual_seed`: unseeded, each starts from the same fixed default
# seed, so the script's seed does not control them (and two of them draw the same stream).
TORCH_GENERATOR_CLASSES = frozenset({"torch.Generator", "torch._C.Generator"})
# MindSpore's generator objects likewise: `mindspore.manual_seed`/`set_seed` seed only the default one, and a new
# one starts from seed 0 (MindSpore 2.10: mindformers' parallel-core `Dropout` takes its seed and offset from one).
MINDSPORE_GENERATOR_CLASSES = frozenset({"mindspore.Generator", "mindspore.common.Generator",
                                         "mindspore.common.generator.Generator"})
# MindSpore random operators that ignore `mindspore.set_seed` and take their own seeds (MindSpore 2.10, each
# checked by running it twice in two processes, with and without `mindspore.set_seed`): with the seeds at
# the values in `entropy` they draw fresh entropy (or read the clock) in every run; with another literal
# seed they repeat (Gamma and Poisson do not run on CPU: they are listed by their documentation). MindSpore
# documents that on Ascend the seed of most of them has no effect at all.


class RandomSeeds(NamedTuple):
    """Where an operator takes its seeds, and which literal values leave it unseeded."""

    seeds: tuple[tuple[int, str], ...]  # (position, keyword) of each seed argument
    entropy: frozenset[object] = frozenset({0, None})  # every seed among these: a fresh seed each run
    default: object = 0  # the value of a seed not given
    fix: str = "pass a fixed non-zero `seed=`"
    unseeded: str = "no non-zero seed"  # how the finding describes the seeds it found


_MS_SEED_PAIR = RandomSeeds(((0, "seed"), (1, "seed2")))
# `Bernoulli` and `RandpermV2` read the clock for `seed=-1` (Bernoulli's default; RandpermV2's default 0 is a
# fixed seed).
# Primitives: the seeds are arguments of the constructor. `Cauchy`, `LogNormalReverse`, `NonDeterministicInts` and
# `Randperm` take no seed at all (Randperm, Ascend and GPU only, by its documentation: "every execution is
# different"). (Left out: LogUniformCandidateSampler, whose seed 0 repeats on CPU, deprecated, its seed ignored on
# Ascend; FractionalMaxPool/FractionalAvgPool, whose seeds must be 0 unless `deterministic=True` and which repeat
# on CPU with them (the `nn`/function forms draw from `ops.rand`: MINDSPORE_OP_DRAWS); the deprecated
# DropoutGenMask, which does not run on CPU; the deprecated ExtractGlimpse, random only outside the image.)
_MS_NO_SEED = RandomSeeds((), fix="draw with a seeded operator or on the host (seeded NumPy) while debugging",
                          unseeded="no seed (it takes none)")
_MS_RANDOM_PRIMITIVES: dict[str, RandomSeeds] = {
    **dict.fromkeys(("StandardNormal", "UniformReal", "UniformInt", "Gamma", "Poisson", "Multinomial", "RandomGamma",
                     "RandomPoisson", "StandardLaplace", "ParameterizedTruncatedNormal", "RandomShuffle",
                     "SampleDistortedBoundingBoxV2"), _MS_SEED_PAIR),
    "RandomChoiceWithMask": RandomSeeds(((1, "seed"), (2, "seed2"))),
    "TruncatedNormal": RandomSeeds(((1, "seed"), (2, "seed2"))),
    "UniformCandidateSampler": RandomSeeds(((4, "seed"),), unseeded="seed 0 (the default)"),
    "Bernoulli": RandomSeeds(((0, "seed"),), frozenset({-1}), -1, "pass a fixed `seed=` (0 or more)",
                             "seed -1 (the default: the clock)"),
    "RandpermV2": RandomSeeds(((0, "seed"),), frozenset({-1}), 0, "pass a fixed `seed=` (0 or more)",
                              "seed -1 (the clock)"),
    **dict.fromkeys(("Cauchy", "LogNormalReverse", "NonDeterministicInts", "Randperm"), _MS_NO_SEED),
}
MINDSPORE_RANDOM_PRIMITIVES: dict[str, RandomSeeds] = {
    **{f"{module}.{name}": seeds for module in ("mindspore.ops", "mindspore.ops.operations")
       for name, seeds in _MS_RANDOM_PRIMITIVES.items()},
    # samples with a `UniformCandidateSampler` of its `seed=` unless given `sampled_values`
    "mindspore.nn.SampledSoftmaxLoss": RandomSeeds(((5, "seed"),), unseeded="seed 0 (the default)"),
}
# Primitives that take their seed as an input of each call, positionally (`Primitive.__call__` takes no
# keywords): `ops.RandomCategorical(dtype)(logits, num_sample, seed)`.
MINDSPORE_CALL_SEEDED_PRIMITIVES: dict[str, RandomSeeds] = {
    f"{module}.RandomCategorical": RandomSeeds(((2, "seed"),), fix="pass a fixed non-zero seed as its third input",
                                               unseeded="seed 0")
    for module in ("mindspore.ops", "mindspore.ops.operations")
}
# Functions wrapping such operators, with a seed argument of their own that `mindspore.set_seed` does not
# replace (unlike `ops.standard_normal` & co., see MINDSPORE_OP_DRAWS).
_MS_SEEDED_FUNCTIONS: dict[str, RandomSeeds] = {
    "random_categorical": RandomSeeds(((2, "seed"),), unseeded="seed 0 (the default)"),
    "bernoulli": RandomSeeds(((2, "seed"),), frozenset({None, -1}), None, "pass a fixed `seed=` (0 or more)",
                             "no seed (None, the default, or -1)"),
    "uniform_candidate_sampler": RandomSeeds(((5, "seed"),), unseeded="seed 0 (the default)"),
    "multinomial_with_replacement": RandomSeeds(((1, "seed"), (2, "offset")), fix="pass a fixed non-zero `seed`",
                                                unseeded="seed 0 and offset 0"),
}
MINDSPORE_SEEDED_FUNCTIONS: dict[str, RandomSeeds] = {
    f"{module}.{name}": seeds for module in ("mindspore.ops", "mindspore.ops.functional", "mindspore.ops.function")
    for name, seeds in _MS_SEEDED_FUNCTIONS.items()
}

# --- reduced-precision float32 math (tf32-enabled) -------------------------------------------------
# (module, attribute) -> the value that lets float32 matmuls/convolutions run in TF32 (HF32 on Ascend).
TF32_SWITCHES: dict[tuple[str, str], object] = {
    ("torch.backends.cuda.matmul", "allow_tf32"): True, ("torch.backends.cudnn", "allow_tf32"): True,
    ("torch.backends.cuda.matmul", "fp32_precision"): "tf32", ("torch.backends.cudnn", "fp32_precision"): "tf32",
    ("torch.backends.cudnn.conv", "fp32_precision"): "tf32", ("torch.backends.cudnn.rnn", "fp32_precision"): "tf32",
    ("torch.backends", "fp32_precision"): "tf32",
    ("torch.npu.matmul", "allow_hf32"): True, ("torch.npu.conv", "allow_hf32"): True,
    ("torch_npu.npu.matmul", "allow_hf32"): True, ("torch_npu.npu.conv", "allow_hf32"): True,
}
# Calls whose first argument selects reduced precision: name -> the values that do.
TF32_CALLS: dict[str, frozenset[object]] = {
    "torch.set_float32_matmul_precision": frozenset({"high", "medium"}),
    "mindspore.device_context.ascend.op_precision.matmul_allow_hf32": frozenset({True}),
    "mindspore.device_context.ascend.op_precision.conv_allow_hf32": frozenset({True}),
}
# MindSpore's `set_context(ascend_config={...})` keys that allow HF32.
MINDSPORE_SET_CONTEXT = frozenset({"mindspore.set_context", "mindspore.context.set_context"})
MINDSPORE_HF32_KEYS = frozenset({"matmul_allow_hf32", "conv_allow_hf32"})
# CANN's operator precision options, set through torch_npu's `set_option({...})` or MindSpore's
# `ascend_config={...}`: option -> the values that lower float32 precision.
NPU_SET_OPTION = frozenset({"torch.npu.set_option", "torch_npu.npu.set_option"})
MINDSPORE_PRECISION_MODE = frozenset({"mindspore.device_context.ascend.op_precision.precision_mode"})
CANN_REDUCED_PRECISION: dict[str, frozenset[str]] = {
    **dict.fromkeys(("ACL_PRECISION_MODE", "precision_mode"), frozenset({
        "force_fp16", "allow_fp32_to_fp16", "allow_mix_precision", "allow_mix_precision_fp16",
        "allow_mix_precision_bf16", "allow_fp32_to_bf16", "force_lowerprecision"})),
    "ACL_OP_SELECT_IMPL_MODE": frozenset({"high_performance"}),
}

# --- kernel autotuning in torch.compile (compile-autotune) -----------------------------------------
TORCH_COMPILE = frozenset({"torch.compile"})
# MindSpore's compilers of a function or cell (graph code, which capture cannot see into), and its graph mode.
MINDSPORE_JIT = frozenset({"mindspore.jit", "mindspore.ms_function", "mindspore.common.api.jit"})
MINDSPORE_GRAPH_MODES = frozenset({"mindspore.GRAPH_MODE", "mindspore.context.GRAPH_MODE"})
MINDSPORE_PYNATIVE_MODES = frozenset({"mindspore.PYNATIVE_MODE", "mindspore.context.PYNATIVE_MODE"})
AUTOTUNE_COMPILE_MODES = frozenset({"max-autotune", "max-autotune-no-cudagraphs"})
# Inductor options (in `options=`, `torch._inductor.config`, `config.patch(...)`) that pick kernels by timing.
AUTOTUNE_OPTIONS = frozenset({"max_autotune", "max_autotune_gemm", "max_autotune_pointwise",
                              "coordinate_descent_tuning"})
INDUCTOR_CONFIG = "torch._inductor.config"
AUTOTUNE_ENV = frozenset({"TORCHINDUCTOR_MAX_AUTOTUNE", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM",
                          "TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE", "TORCHINDUCTOR_COORDINATE_DESCENT_TUNING"})

# --- checkpoint loading (partial-ckpt-load) --------------------------------------------------------
MINDSPORE_LOAD_PARAM = frozenset({"mindspore.load_param_into_net", "mindspore.train.load_param_into_net",
                                  "mindspore.train.serialization.load_param_into_net"})
MINDSPORE_LOAD_CHECKPOINT = frozenset({"mindspore.load_checkpoint", "mindspore.train.load_checkpoint",
                                       "mindspore.train.serialization.load_checkpoint"})
# `load_checkpoint` arguments that load only some parameters.
MINDSPORE_CHECKPOINT_FILTERS = ("choice_func", "filter_prefix", "specify_prefix")
# Names a MindSpore checkpoint keeps for the optimizer and the training loop, beside the network's weights.
MINDSPORE_TRAINING_STATE = frozenset({"learning_rate", "global_step", "moments", "momentum", "adam_m", "adam_v",
                                      "beta1_power", "beta2_power", "epoch_num", "step_num", "loss_scale",
                                      "scale_sense", "current_iterator_step", "last_overflow_iterator_step",
                                      "accu_grads"})

# --- seeds that change every run (entropy-seed) ----------------------------------------------------
# Seeding calls -> (position, keyword) of their seed argument (position None: keyword only; SEEDING_CLASSES take none).
SEED_ARGUMENTS: dict[str, tuple[int | None, str]] = {
    **dict.fromkeys((name for calls in SEED_CALLS.values() for name in calls), (0, "seed")),
    **dict.fromkeys(SEED_ALL_CALLS, (0, "seed")),
    **dict.fromkeys(COMPOSER_TRAINERS, (None, "seed")),
    **dict.fromkeys(SB3_ALGORITHMS, (None, "seed")), **dict.fromkeys(SB3_SET_RANDOM_SEED, (0, "seed")),
    "random.seed": (0, "a"),
    **GENERATOR_FACTORIES,
}
# Calls whose value differs in every run: qualified name -> what it reads.
ENTROPY_SOURCES: dict[str, str] = {
    **dict.fromkeys(("time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
                     "time.monotonic_ns", "time.process_time", "time.process_time_ns", "time.thread_time",
                     "time.thread_time_ns", "time.localtime", "time.gmtime", "time.ctime", "time.strftime",
                     "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
                     "datetime.date.today"), "a clock reading"),
    **dict.fromkeys(("os.urandom", "os.getrandom", "random.SystemRandom", "secrets.randbits", "secrets.randbelow",
                     "secrets.token_bytes", "secrets.token_hex", "secrets.token_urlsafe", "secrets.choice",
                     "secrets.SystemRandom"), "OS entropy"),
    **dict.fromkeys(("uuid.uuid1", "uuid.uuid4"), "a fresh UUID"),
    "composer.utils.reproducibility.get_random_seed": "a seed drawn from the clock",
    **dict.fromkeys(("os.getpid", "os.getppid", "threading.get_ident", "threading.get_native_id"),
                    "a process or thread id"),
}
# Calls that reseed a default generator from OS entropy (and return the seed): name -> generator family.
ENTROPY_RESEEDERS: dict[str, str] = {
    **dict.fromkeys(("torch.seed", "torch.random.seed"), "torch"),
    **dict.fromkeys(("torch.cuda.seed", "torch.cuda.seed_all"), "torch-accelerator"),
    **dict.fromkeys(("mindspore.seed", "mindspore.common.seed", "mindspore.common.generator.seed"),
                    "mindspore-generator"),
}
# Default generators, whose own bare `.seed()` reseeds them from OS entropy (`torch.cuda.default_generators[i].seed()`):
# name (a generator, or a tuple of them per device) -> generator family.
DEFAULT_GENERATORS: dict[str, str] = {
    "torch.default_generator": "torch", "torch.random.default_generator": "torch",
    "torch.cuda.default_generators": "torch-accelerator", "torch.npu.default_generators": "torch-accelerator",
    "torch_npu.npu.default_generators": "torch-accelerator",
}
# Names of functions that reseed from entropy by contract (`torch.seed`, `Generator.seed`): the seeding
# calls inside their implementations (in torch-like libraries) are not reported.
RESEEDER_FUNCTION_NAMES = frozenset(name.rpartition(".")[2] for name in ENTROPY_RESEEDERS)
# Calls that read back the seed of a default generator: name -> generator family. Reported only after a reseeder
# above: unseeded, they are read in DataLoader workers, whose generators the loader seeds (`seed_worker`).
INITIAL_SEED_READERS: dict[str, str] = {
    **dict.fromkeys(("torch.initial_seed", "torch.random.initial_seed"), "torch"),
    "torch.cuda.initial_seed": "torch-accelerator",
    **dict.fromkeys(("mindspore.initial_seed", "mindspore.common.initial_seed",
                     "mindspore.common.generator.initial_seed"), "mindspore-generator"),
}
# Module-level draws of generators that start from OS entropy until seeded: draw -> generator family. torch's
# default generators do too (torch 2.13: `torch.initial_seed()` differs from process to process; CUDA's are seeded
# afresh on first use): torchtune's `set_seed(None)` and EDM's default seed draw theirs so.
ENTROPY_UNTIL_SEEDED_DRAWS: dict[str, str] = {
    **dict.fromkeys(PYTHON_RANDOM_DRAWS, "random"), **dict.fromkeys(NUMPY_RANDOM_DRAWS, "numpy"),
    **dict.fromkeys(TORCH_RANDOM_DRAWS, "torch"),
}

# Start a function in fresh processes (the `spawn` start method), which re-import the entry script as
# `__mp_main__` (its `__main__` block does not run) and share no generator state with the parent.
SPAWNING = frozenset({"torch.multiprocessing.spawn", "torch.multiprocessing.spawn.spawn",
                      "torch.multiprocessing.start_processes", "torch.multiprocessing.spawn.start_processes"})

"""The product's knowledge as data: what draws random numbers, shuffles, drops out, and how to fix it.

Detection (lint rules) and rewriting (codemods) both read these tables, so teaching the tool about a
new API is one line here. Names are fully qualified, as `ImportTracker.resolve` produces them.
"""

from __future__ import annotations

# --- seeding ---------------------------------------------------------------------------------
# Generator family -> calls that seed it. `mindspore.set_seed` also seeds numpy and the dataset
# pipeline (MindSpore documents this), but not Python's `random`.
SEED_CALLS: dict[str, frozenset[str]] = {
    "random": frozenset({"random.seed"}),
    "numpy": frozenset({"numpy.random.seed", "mindspore.set_seed", "mindspore.common.set_seed",
                        "mindspore.common.seed.set_seed"}),
    "torch": frozenset({"torch.manual_seed", "torch.random.manual_seed", "torch.cuda.manual_seed_all",
                        "lightning.seed_everything", "pytorch_lightning.seed_everything",
                        "lightning.pytorch.seed_everything", "transformers.set_seed",
                        "accelerate.utils.set_seed", "transformers.enable_full_determinism"}),
    "mindspore": frozenset({"mindspore.set_seed", "mindspore.common.set_seed",
                            "mindspore.common.seed.set_seed", "mindspore.dataset.config.set_seed"}),
}
# Helpers from popular libraries that seed every generator at once.
SEED_ALL_CALLS = frozenset({
    "lightning.seed_everything", "pytorch_lightning.seed_everything", "lightning.pytorch.seed_everything",
    "lightning.fabric.seed_everything", "transformers.set_seed", "transformers.enable_full_determinism",
    "accelerate.utils.set_seed", "msprobe_runtime.pytorch.seed_all", "msprobe_runtime.mindspore.seed_all",
    "msprobe.pytorch.seed_all", "msprobe.mindspore.seed_all", "timm.utils.random_seed",
})
# The family a seeding call covers implicitly.
SEED_IMPLIES: dict[str, frozenset[str]] = {
    "mindspore.set_seed": frozenset({"mindspore", "numpy"}),
    "mindspore.common.set_seed": frozenset({"mindspore", "numpy"}),
    "mindspore.common.seed.set_seed": frozenset({"mindspore", "numpy"}),
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
NUMPY_GENERATOR_FACTORIES = frozenset({"numpy.random.default_rng", "numpy.random.RandomState",
                                       "numpy.random.Generator"})
# Drawing calls of torch's global generator (any device).
TORCH_RANDOM_DRAWS = frozenset(
    "torch." + n for n in (
        "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
        "bernoulli", "multinomial", "poisson",
    )
)

# --- determinism switches -------------------------------------------------------------------------
DETERMINISTIC_ALGORITHMS = frozenset({"torch.use_deterministic_algorithms"})
CUDNN_MODULES = frozenset({"torch.backends.cudnn"})
HCCL_DETERMINISTIC_ENV = frozenset({"HCCL_DETERMINISTIC"})
DISTRIBUTED_INIT_CALLS = frozenset({
    "torch.distributed.init_process_group", "deepspeed.init_distributed",
    "mindspore.communication.init", "mindspore.communication.management.init",
    "accelerate.Accelerator", "lightning.Fabric",
})

# --- device RNG -----------------------------------------------------------------------------------
# Draws that accept `device=`: name -> position of the first argument that is *not* the size/shape.
DEVICE_DRAW_FACTORIES = frozenset(
    "torch." + n for n in ("rand", "randn", "randint", "randperm", "normal", "empty", "rand_like",
                           "randn_like", "randint_like", "bernoulli", "multinomial", "poisson")
)
# `*_like(x)` draws take the device of their first argument.
LIKE_DRAWS = frozenset({"torch.rand_like", "torch.randn_like", "torch.randint_like"})
# Draws whose result lives where their tensor input lives.
INPUT_DEVICE_DRAWS = frozenset({"torch.bernoulli", "torch.multinomial", "torch.poisson", "torch.normal"})
# In-place tensor methods that fill with random numbers.
INPLACE_RANDOM_METHODS = frozenset({
    "normal_", "uniform_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
    "log_normal_",
})
CPU_DEVICE_STRINGS = frozenset({"cpu", "meta"})

# --- data pipeline --------------------------------------------------------------------------------
TORCH_DATALOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
TORCH_RANDOM_SAMPLERS = frozenset({
    "torch.utils.data.RandomSampler", "torch.utils.data.sampler.RandomSampler",
    "torch.utils.data.SubsetRandomSampler", "torch.utils.data.sampler.SubsetRandomSampler",
    "torch.utils.data.WeightedRandomSampler", "torch.utils.data.sampler.WeightedRandomSampler",
})
TORCH_DISTRIBUTED_SAMPLERS = frozenset({
    "torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler",
})
# Deterministic replacement for a shuffling sampler (rewriter).
SAMPLER_TWINS = {
    "torch.utils.data.RandomSampler": "torch.utils.data.SequentialSampler",
    "torch.utils.data.sampler.RandomSampler": "torch.utils.data.SequentialSampler",
}
MINDSPORE_DATASET_MODULE = "mindspore.dataset"
# MindSpore dataset classes that shuffle unless told otherwise (they default to shuffle=True, or
# to "global" shuffling), so a missing `shuffle=` argument means random order.
MINDSPORE_SHUFFLING_DATASETS = frozenset(
    "mindspore.dataset." + n for n in (
        "GeneratorDataset", "ImageFolderDataset", "MnistDataset", "Cifar10Dataset", "Cifar100Dataset",
        "CocoDataset", "VOCDataset", "CelebADataset", "ManifestDataset", "MindDataset", "TFRecordDataset",
        "TextFileDataset", "CSVDataset", "CLUEDataset", "NumpySlicesDataset", "FashionMnistDataset",
        "KMnistDataset", "EMnistDataset", "QMnistDataset", "SVHNDataset", "STL10Dataset", "USPSDataset",
        "CityscapesDataset", "DIV2KDataset", "FlickrDataset", "Places365Dataset", "SBDataset",
        "SBUDataset", "SemeionDataset", "WIDERFaceDataset", "LSUNDataset", "Food101Dataset",
        "Caltech101Dataset", "Caltech256Dataset", "KITTIDataset", "OmniglotDataset", "RenderedSST2Dataset",
        "SST2Dataset", "AGNewsDataset", "AmazonReviewDataset", "DBpediaDataset", "EnWik9Dataset",
        "IMDBDataset", "IWSLT2016Dataset", "IWSLT2017Dataset", "Multi30kDataset", "PennTreebankDataset",
        "SogouNewsDataset", "SQuADDataset", "UDPOSDataset", "WikiTextDataset", "YahooAnswersDataset",
        "YelpReviewDataset", "CoNLL2000Dataset", "LJSpeechDataset", "SpeechCommandsDataset",
        "TedliumDataset", "YesNoDataset", "LibriTTSDataset", "GTZANDataset", "CMUArcticDataset",
        "RandomDataset", "PaddedDataset", "Sintel", "PhotoTourDataset", "AmazonReviewDataset",
    )
)
TORCH_WORKER_KEYWORD = "num_workers"
MINDSPORE_WORKER_KEYWORD = "num_parallel_workers"

# --- random augmentation --------------------------------------------------------------------------
TORCHVISION_TRANSFORM_MODULES = (
    "torchvision.transforms", "torchvision.transforms.v2", "torchvision.transforms.transforms",
)
MINDSPORE_TRANSFORM_MODULES = (
    "mindspore.dataset.vision", "mindspore.dataset.vision.transforms", "mindspore.dataset.vision.c_transforms",
    "mindspore.dataset.vision.py_transforms", "mindspore.dataset.transforms",
    "mindspore.dataset.transforms.transforms", "mindspore.dataset.transforms.c_transforms",
    "mindspore.dataset.transforms.py_transforms", "mindspore.dataset.text", "mindspore.dataset.audio",
)
# Transforms that are random although their name does not start with "Random".
TORCHVISION_RANDOM_TRANSFORMS = frozenset({
    "ColorJitter", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "ElasticTransform",
    "RandomErasing", "ScaleJitter", "CutMix", "MixUp",
})
MINDSPORE_RANDOM_TRANSFORMS = frozenset({
    "AutoAugment", "RandAugment", "TrivialAugmentWide", "CutMixBatch", "MixUpBatch", "MixUp",
    "RandomChoice", "RandomApply", "RandomColorAdjust", "SoftDvppDecodeRandomCropResizeJpeg",
    "UniformAugment", "RandomSelectSubpolicy",
})
# Deterministic twin of a random transform: (replacement names, how the arguments carry over).
# "size" keeps the first argument; "none" drops all arguments; an empty tuple removes the transform.
TRANSFORM_TWINS: dict[str, tuple[tuple[str, str], ...]] = {
    "RandomCrop": (("CenterCrop", "size"),),
    "RandomResizedCrop": (("Resize", "size"), ("CenterCrop", "size")),
    "RandomSizedCrop": (("Resize", "size"), ("CenterCrop", "size")),
    "RandomCropDecodeResize": (("Decode", "none"), ("Resize", "size")),
    "RandomResize": (),
}


def is_random_transform(qualified: str) -> bool:
    """Whether `qualified` names a random torchvision / MindSpore data transform."""
    module, _, name = qualified.rpartition(".")
    if module in TORCHVISION_TRANSFORM_MODULES:
        return name.startswith("Random") or name in TORCHVISION_RANDOM_TRANSFORMS
    if module in MINDSPORE_TRANSFORM_MODULES:
        return name.startswith("Random") or name in MINDSPORE_RANDOM_TRANSFORMS
    return False


# --- dropout --------------------------------------------------------------------------------------
TORCH_DROPOUT_MODULES = frozenset(
    "torch.nn." + n for n in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
                              "FeatureAlphaDropout")
)
TORCH_DROPOUT_FUNCTIONS = frozenset(
    ["torch.nn.functional." + n for n in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                          "feature_alpha_dropout")]
    + ["torch.dropout", "torch.alpha_dropout", "torch.feature_dropout", "torch.feature_alpha_dropout"]
)
# Modules whose constructor takes `dropout=` (and the default when it is not given).
TORCH_DROPOUT_KEYWORD_MODULES: dict[str, float] = {
    "torch.nn.MultiheadAttention": 0.0, "torch.nn.LSTM": 0.0, "torch.nn.GRU": 0.0, "torch.nn.RNN": 0.0,
    "torch.nn.Transformer": 0.1, "torch.nn.TransformerEncoderLayer": 0.1,
    "torch.nn.TransformerDecoderLayer": 0.1,
}
SDPA_FUNCTIONS = frozenset({"torch.nn.functional.scaled_dot_product_attention"})
MINDSPORE_DROPOUT = frozenset({
    "mindspore.nn.Dropout", "mindspore.nn.Dropout1d", "mindspore.nn.Dropout2d", "mindspore.nn.Dropout3d",
    "mindspore.ops.Dropout", "mindspore.ops.dropout", "mindspore.ops.Dropout2D", "mindspore.ops.Dropout3D",
    "mindspore.ops.dropout1d", "mindspore.ops.dropout2d", "mindspore.ops.dropout3d",
    "mindspore.mint.nn.Dropout", "mindspore.mint.nn.functional.dropout", "mindspore.mint.nn.Dropout2d",
    "mindspore.mint.nn.functional.dropout2d",
})

# --- training steps (loop detection) ----------------------------------------------------------
GRAD_FUNCTION_FACTORIES = frozenset({
    "mindspore.value_and_grad", "mindspore.ops.value_and_grad", "mindspore.grad", "mindspore.ops.grad",
    "mindspore.ops.composite.value_and_grad", "torch.func.grad", "torch.func.grad_and_value",
})
MINDSPORE_TRAIN_STEP_CELLS = frozenset({
    "mindspore.nn.TrainOneStepCell", "mindspore.nn.TrainOneStepWithLossScaleCell",
    "mindspore.nn.wrap.TrainOneStepCell", "mindspore.boost.BoostTrainOneStepCell",
})
MINDSPORE_MODEL_CLASSES = frozenset({"mindspore.Model", "mindspore.train.Model", "mindspore.train.model.Model"})
OPTIMIZER_MODULES = ("torch.optim", "mindspore.nn", "mindspore.experimental.optim", "mindspore.mint.optim",
                     "transformers.optimization", "deepspeed.ops.adam", "apex.optimizers")
OPTIMIZER_CLASS_NAMES = frozenset({
    "SGD", "Adam", "AdamW", "Adagrad", "Adadelta", "Adamax", "ASGD", "LBFGS", "NAdam", "RAdam", "RMSprop",
    "Rprop", "SparseAdam", "Adafactor", "Momentum", "Lamb", "LAMB", "LARS", "FTRL", "ProximalAdagrad",
    "AdaSumByDeltaWeightWrapCell", "Rprop", "AdamWeightDecay", "FusedAdam", "DeepSpeedCPUAdam", "Muon",
})


def is_optimizer_class(qualified: str) -> bool:
    """Whether `qualified` names an optimizer class of a known framework."""
    module, _, name = qualified.rpartition(".")
    return name in OPTIMIZER_CLASS_NAMES and any(module == m or module.startswith(m + ".")
                                                 for m in OPTIMIZER_MODULES)


# --- observation ------------------------------------------------------------------------------
HOST_SYNC_METHODS = frozenset({"item", "cpu", "numpy", "tolist", "asnumpy"})
HOST_SYNC_CALLS = frozenset({"torch.cuda.synchronize", "torch.npu.synchronize", "torch_npu.npu.synchronize",
                             "torch.accelerator.synchronize", "mindspore.hal.synchronize"})
BACKWARD_HOOK_METHODS = frozenset({
    "register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook",
})

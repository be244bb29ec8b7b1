"""msprobe 26.x record names, folder names and tensor file names (framework-free).

API records:    ``{Prefix}.{api}.{n}.{forward|backward}``      e.g. ``Functional.linear.0.forward``
Module records: ``Module.{path}.{Class}.{forward|backward}.{n}`` e.g. ``Module.blocks.0.fc1.Linear.forward.0``
Parameter grads: ``Module.{path}.{Class}.parameters_grad.{n}``
Folders:        ``{dump_path}/step{N}/rank{R}``; tensors in ``dump_tensor_data/{record}.{category}.{index}.npy``.
``n`` counts the calls of one API (or one module) within a step, from 0.
"""

from __future__ import annotations

from msprobe_runtime.core.files import safe_filename

FORWARD = "forward"
BACKWARD = "backward"
PARAMETERS_GRAD = "parameters_grad"
MODULE_PREFIX = "Module"
# the API families capture wraps, and the prefix msprobe gives their records
API_PREFIXES = {
    "functional": "Functional",
    "tensor": "Tensor",
    "torch": "Torch",
    "distributed": "Distributed",
}
# MindSpore (msprobe's names): its API families, cells (L0) and cell primitives (L1)
MS_API_PREFIXES = {
    "ops": "Functional",
    "tensor": "Tensor",
    "mint": "Mint",
    "mint.nn.functional": "MintFunctional",
    "communication": "Distributed",
    "mint.distributed": "MintDistributed",
}
CELL_PREFIX = "Cell"
PRIMITIVE_PREFIX = "Primitive"
TENSOR_DATA_DIR = "dump_tensor_data"
DUMP_FILE, STACK_FILE, CONSTRUCT_FILE = "dump.json", "stack.json", "construct.json"


def api_name(stem: str, index: int, direction: str) -> str:
    """`Functional.linear` + 0 + forward -> `Functional.linear.0.forward`."""
    return f"{stem}.{index}.{direction}"


def module_name(path: str, class_name: str, direction: str, index: int, prefix: str = MODULE_PREFIX) -> str:
    """`blocks.0.fc1`, `Linear`, forward, 0 -> `Module.blocks.0.fc1.Linear.forward.0` (MindSpore: `Cell.`)."""
    return f"{prefix}.{path}.{class_name}.{direction}.{index}"


def params_grad_name(path: str, class_name: str, index: int, prefix: str = MODULE_PREFIX) -> str:
    """The record of a module's parameter gradients: `Module.{path}.{Class}.parameters_grad.{n}`."""
    return f"{prefix}.{path}.{class_name}.{PARAMETERS_GRAD}.{index}"


def backward_of(forward_name: str) -> str:
    """The backward record name paired with a forward record name (API or module)."""
    head, sep, tail = forward_name.rpartition(f".{FORWARD}")
    return f"{head}.{BACKWARD}{tail}" if sep else forward_name


def step_folder(step: int) -> str:
    """`step{N}`."""
    return f"step{step}"


def rank_folder(rank: int) -> str:
    """`rank{R}`."""
    return f"rank{rank}"


def tensor_file_name(record: str, category: str, index_path: tuple) -> str:
    """`{record}.{category}.{i}.{j}.npy` made safe as one path component (msprobe's naming, .npy)."""
    parts = [record, category, *(str(index) for index in index_path)]
    return safe_filename(".".join(parts), max_length=240 - len(".npy")) + ".npy"

"""``ipu_engine.poptorch``: PopTorch's face for PyTorch models on the embedded IPU engine.

Change ``import poptorch`` to ``from ipu_engine import poptorch`` and PopTorch's documented
inference scripts run here: ``poptorch.inferenceModel(model, opts)`` exports the model with
torch's own exporter (in memory, on the first call per input signature), runs it through
``ipu_engine.onnx`` and returns torch tensors; ``BeginBlock`` / ``Block`` / ``BlockFunction``
place layers on IPUs, ``set_available_memory`` and ``ipu_print_tensor`` mark tensors, and
``POPLAR_ENGINE_OPTIONS`` writes the reports PopVision opens. Needs the ``[torch]`` extra;
nothing else in the project imports torch.
"""

import ipu_engine.poptorch._requires  # noqa: F401 - first: without torch, says how to install it
from ipu_engine.common.errors import EngineError as Error
from ipu_engine.poptorch.blocks import BeginBlock, Block, BlockFunction
from ipu_engine.poptorch.executor import PoplarExecutor, inferenceModel, trainingModel
from ipu_engine.poptorch.export import ExportError
from ipu_engine.poptorch.ops import ipu_print_tensor, set_available_memory
from ipu_engine.poptorch.options import (
    HalfFloatCastingBehavior,
    Options,
    OutputMode,
    PipelinedExecution,
    ShardedExecution,
)

__all__ = [
    "BeginBlock",
    "Block",
    "BlockFunction",
    "Error",
    "ExportError",
    "HalfFloatCastingBehavior",
    "Options",
    "OutputMode",
    "PipelinedExecution",
    "PoplarExecutor",
    "ShardedExecution",
    "inferenceModel",
    "ipuHardwareIsAvailable",
    "ipu_print_tensor",
    "set_available_memory",
    "trainingModel",
]


def ipuHardwareIsAvailable(num_ipus: int = 1) -> bool:
    """No IPU hardware here: the embedded engine is an IPU Model."""
    return False

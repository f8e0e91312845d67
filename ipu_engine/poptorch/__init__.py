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


#: PopTorch names the shim does not have, with why (an AttributeError saying so).
_NOT_YET = {
    "DataLoader": "pass torch tensors of deviceIterations x replicationFactor micro-batches",
    "AsynchronousDataAccessor": "pass torch tensors to the model",
    "optim": "trainingModel is not supported: export the model for inference",
    "identity_loss": "trainingModel is not supported: export the model for inference",
    "Stage": "each block's ipu_id is its stage (AutoStage.SameAsIpu)",
    "AutoStage": "each block's ipu_id is its stage (AutoStage.SameAsIpu)",
    "Phase": "phased execution is not modelled",
    "SerialPhasedExecution": "use PipelinedExecution or ShardedExecution",
    "ParallelPhasedExecution": "use PipelinedExecution or ShardedExecution",
    "CPU": "every operation runs on the IPU",
    "custom_op": "ONNX operators the importer lowers only",
    "MultiConv": "",
    "for_loop": "",
    "cond": "",
    "dynamic_slice": "",
    "dynamic_update": "",
    "recomputationCheckpoint": "",
    "serializedMatMul": "set_available_memory makes the planner slice a matmul",
    "load": "",
}


def __getattr__(name: str) -> object:
    if name in _NOT_YET:
        why = _NOT_YET[name]
        raise AttributeError(
            f"poptorch.{name} is not supported yet by ipu_engine.poptorch"
            + (f": {why}" if why else "")
        )
    raise AttributeError(f"module 'ipu_engine.poptorch' has no attribute {name!r}")

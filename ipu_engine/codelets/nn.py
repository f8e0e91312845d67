"""popnn codelets: cross-entropy loss per sample, with the softmax gradient."""

from __future__ import annotations

import functools

import numpy as np

from ipu_engine.common.types import UNSIGNED_INT, Type
from ipu_engine.poplar.codelet_registry import register_builtin
from ipu_engine.poplar.cost_model.constants import VERTEX_OVERHEAD_CYCLES
from ipu_engine.poplar.vertex import Input, Output, State, Vertex, VertexBatch, VertexSizes


class LossVertex(Vertex):
    """Rows of ``numClasses`` probabilities with their label, on one tile."""

    code_bytes = 640

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        return VERTEX_OVERHEAD_CYCLES + sizes.elements("probs") * 3 + sizes.elements("label") * 20

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        return (sizes.elements("probs") * 2).astype(np.int64)


@functools.cache
def cross_entropy(dtype: Type, label_type: Type) -> type[Vertex]:
    eps = np.finfo(dtype.numpy_dtype).tiny

    def compute_batch(cls: type, batch: VertexBatch) -> None:
        n = int(batch.state("numClasses")[0]) if batch.count else 1
        probs = batch["probs"].reshape(-1, n)
        labels = batch["label"].astype(np.int64)
        rows = np.arange(labels.size)
        picked = probs[rows, labels]
        batch["loss"][...] = -np.log(np.maximum(picked, eps))
        deltas = probs.copy()
        deltas[rows, labels] -= 1
        batch["deltas"][...] = deltas.reshape(-1)

    cls = type(
        "LossCrossEntropy",
        (LossVertex,),
        {
            "probs": Input(dtype),
            "label": Input(label_type),
            "loss": Output(dtype),
            "deltas": Output(dtype),
            "numClasses": State(UNSIGNED_INT, 1),
            "type_name": f"popnn::LossCrossEntropyTransform<{dtype.name},{label_type.name}>",
            "compute_batch": classmethod(compute_batch),
        },
    )
    return register_builtin(cls)

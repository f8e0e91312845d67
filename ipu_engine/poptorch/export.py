"""A PyTorch model exported to ONNX in memory with torch's own exporter (``torch.export``,
then ``torch.onnx.export`` of the exported program), its PopTorch annotations written as
PopART's node attributes (``onnx_markers``)."""

from __future__ import annotations

import contextlib
import io
import re
import warnings
from dataclasses import dataclass
from typing import Any

import onnx
import torch
from torch.utils import _pytree as pytree

from ipu_engine.common.errors import EngineError
from ipu_engine.poptorch import ops
from ipu_engine.poptorch.blocks import BLOCK_KEY, exporting
from ipu_engine.poptorch.onnx_markers import Print, apply_markers, place_nodes

__all__ = ["ExportError", "Exported", "export_model"]


class ExportError(EngineError):
    """The model could not be exported: torch's exporter failed, and says why."""


@dataclass(frozen=True)
class Exported:
    """One input signature's model: the ONNX model (weights inside), how its flat outputs
    rebuild the model's output structure, the IPUs its blocks use, and its prints."""

    model: onnx.ModelProto
    out_spec: pytree.TreeSpec
    ipus: int
    prints: tuple[Print, ...]

    @property
    def half(self) -> bool:
        """Whether every float the model takes (inputs and weights) is float16, as after
        ``model.half()`` with half inputs: then it computes in half on the IPU. A model
        mixing float32 and float16 computes in float32, each output in its declared type."""
        graph = self.model.graph
        kinds = {v.type.tensor_type.elem_type for v in graph.input}
        kinds |= {t.data_type for t in graph.initializer}
        floats = kinds & {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE}
        return floats == {onnx.TensorProto.FLOAT16}


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _cause(exc: BaseException) -> str:
    """The first lines of an exporter error (its full text repeats advice and traces),
    without the terminal colours the exporter puts in it."""
    text = _ANSI.sub("", str(exc)).strip().splitlines()
    summary = [line for line in text if line.strip() and not line.startswith("- ")][:6]
    return f"{type(exc).__name__}: " + " ".join(s.strip() for s in summary)


def export_model(
    model: torch.nn.Module, args: tuple, kwargs: dict[str, Any], pipelined: bool
) -> Exported:
    """``model`` traced with ``args`` / ``kwargs`` (one micro-batch) and exported to ONNX
    in memory; its blocks become IPUs (and pipeline stages when ``pipelined``)."""
    label = type(model).__name__
    quiet = io.StringIO()  # the exporter narrates its steps on stdout
    with exporting(), ops.recording() as markers, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with contextlib.redirect_stdout(quiet):
                program = torch.export.export(model, args, kwargs, strict=False)
        except Exception as exc:
            raise ExportError(
                f"poptorch.inferenceModel: torch.export could not trace {label}: {_cause(exc)}"
            ) from exc
        try:
            with contextlib.redirect_stdout(quiet):
                onnx_program = torch.onnx.export(
                    program,
                    args,
                    kwargs=kwargs,
                    dynamo=True,
                    custom_translation_table=ops.translations(),
                    verbose=False,
                )
        except Exception as exc:
            raise ExportError(
                f"poptorch.inferenceModel: torch.onnx.export could not export {label}: "
                f"{_cause(exc)}"
            ) from exc
    proto = onnx_program.model_proto
    blocks = {
        node.name: (node.meta.get("custom") or {}).get(BLOCK_KEY)
        for node in onnx_program.exported_program.graph.nodes
    }
    ipus = place_nodes(proto, blocks, pipelined)
    prints = apply_markers(proto, [m.named() for m in markers])
    if proto.graph.name in ("", "main_graph"):
        proto.graph.name = label
    return Exported(proto, program.call_spec.out_spec, ipus, tuple(prints))

"""PopTorch's helper operations ``set_available_memory`` and ``ipu_print_tensor``: identity
operations (``torch.library`` custom ops, as PopTorch's ``torch.ops.poptorch.*``) that mark
a tensor while the model is exported.

Their ONNX translation is an ``Identity`` (which the exporter's optimiser removes), and it
records the marked value's name and the marker's own; ``onnx_markers`` then turns each into
what the engine understands: PopART's ``__available_memory_proportion`` attribute on the
operation that made the tensor, or an extra output printed on the host after each run.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from onnxscript import opset18 as onnx_op

from ipu_engine.common.errors import EngineError

__all__ = ["Marker", "ipu_print_tensor", "recording", "set_available_memory", "translations"]

_NAMESPACE = "ipu_engine_poptorch"


@dataclass(frozen=True)
class Marker:
    """One marker met in the export: its ``kind`` ("memory" or "print"), the ONNX value it
    marks (``source``) and the value it returned (``alias``, an identity of it), with
    its proportion or title. Values are named once the export is done (``named``): the
    exporter names them after translating, and its optimiser may rename one to the other."""

    kind: str
    source: Any
    alias: Any
    value: float | str

    def named(self) -> Marker:
        """The marker with its values' final names."""
        return Marker(self.kind, str(self.source.name), str(self.alias.name), self.value)


_recording: dict[str, Any] = {"markers": None, "titles": []}


@contextlib.contextmanager
def recording() -> Iterator[list[Marker]]:
    """The markers the ONNX translation meets while the block runs."""
    markers: list[Marker] = []
    before = _recording["markers"]
    _recording["markers"] = markers
    try:
        yield markers
    finally:
        _recording["markers"] = before


@torch.library.custom_op(f"{_NAMESPACE}::set_available_memory", mutates_args=())
def _available_memory_op(x: torch.Tensor, proportion: float) -> torch.Tensor:
    return x.clone()


@_available_memory_op.register_fake
def _(x: torch.Tensor, proportion: float) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op(f"{_NAMESPACE}::print_tensor", mutates_args=())
def _print_op(x: torch.Tensor, title: int) -> torch.Tensor:
    return x.clone()


@_print_op.register_fake
def _(x: torch.Tensor, title: int) -> torch.Tensor:
    return torch.empty_like(x)


def _record(kind: str, x: Any, value: float | str) -> Any:
    y = onnx_op.Identity(x)
    markers = _recording["markers"]
    if markers is not None:
        markers.append(Marker(kind, x, y, value))
    return y


def _onnx_available_memory(x: Any, proportion: float) -> Any:
    return _record("memory", x, proportion)


def _onnx_print(x: Any, title: int) -> Any:
    return _record("print", x, _recording["titles"][title])


def translations() -> dict[Any, Any]:
    """The exporter's ``custom_translation_table`` for the markers."""
    return {
        torch.ops.ipu_engine_poptorch.set_available_memory.default: _onnx_available_memory,
        torch.ops.ipu_engine_poptorch.print_tensor.default: _onnx_print,
    }


def set_available_memory(tensor: torch.Tensor, available_memory_proportion: float) -> torch.Tensor:
    """The share of each tile's memory (0, 1] the matmul or convolution that made
    ``tensor`` may plan its temporaries in (PopLibs' availableMemoryProportion; 0.6 by
    default). Returns the tensor, as an identity: use the result."""
    if not isinstance(tensor, torch.Tensor):
        raise EngineError(
            "poptorch.set_available_memory: needs a torch.Tensor (the output of a matmul or "
            f"convolution), got {type(tensor).__name__}"
        )
    p = available_memory_proportion
    if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p):
        raise EngineError(f"poptorch.set_available_memory: proportion {p!r} is not a number")
    if not 0 < p <= 1:
        raise EngineError(f"poptorch.set_available_memory: proportion {p!r} is not in (0, 1]")
    return torch.ops.ipu_engine_poptorch.set_available_memory(tensor, float(p))


def ipu_print_tensor(
    tensor: torch.Tensor, title: str = "", *args: Any, **kwargs: Any
) -> torch.Tensor:
    """Print ``tensor`` each time the model runs (on the host, after the run: each
    micro-batch's value, headed by ``title``). Returns the tensor, as an identity: use the
    result, or the export drops the print with it. PopTorch's formatting arguments are
    accepted; the value prints as torch prints it."""
    if not isinstance(tensor, torch.Tensor):
        raise EngineError(
            f"poptorch.ipu_print_tensor: needs a torch.Tensor, got {type(tensor).__name__}"
        )
    if not isinstance(title, str):
        raise EngineError(f"poptorch.ipu_print_tensor: title {title!r} is not a str")
    titles = _recording["titles"]
    if title not in titles:
        titles.append(title)
    return torch.ops.ipu_engine_poptorch.print_tensor(tensor, titles.index(title))

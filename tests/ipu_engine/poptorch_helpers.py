"""Shared set-up of the PopTorch shim's tests: skipped, with the reason, where torch is not
installed (``make torch`` installs it and runs them); torch itself is the oracle."""

from __future__ import annotations

import onnx
import pytest

REASON = "ipu_engine.poptorch needs torch and onnxscript: `make torch` installs them and runs these"


def require_torch() -> None:
    """Skip the calling test module unless torch and onnxscript can be imported."""
    pytest.importorskip("torch", reason=REASON)
    pytest.importorskip("onnxscript", reason=REASON)


def attributes(model: onnx.ModelProto, name: str) -> list:
    """Each node's value of attribute ``name`` (None where it has none), in node order."""
    found = []
    for node in model.graph.node:
        values = [onnx.helper.get_attribute_value(a) for a in node.attribute if a.name == name]
        found.append(values[0] if values else None)
    return found


def exported(poptorch_model: object) -> onnx.ModelProto:
    """The ONNX model the last call of a wrapped model ran."""
    return poptorch_model._last.exported.model  # type: ignore[attr-defined]


def ipus_of(model: onnx.ModelProto, op_type: str, name: str = "__ipu_number") -> list:
    """Attribute ``name`` of each ``op_type`` node, in node order."""
    values = attributes(model, name)
    return [v for node, v in zip(model.graph.node, values, strict=True) if node.op_type == op_type]

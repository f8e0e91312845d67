"""Reading an ONNX model: load (a path or a ModelProto), check, infer shapes, and describe its
inputs and outputs (the values that are not initializers) with their shapes and types.

Every way a model can be unusable is an ``OnnxError`` naming the file and what is wrong.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

from ipu_engine.common.errors import OnnxError

#: The opsets of the default domain this importer lowers (ONNX's own releases know more).
MIN_OPSET = 6
MAX_OPSET = onnx.defs.onnx_opset_version()


@dataclass(frozen=True)
class ValueSpec:
    """An input or output of the model: name, shape (an int per known dim, else the dim's
    symbolic name or None) and element type; ``type`` is onnxruntime's ``tensor(float)``."""

    name: str
    shape: tuple[int | str | None, ...] | None  # None: not even the rank is known
    dtype: np.dtype

    @property
    def type(self) -> str:
        names = {"float32": "float", "float64": "double", "bool": "bool"}
        return f"tensor({names.get(self.dtype.name, self.dtype.name)})"

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)


@dataclass
class OnnxModel:
    """A checked model with shapes inferred: its graph, opset, inputs, outputs and weights."""

    proto: onnx.ModelProto
    source: str  # the file, or "<ModelProto 'graph name'>", for messages
    opset: int
    inputs: list[ValueSpec]
    outputs: list[ValueSpec]
    initializers: dict[str, np.ndarray]
    value_types: dict[str, np.dtype]  # every value whose element type is known

    @property
    def graph(self) -> onnx.GraphProto:
        return self.proto.graph

    @property
    def name(self) -> str:
        """The engine program's (and so the report folder's) name: the graph's name."""
        text = self.proto.graph.name or os.path.splitext(os.path.basename(self.source))[0]
        cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip("._")
        return cleaned or "onnx_model"


def load_model(model: str | os.PathLike | onnx.ModelProto | bytes) -> OnnxModel:
    """Load, check and shape-infer ``model`` (a path, serialized bytes or a ModelProto)."""
    proto, source = _read(model)
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OnnxError(f"{source}: not a valid ONNX model: {first}") from None
    opset = _default_opset(proto, source)
    try:
        inferred = shape_inference.infer_shapes(proto)
    except Exception as exc:  # onnx raises several kinds here, all about the model
        raise OnnxError(f"{source}: ONNX shape inference failed: {exc}") from None
    graph = inferred.graph
    initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    inputs = [_spec(v, source) for v in graph.input if v.name not in initializers]
    outputs = [_spec(v, source) for v in graph.output]
    value_types = {}
    for v in (*graph.input, *graph.value_info, *graph.output):
        elem = v.type.tensor_type.elem_type
        if v.type.HasField("tensor_type") and elem:
            value_types[v.name] = np.dtype(helper.tensor_dtype_to_np_dtype(elem))
    return OnnxModel(inferred, source, opset, inputs, outputs, initializers, value_types)


def _read(model: str | os.PathLike | onnx.ModelProto | bytes) -> tuple[onnx.ModelProto, str]:
    if isinstance(model, onnx.ModelProto):
        return model, f"<ModelProto {model.graph.name!r}>"
    if isinstance(model, bytes):
        source, data = "<bytes>", model
    elif isinstance(model, str | os.PathLike):
        source = os.fspath(model)
        try:
            with open(source, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise OnnxError(f"{source}: cannot read the model: {exc.strerror}") from None
    else:
        raise OnnxError(
            f"a model is a path, bytes or an onnx.ModelProto, not {type(model).__name__}"
        )
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception:  # protobuf's DecodeError and friends
        raise OnnxError(
            f"{source}: not an ONNX model (the file does not decode as an ONNX protobuf; "
            "truncated or another format?)"
        ) from None
    if not proto.HasField("graph") or not proto.opset_import:
        raise OnnxError(
            f"{source}: not an ONNX model (no graph or no opset import; truncated or "
            "another format?)"
        )
    return proto, source


def _default_opset(proto: onnx.ModelProto, source: str) -> int:
    versions = {o.domain: o.version for o in proto.opset_import}
    domains = sorted(d for d in versions if d not in ("", "ai.onnx"))
    if domains:
        raise OnnxError(
            f"{source}: imports operator domain(s) {domains}; only the default ONNX domain "
            "is supported"
        )
    opset = versions.get("", versions.get("ai.onnx"))
    if opset is None:
        raise OnnxError(f"{source}: imports no opset of the default ONNX domain")
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise OnnxError(
            f"{source}: opset {opset} of the default domain is not supported; supported "
            f"opsets are {MIN_OPSET}..{MAX_OPSET}"
        )
    return int(opset)


#: The element types a model's inputs and outputs may have (float16 and float64 compute in
#: float32, integers in int32, booleans as 0/1).
SUPPORTED_TYPES = frozenset(
    {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
     "uint32", "uint64", "bool", "int2", "int4", "uint2", "uint4"}
)  # fmt: skip


def _spec(value: onnx.ValueInfoProto, source: str) -> ValueSpec:
    if not value.type.HasField("tensor_type"):
        raise OnnxError(
            f"{source}: value {value.name!r} is not a tensor; only tensors are supported"
        )
    tensor = value.type.tensor_type
    if not tensor.elem_type:
        raise OnnxError(f"{source}: value {value.name!r} has no element type")
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    type_name = onnx.TensorProto.DataType.Name(tensor.elem_type)
    if dtype.name not in SUPPORTED_TYPES or type_name in ("BFLOAT16",):
        raise OnnxError(
            f"{source}: value {value.name!r} is {type_name}; supported element types: "
            "FLOAT, FLOAT16, DOUBLE, INT2..INT64, UINT2..UINT64, BOOL"
        )
    if not tensor.HasField("shape"):
        return ValueSpec(value.name, None, dtype)
    dims: list[int | str | None] = []
    for d in tensor.shape.dim:
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        else:
            dims.append(d.dim_param or None)
    return ValueSpec(value.name, tuple(dims), dtype)

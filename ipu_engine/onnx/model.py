"""Reading an ONNX model: load (a path, bytes or a ModelProto), read its external data from
its folder (``external_data.py``), check, inline its local functions, infer shapes, and
describe its inputs and outputs (the values that are not initializers) with their shapes and
types.

Every way a model can be unusable is an ``OnnxError`` naming the file and what is wrong.
Operator domains besides ONNX's own may be imported (tf2onnx imports ``ai.onnx.ml`` without
using it); a node of one is refused when the nodes are lowered, naming the node.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, inliner, numpy_helper, shape_inference

from ipu_engine.common.errors import OnnxError
from ipu_engine.onnx.external_data import external_tensors, load_external_data

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
        """The engine program's (and so the report folder's) name: the graph's name, or the
        file's when the graph has an exporter's generic name (torch's ``main_graph``)."""
        return report_name(self.proto.graph.name, self.source)


#: graph names exporters give every model: they say nothing of it (torch's dynamo and
#: TorchScript exporters, older torch, tf2onnx)
GENERIC_GRAPH_NAMES = frozenset(
    {"main_graph", "torch_jit", "torch-jit-export", "torch_jit_export", "tf2onnx"}
)


def report_name(graph_name: str, source: str) -> str:
    """A report folder's name for a model: its graph's name unless that is empty or generic
    and the model came from a file, whose name (without ``.onnx``) then says more."""
    from_file = not source.startswith("<")
    stem = os.path.splitext(os.path.basename(source))[0] if from_file else ""
    generic = not graph_name or graph_name in GENERIC_GRAPH_NAMES
    text = stem if generic and stem else graph_name
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in text).strip("._")
    return cleaned or "onnx_model"


def load_model(
    model: str | os.PathLike | onnx.ModelProto | bytes,
    base_dir: str | os.PathLike | None = None,
) -> OnnxModel:
    """Load, check and shape-infer ``model`` (a path, serialized bytes or a ModelProto).
    Weights stored outside it are read from ``base_dir``: by default the folder of a model
    given as a path; a model given as bytes or a ModelProto has none unless given one."""
    proto, source, folder = _read(model, base_dir)
    load_external_data(proto, folder, source)
    try:
        onnx.checker.check_model(proto)
    except onnx.checker.ValidationError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OnnxError(f"{source}: not a valid ONNX model: {first}") from None
    except ValueError as exc:  # protobuf's 2 GB limit
        raise OnnxError(f"{source}: cannot be checked: {exc}") from None
    opset = _default_opset(proto, source)
    proto = _inline_functions(proto, source)
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


def _read(
    model: str | os.PathLike | onnx.ModelProto | bytes, base_dir: str | os.PathLike | None
) -> tuple[onnx.ModelProto, str, str | None]:
    """The model's protobuf (a copy when its external data is to be read into it), its
    source for messages, and the folder its external data lies in."""
    folder = None if base_dir is None else _folder(base_dir)
    if isinstance(model, onnx.ModelProto):
        if external_tensors(model):  # read into a copy: the caller's model stays as given
            copy = onnx.ModelProto()
            copy.CopyFrom(model)
            model = copy
        return model, f"<ModelProto {model.graph.name!r}>", folder
    if isinstance(model, bytes):
        source, data = "<bytes>", model
    elif isinstance(model, str | os.PathLike):
        source = os.fspath(model)
        if folder is None:
            folder = os.path.dirname(os.path.abspath(source))
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
    return proto, source, folder


def _folder(base_dir: object) -> str:
    if isinstance(base_dir, bytes) or not isinstance(base_dir, str | os.PathLike):
        raise OnnxError(f"base_dir is a folder's path, not {type(base_dir).__name__}")
    return os.fspath(base_dir)


def _inline_functions(proto: onnx.ModelProto, source: str) -> onnx.ModelProto:
    """A model whose nodes call its own functions (torch's ``export_modules_as_functions``,
    onnxscript) as the nodes those functions hold."""
    if not proto.functions:
        return proto
    try:
        return inliner.inline_local_functions(proto)
    except Exception as exc:  # onnx's C++ inliner raises several kinds, all about the model
        raise OnnxError(f"{source}: cannot inline the model's local functions: {exc}") from None


def _default_opset(proto: onnx.ModelProto, source: str) -> int:
    versions = {o.domain: o.version for o in proto.opset_import}
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

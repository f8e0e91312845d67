"""Weights an ONNX model keeps outside its protobuf (``model.onnx.data`` beside the model, as
torch >= 2.9 exports by default): found in the model's folder -- the file's own, or the
``base_dir`` given with a model passed as bytes or a ModelProto -- and read into the model
in memory, never from the current directory.

As onnx does, a location must stay inside that folder (no absolute path, no ``..`` or
symbolic link leading out of it) and name a regular file; we also check that each tensor's
offset and length lie inside the file and that the bytes are as many as its shape and type
need. Each failure is an ``OnnxError`` naming the model, the tensor and the data file.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator

import numpy as np
import onnx
from onnx import TensorProto, helper

from ipu_engine.common.errors import OnnxError

_SUB_BYTE_BITS = {
    TensorProto.INT4: 4, TensorProto.UINT4: 4, TensorProto.FLOAT4E2M1: 4,
    getattr(TensorProto, "INT2", -2): 2, getattr(TensorProto, "UINT2", -3): 2,
}  # fmt: skip


def external_tensors(model: onnx.ModelProto) -> list[TensorProto]:
    """Every tensor of ``model`` whose data lies in another file: initializers, Constant
    nodes' values, sparse initializers and those of subgraphs and local functions."""
    return [t for t in _all_tensors(model) if t.data_location == TensorProto.EXTERNAL]


def _all_tensors(model: onnx.ModelProto) -> Iterator[TensorProto]:
    graphs = [model.graph]
    nodes = [n for f in model.functions for n in f.node]
    while graphs or nodes:
        if graphs:
            graph = graphs.pop()
            yield from graph.initializer
            for sparse in graph.sparse_initializer:
                yield sparse.values
                yield sparse.indices
            nodes.extend(graph.node)
            continue
        node = nodes.pop()
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            if attr.HasField("g"):
                graphs.append(attr.g)
            graphs.extend(attr.graphs)


def load_external_data(model: onnx.ModelProto, base_dir: str | None, source: str) -> None:
    """Read every external tensor of ``model`` (changed in place) from ``base_dir``."""
    tensors = external_tensors(model)
    if not tensors:
        return
    if base_dir is None:
        where = _location(tensors[0], source)
        raise OnnxError(
            f"{source}: tensor {tensors[0].name!r} is stored outside the model, in {where!r}; "
            "pass the folder holding it as base_dir (a model given as a path finds it beside "
            "the file)"
        )
    folder = os.path.realpath(base_dir)
    if not os.path.isdir(folder):
        raise OnnxError(f"{source}: base_dir {base_dir!r} is not a folder")
    sizes: dict[str, int] = {}
    for tensor in tensors:
        path = _checked_path(tensor, folder, source)
        try:
            if path not in sizes:
                sizes[path] = os.stat(path).st_size
            tensor.raw_data = _read(tensor, path, sizes[path], source)
        except OSError as exc:
            raise OnnxError(
                f"{source}: tensor {tensor.name!r}: cannot read external data file "
                f"{path!r}: {exc.strerror}"
            ) from None
        tensor.data_location = TensorProto.DEFAULT
        del tensor.external_data[:]


def _entries(tensor: TensorProto) -> dict[str, str]:
    return {e.key: e.value for e in tensor.external_data}


def _location(tensor: TensorProto, source: str) -> str:
    location = _entries(tensor).get("location", "")
    if not location:
        raise OnnxError(
            f"{source}: tensor {tensor.name!r} is marked as external data but names no file "
            "(no 'location')"
        )
    return location


def _checked_path(tensor: TensorProto, folder: str, source: str) -> str:
    """The data file's real path: inside ``folder`` and a regular file, else an error."""
    location = _location(tensor, source)
    what = f"{source}: tensor {tensor.name!r}: external data file {location!r}"
    if "\0" in location or os.path.isabs(location) or os.path.splitdrive(location)[0]:
        raise OnnxError(f"{what} is an absolute path; it must lie in the model's folder")
    path = os.path.realpath(os.path.join(folder, location))
    if os.path.commonpath([folder, path]) != folder:
        raise OnnxError(
            f"{what} leads outside the model's folder {folder!r}; refused (as onnx refuses it)"
        )
    if not os.path.exists(path):
        raise OnnxError(f"{what} is missing: expected {path!r} beside the model")
    if not os.path.isfile(path):
        raise OnnxError(f"{what} is not a regular file ({path!r})")
    return path


def _integer_entry(tensor: TensorProto, key: str, source: str, location: str) -> int | None:
    text = _entries(tensor).get(key)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise OnnxError(
            f"{source}: tensor {tensor.name!r}: external data {key} {text!r} in {location!r} "
            "is not a whole number of bytes >= 0"
        )
    return value


def expected_bytes(tensor: TensorProto) -> int | None:
    """The bytes ``tensor``'s shape and type need, None for strings."""
    count = math.prod(int(d) for d in tensor.dims)
    bits = _SUB_BYTE_BITS.get(tensor.data_type)
    if bits is not None:
        return -(-count * bits // 8)
    if tensor.data_type in (TensorProto.STRING, TensorProto.UNDEFINED):
        return None
    try:
        itemsize = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize
    except (KeyError, TypeError, ValueError):
        return None
    return count * itemsize


def _read(tensor: TensorProto, path: str, size: int, source: str) -> bytes:
    location = _location(tensor, source)
    offset = _integer_entry(tensor, "offset", source, location) or 0
    length = _integer_entry(tensor, "length", source, location)
    needed = expected_bytes(tensor)
    what = f"{source}: tensor {tensor.name!r} in {location!r} ({size} bytes)"
    if offset > size or (length is not None and offset + length > size):
        span = f"bytes {offset}..{offset + length}" if length is not None else f"offset {offset}"
        raise OnnxError(f"{what}: {span} lie outside the file (truncated, or the wrong data file?)")
    if length is None:
        length = size - offset
    if needed is not None and length != needed:
        raise OnnxError(
            f"{what}: holds {length} bytes from offset {offset}, but its shape "
            f"{list(tensor.dims)} and type need {needed} (truncated, or the wrong data file?)"
        )
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    if len(data) != length:  # the file shrank while we read it
        raise OnnxError(f"{what}: could read only {len(data)} of {length} bytes")
    return data

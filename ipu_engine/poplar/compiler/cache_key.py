"""The executable cache's key: a SHA-256 hash of everything compiling depends on.

The hash covers a canonical description of the graph (target, variables and constants,
each pool's tile mapping, compute sets, vertex blocks with their codelets, edges, state
and estimates, host handles, streams, functions), the programs (walked field by field),
the engine options that change what compiling produces, and the engine's version and
source. Changing any of them gives another key, so a cache entry is never used for a
program it was not made from. Arrays are hashed as raw bytes, so the key costs a pass
over the graph's columns, not a Python call per element.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import inspect
import re
from collections.abc import Sequence
from dataclasses import astuple, is_dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ipu_engine.common import version
from ipu_engine.common.types import Type
from ipu_engine.poplar.graph import Function, Graph
from ipu_engine.poplar.options import EngineOptions
from ipu_engine.poplar.program import Program
from ipu_engine.poplar.streams import DataStream
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertex import Vertex
from ipu_engine.poplar.vertices import ComputeSet, EdgeColumn, VertexBlock

KEY_VERSION = 1  # bump when the description below changes meaning
# Options that only say where and what to write (not what compiling produces) stay out.
_OUTPUT_ONLY = ("autoReport.", "executableCache.")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class _Digest:
    """A SHA-256 hash fed with tagged, length-prefixed items, so no two different
    descriptions can feed it the same bytes. SHA-256 rather than blake2b: with the CPU's
    SHA instructions it hashes the graph's edge columns (330 MB for the BERT layer)
    twice as fast."""

    def __init__(self) -> None:
        self._h = hashlib.sha256()

    def text(self, value: str) -> None:
        raw = value.encode("utf-8", "surrogatepass")
        self._h.update(b"s" + len(raw).to_bytes(8, "little") + raw)

    def number(self, value: int | float | bool | None) -> None:
        self.text(repr(value))

    def array(self, value: np.ndarray | None) -> None:
        if value is None:
            self._h.update(b"n")
            return
        data = np.ascontiguousarray(value)
        self.text(f"{data.dtype.str}{data.shape}")
        self._h.update(b"a" + data.nbytes.to_bytes(8, "little"))
        self._h.update(memoryview(data).cast("B"))

    def hexdigest(self) -> str:
        return self._h.hexdigest()


@functools.cache
def engine_fingerprint() -> str:
    """The engine's version and a hash of its source files: an entry made by other engine
    code (a new release, or a changed checkout) never matches."""
    digest = hashlib.blake2b(digest_size=16)
    root = Path(__file__).resolve().parents[2]  # ipu_engine/: every layer's source
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{version.__version__}+{digest.hexdigest()}"


@functools.cache
def codelet_fingerprint(codelet: type[Vertex]) -> str:
    """A codelet's name and what defines it: built-in codelets are the engine's source
    (in ``engine_fingerprint``) and their type name (which spells out an expression
    codelet's expression); a user codelet adds the text of its class, so editing its
    cycle estimate or fields changes the key."""
    name = f"{codelet.__module__}.{codelet.__qualname__}:{codelet.type_name}"
    if codelet.builtin:
        return name
    try:
        return f"{name}:{inspect.getsource(codelet)}"
    except (OSError, TypeError):  # defined in a string or a file no longer there
        parts = [f"{k}={_attribute_text(v)}" for k, v in sorted(vars(codelet).items())]
        return f"{name}:{';'.join(parts)}"


def _attribute_text(value: Any) -> str:
    """A class attribute as text that is the same in every process (no addresses)."""
    value = getattr(value, "__func__", value)  # classmethod / staticmethod
    code = getattr(value, "__code__", None)
    if code is not None:
        return f"code {code.co_code.hex()} {_ADDRESS.sub('', repr(code.co_consts))}"
    return _ADDRESS.sub("", repr(value))


def executable_key(graph: Graph, programs: Sequence[Program], options: EngineOptions) -> str:
    """The hex key of the executable ``programs`` of ``graph`` compile to with ``options``."""
    d = _Digest()
    d.text(f"ipu_engine executable key {KEY_VERSION}")
    d.text(engine_fingerprint())
    _describe_options(d, options)
    _describe_graph(d, graph)
    d.number(len(programs))
    for program in programs:
        _describe_program(d, program)
    return d.hexdigest()


def _describe_options(d: _Digest, options: EngineOptions) -> None:
    d.number(options.instrument)
    for key in sorted(options.values):
        if not key.startswith(_OUTPUT_ONLY):
            d.text(key)
            d.text(repr(options.values[key]))


def _describe_graph(d: _Digest, graph: Graph) -> None:
    d.text(repr(astuple(graph.target)))
    variables = graph.variables
    d.text("\0".join(f"{v.name}\1{v.type.name}\1{v.shape}" for v in variables))
    d.array(np.array([(v.base, v.size, v.is_constant) for v in variables], dtype=np.int64))
    for var_id in sorted(graph.constant_values):
        d.number(var_id)
        d.array(graph.constant_values[var_id])
    for elem_type, pool in graph.pools.items():
        d.text(elem_type.name)
        d.number(pool.size)
        for column in pool.tile_runs():
            d.array(column)
    for cs in graph.compute_sets:
        d.text(f"cs {cs.id} {cs.name} {len(cs.blocks)}")
    for block in graph.vertex_blocks:
        _describe_block(d, block)
    for kind, handles in (("write", graph.host_writes), ("read", graph.host_reads)):
        for name in sorted(handles):
            d.text(f"host {kind} {name}")
            _describe_tensor(d, handles[name])
    for name in sorted(graph.streams):
        _describe_value(d, graph.streams[name])
    for function in graph.functions:
        d.text(f"function {function.id} {function.name}")
        _describe_program(d, function.program)


def _describe_block(d: _Digest, block: VertexBlock) -> None:
    d.text(codelet_fingerprint(block.codelet))
    d.text(f"block cs={block.compute_set} first={block.first_id}")
    d.array(block.tiles)
    d.array(block.perf_estimate)
    for name in sorted(block.edges):
        d.text(f"edge {name} {block.edge_types.get(name)!r}")
        _describe_edges(d, block.edges[name])
    for name in sorted(block.state):
        d.text(f"state {name}")
        d.array(np.asarray(block.state[name]))
    for name in sorted(block.pending):
        for index in sorted(block.pending[name]):
            d.text(f"pending {name} {index}")
            d.array(np.asarray(block.pending[name][index]))


def _describe_edges(d: _Digest, column: EdgeColumn) -> None:
    d.array(column.offsets)
    d.array(column.edges_of_vertex)
    if column.runs is not None:
        d.text("runs")
        d.array(column.run_offsets)
        d.array(column.runs.start)
        d.array(column.runs.length)
    else:
        d.text("addresses")
        d.array(column.addr)


def _describe_tensor(d: _Digest, tensor: Tensor) -> None:
    d.text(f"tensor {tensor.type.name} {tensor.shape}")
    span = tensor.pool_range()
    if span is not None:
        d.text(f"span {span}")
    else:
        d.array(tensor.flat_addr())


def _describe_program(d: _Digest, program: Program) -> None:
    d.text(f"program {type(program).__module__}.{type(program).__qualname__}")
    for name, value in sorted(vars(program).items()):
        # where its debug context is, and how the user's program made it (its journal for
        # a serialized graph): not what it compiles to
        if name not in ("debug_id", "made_by", "journal_log"):
            d.text(name)
            _describe_value(d, value)


def _describe_value(d: _Digest, value: Any) -> None:
    """One field of a program (or a stream): by what it is, never by ``repr`` of an
    object whose text could hide a difference."""
    if isinstance(value, Program):
        _describe_program(d, value)
    elif isinstance(value, Tensor):
        _describe_tensor(d, value)
    elif isinstance(value, ComputeSet):
        d.text(f"compute set {value.id}")
    elif isinstance(value, Function):
        d.text(f"function {value.id}")
    elif isinstance(value, DataStream):
        d.text(f"stream {value.name} {value.type.name} {value.num_elements}")
        d.text(value.direction.value)
    elif isinstance(value, Type):
        d.text(f"type {value.name}")
    elif isinstance(value, enum.Enum):
        d.text(f"enum {value!r}")
    elif value is None or isinstance(value, str | int | float | bool):
        d.text(f"{type(value).__name__} {value!r}")
    elif isinstance(value, np.ndarray):
        d.array(value)
    elif isinstance(value, list | tuple):
        d.number(len(value))
        for item in value:
            _describe_value(d, item)
    elif is_dataclass(value) and not isinstance(value, type):
        d.text(f"{type(value).__qualname__} {astuple(value)!r}")
    else:
        raise TypeError(f"the executable cache cannot describe a {type(value).__name__}")

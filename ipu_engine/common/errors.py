"""The EngineError family: every mistake in a graph, program or run, named with its fix.

Errors are raised while the graph is built or when the engine compiles, so a user
sees the tensor, vertex or stream at fault instead of a numpy traceback from deep
inside an execution.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every error the IPU engine raises."""


class GraphError(EngineError):
    """A graph that cannot be built as asked."""


class TypeMismatchError(GraphError):
    """Element types that must agree do not (a Copy between FLOAT and INT, say)."""


class ShapeError(GraphError):
    """Shapes or element counts that do not fit together."""


class TileMappingError(GraphError):
    """A tensor or vertex with no tile, or a tile outside the target."""


class VertexConnectionError(GraphError):
    """A vertex field left unconnected, connected twice or to the wrong kind of tensor."""


class CodeletError(GraphError):
    """A codelet that is unknown to the graph or malformed."""


class ShardError(GraphError):
    """Work placed on an IPU (a shard, pipeline stage or replica) the target does not have."""


class ProgramError(EngineError):
    """A control program that cannot be compiled (bad predicate, unknown compute set...)."""


class StreamError(EngineError):
    """A host stream used without data connected, or connected with the wrong data."""


class HandleError(EngineError):
    """An unknown host read/write handle, or data of the wrong size for it."""


class ExecutionError(EngineError):
    """A vertex or stream callback failed while the engine ran; the tensors were restored."""


class OptionError(EngineError):
    """An engine option with an unknown key or a bad value."""


class OutOfMemoryError(EngineError):
    """A tile needs more memory than the target has (Poplar's ``Out of memory on tile``)."""


class HostMemoryError(GraphError):
    """The graph would need more of this machine's memory than is available."""


class ArgumentError(EngineError, TypeError):
    """An argument of the wrong kind (a str where a Tensor goes, a dict for a count...) to
    a function that no narrower family covers; also a ``TypeError``, as Python's own is."""


class OnnxError(EngineError):
    """An ONNX model that cannot be imported or run: unreadable, an operator or attribute we
    do not lower, or feeds that do not fit its inputs. Names the file, node or input."""

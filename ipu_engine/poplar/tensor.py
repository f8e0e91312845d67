"""Tensors: views onto graph variables that alias their storage, as in Poplar.

A tensor is an array of element addresses into the graph's memory pool for its
element type. Slicing, reshaping and transposing are numpy views of that address
array, so they cost nothing and always alias the variable they came from; ``concat``
builds a new address array from its parts. A whole variable, and every view that numpy
could express as a strided view of it (slices, transposes, dim shuffles, reshapes that
need no copy, ...), is only an affine map ``address = offset + index . strides`` until an
operation asks for its addresses: library ops that work on intervals never make them.
Concatenations, broadcasts and advanced indexing are address arrays.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ipu_engine.common.arguments import (
    count_arg,
    index_arg,
    integer_arg,
    integers_arg,
    kind_error,
    sequence_arg,
    shape_arg,
)
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.common.types import Type
from ipu_engine.poplar.host_memory import check_fits
from ipu_engine.poplar.index_keys import c_strides, is_basic, key_text, with_ellipsis
from ipu_engine.poplar.journal import recorded

if TYPE_CHECKING:
    from ipu_engine.poplar.graph import Graph


_DUMMY = np.zeros(1, dtype=np.uint8)


class Tensor:
    """A reference to a set of elements of one or more variables, with a shape."""

    # made_by: the recorded call that made it (ipu_engine.poplar.journal), when one did
    __slots__ = ("_addr", "_affine", "_shape", "graph", "made_by", "name", "type")

    def __init__(
        self,
        graph: Graph,
        elem_type: Type,
        addr: np.ndarray | None,
        name: str,
        interval: tuple[int, tuple[int, ...]] | None = None,
        affine: tuple[int, tuple[int, ...], tuple[int, ...]] | None = None,
    ) -> None:
        self.graph = graph
        self.type = elem_type
        self._addr = addr
        self.name = name
        if interval is not None:  # a whole variable: first address and shape, row-major
            affine = (int(interval[0]), tuple(interval[1]), c_strides(interval[1]))
        # (offset, shape, strides in elements) of a strided view of the pool, else None
        self._affine = affine
        self._shape = tuple(int(n) for n in (addr.shape if addr is not None else affine[1]))

    @property
    def addr(self) -> np.ndarray:
        """The address of every element (made from the affine map on first use)."""
        if self._addr is None:
            offset, shape, strides = self._affine  # type: ignore[misc]
            addr = np.full(shape, offset, dtype=np.int64)
            for k, (n, step) in enumerate(zip(shape, strides, strict=True)):
                if n > 1 and step:
                    axis = [1] * len(shape)
                    axis[k] = n
                    addr += (np.arange(n, dtype=np.int64) * step).reshape(axis)
            addr.flags.writeable = False
            self._addr = addr
        return self._addr

    @property
    def affine(self) -> tuple[int, tuple[int, ...], tuple[int, ...]] | None:
        """(offset, shape, strides) in elements when the tensor is a strided view."""
        return self._affine

    # -- what it is -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def rank(self) -> int:
        return len(self._shape)

    def dim(self, i: int) -> int:
        """Size of dimension ``i`` (Poplar's ``Tensor::dim``)."""
        i = integer_arg(i, f"dim of tensor {self.name!r}", ShapeError)
        if not 0 <= i < len(self._shape):
            raise ShapeError(
                f"dim({i}) of tensor {self.name!r} with shape {self._shape}: it has "
                f"dimensions 0..{len(self._shape) - 1}"
            )
        return self._shape[i]

    @property
    def num_elements(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64))

    def pool_range(self) -> tuple[int, int] | None:
        """``(begin, end)`` in the pool when the tensor's elements are one run in order."""
        if self._affine is None:
            return None
        offset, shape, strides = self._affine
        if any(n > 1 and s != c for n, s, c in zip(shape, strides, c_strides(shape), strict=True)):
            return None
        return offset, offset + self.num_elements

    def row_starts(self) -> np.ndarray | None:
        """For a 2-D strided view whose rows are runs: the first address of each row."""
        if self._affine is None or self.rank != 2:
            return None
        offset, (rows, cols), (row_step, col_step) = self._affine
        if cols > 1 and col_step != 1:
            return None
        return offset + np.arange(rows, dtype=np.int64) * row_step

    @property
    def element_type(self) -> Type:
        return self.type

    dtype = element_type

    def __len__(self) -> int:
        if self.rank == 0:
            raise ShapeError(f"tensor {self.name!r} is a scalar and has no length")
        return self.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, {self.type!r}, shape={self.shape})"

    def _space(self, key: object = None) -> np.ndarray:
        """What views are taken of: a strided stand-in for an affine tensor (a byte array
        over one dummy byte whose strides are the element strides: numpy computes a view's
        offset and strides without touching memory), else the addresses. ``key``: an index
        with arrays in it needs the addresses (numpy would read to gather)."""
        if self._affine is None or (key is not None and not is_basic(key)):
            return self.addr
        _, shape, strides = self._affine
        return np.lib.stride_tricks.as_strided(_DUMMY, shape=shape, strides=strides)

    def _view(self, addr: np.ndarray, suffix: str) -> Tensor:
        name = f"{self.name}{suffix}"
        if addr.dtype == np.uint8 and self._affine is not None:  # a view of the stand-in
            moved = addr.__array_interface__["data"][0] - _DUMMY.__array_interface__["data"][0]
            affine = (self._affine[0] + moved, addr.shape, addr.strides)
            return Tensor(self.graph, self.type, None, name, affine=affine)
        return Tensor(self.graph, self.type, addr, name)

    # -- views ------------------------------------------------------------------------
    def __getitem__(self, key: int | slice | tuple) -> Tensor:
        index_arg(key, f"tensor {self.name!r} of shape {self.shape}")
        try:
            space = self._space(key)
            addr = space[with_ellipsis(key)] if space.dtype == np.uint8 else space[key]
        except (IndexError, ValueError, TypeError, OverflowError) as exc:
            raise ShapeError(f"tensor {self.name!r} of shape {self.shape}: {exc}") from None
        return self._view(np.asarray(addr), f"[{key_text(key)}]")

    def slice(
        self,
        begin: int | Sequence[int],
        end: int | Sequence[int] | None = None,
        dim: int = 0,
    ) -> Tensor:
        """``t.slice(b, e, dim)`` or Poplar's multi-dim ``t.slice([b0, b1], [e0, e1])``."""
        what = f"slice of {self.name!r}"
        if isinstance(begin, Sequence) and not isinstance(begin, str | bytes):
            if (
                end is None
                or not isinstance(end, Sequence)
                or isinstance(end, str | bytes)
                or len(begin) != len(end)
            ):
                raise ShapeError(
                    f"slice of {self.name!r}: begin {list(begin)} and end "
                    f"{end!r} must be lists of the same length"
                )
            if len(begin) > self.rank:
                raise ShapeError(
                    f"slice of {self.name!r}: {len(begin)} dimensions given "
                    f"but the tensor has shape {self.shape}"
                )
            key = []
            for d, (b, e) in enumerate(zip(begin, end, strict=True)):
                b = integer_arg(b, f"{what}: begin of dimension {d}", ShapeError)
                e = integer_arg(e, f"{what}: end of dimension {d}", ShapeError)
                self._check_bounds(d, b, e)
                key.append(slice(b, e))
            text = ",".join(f"{b}:{e}" for b, e in zip(begin, end, strict=True))
            return self._view(self._space()[tuple(key)], f"[{text}]")
        if end is None:
            raise ShapeError(f"slice of {self.name!r} needs an end index")
        dim = self._dim(dim, "slice")
        begin = integer_arg(begin, f"{what}: begin", ShapeError)
        end = integer_arg(end, f"{what}: end", ShapeError)
        self._check_bounds(dim, begin, end)
        key = (slice(None),) * dim + (slice(begin, end),)
        return self._view(self._space()[key], f".slice({begin},{end},{dim})")

    def _check_bounds(self, dim: int, begin: int, end: int) -> None:
        size = self.shape[dim]
        if not 0 <= begin <= end <= size:
            raise ShapeError(
                f"slice [{begin}, {end}) of dimension {dim} of tensor {self.name!r} "
                f"is outside its shape {self.shape}"
            )

    def _dim(self, dim: int, what: str) -> int:
        dim = integer_arg(dim, f"{what} of tensor {self.name!r}: the dimension", ShapeError)
        if not -self.rank <= dim < max(self.rank, 1):
            raise ShapeError(
                f"{what}: dimension {dim} is outside tensor {self.name!r} {self.shape}"
            )
        return dim % max(self.rank, 1)

    def reshape(self, shape: Sequence[int]) -> Tensor:
        shape = shape_arg(shape, f"reshape of tensor {self.name!r}")
        if int(np.prod(shape, dtype=np.int64)) != self.num_elements:
            raise ShapeError(
                f"cannot reshape tensor {self.name!r} of shape {self.shape} "
                f"({self.num_elements} elements) to {shape}"
            )
        return self._view(self._reshaped(shape), f".reshape{shape}")

    def flatten(self, begin: int | None = None, end: int | None = None) -> Tensor:
        """All dimensions into one, or Poplar's ``flatten(dimBegin, dimEnd)``."""
        if begin is None:
            return self._view(self._reshaped((self.num_elements,)), ".flatten()")
        begin = integer_arg(begin, f"flatten of tensor {self.name!r}: begin", ShapeError)
        end = self.rank if end is None else end
        end = integer_arg(end, f"flatten of tensor {self.name!r}: end", ShapeError)
        if not 0 <= begin < end <= self.rank:
            raise ShapeError(
                f"flatten({begin}, {end}) is outside tensor {self.name!r} {self.shape}"
            )
        middle = int(np.prod(self.shape[begin:end], dtype=np.int64))
        shape = (*self.shape[:begin], middle, *self.shape[end:])
        return self._view(self._reshaped(shape), f".flatten({begin},{end})")

    def _reshaped(self, shape: tuple[int, ...]) -> np.ndarray:
        """The reshaped stand-in when numpy can reshape it without a copy, else the
        reshaped addresses (a copy would read the stand-in's memory)."""
        if self._affine is not None:
            try:
                return self._space().reshape(shape, copy=False)
            except ValueError:
                pass
        return self.addr.reshape(shape)

    def transpose(self) -> Tensor:
        """Swap the two dimensions of a matrix (Poplar transposes 2-D tensors only)."""
        if self.rank != 2:
            raise ShapeError(
                f"transpose needs a 2-D tensor but {self.name!r} has shape {self.shape}; "
                "use dim_shuffle for other ranks"
            )
        return self._view(self._space().T, ".transpose()")

    def dim_shuffle(self, permutation: Sequence[int]) -> Tensor:
        perm = integers_arg(permutation, f"dim_shuffle of tensor {self.name!r}", ShapeError)
        if sorted(perm) != list(range(self.rank)):
            raise ShapeError(
                f"dim_shuffle {perm} is not a permutation of the {self.rank} "
                f"dimensions of {self.name!r}"
            )
        return self._view(self._space().transpose(perm), f".dim_shuffle({perm})")

    def dim_roll(self, dim: int, new_dim: int = 0) -> Tensor:
        dim, new_dim = self._dim(dim, "dim_roll"), self._dim(new_dim, "dim_roll")
        return self._view(np.moveaxis(self._space(), dim, new_dim), f".dim_roll({dim},{new_dim})")

    def expand(self, dims: Sequence[int]) -> Tensor:
        """Insert singleton dimensions at the given positions."""
        positions = integers_arg(dims, f"expand of tensor {self.name!r}", ShapeError)
        addr = self._space()
        for d in sorted(positions):
            if not 0 <= d <= addr.ndim:
                raise ShapeError(f"expand: position {d} is outside tensor {self.name!r}")
            addr = np.expand_dims(addr, d)
        return self._view(addr, f".expand({list(dims)})")

    def squeeze(self, dims: Sequence[int] | None = None) -> Tensor:
        if dims is None:
            return self._view(np.squeeze(self._space()), ".squeeze()")
        dims = integers_arg(dims, f"squeeze of tensor {self.name!r}", ShapeError)
        if len(set(dims)) != len(dims):
            raise ShapeError(f"squeeze of tensor {self.name!r}: dimensions {dims} repeat")
        for d in dims:
            if not -self.rank <= d < self.rank:
                raise ShapeError(
                    f"squeeze: dimension {d} is outside tensor {self.name!r} {self.shape}"
                )
            if self.shape[d] != 1:
                raise ShapeError(f"squeeze: dimension {d} of {self.name!r} {self.shape} is not 1")
        return self._view(np.squeeze(self._space(), axis=tuple(dims)), f".squeeze({list(dims)})")

    def broadcast(self, times: int, dim: int) -> Tensor:
        """Repeat the tensor ``times`` along ``dim``: the copies alias the same elements."""
        dim = self._dim(dim, "broadcast")
        times = count_arg(times, f"broadcast of tensor {self.name!r}: times", ShapeError)
        if times < 1:
            raise ShapeError(
                f"broadcast of tensor {self.name!r}: times must be at least 1, got 0 "
                "(a broadcast repeats the tensor)"
            )
        shape = list(self.shape)
        shape[dim] *= times
        shape_arg(shape, f"broadcast of tensor {self.name!r} {times} times")
        check_fits(f"{self.name}.broadcast({times})", tuple(shape), math.prod(shape), 8, 0)
        return self._view(np.concatenate([self.addr] * times, axis=dim), f".broadcast({times})")

    def reverse(self, dim: int) -> Tensor:
        dim = self._dim(dim, "reverse")
        key = (slice(None),) * dim + (slice(None, None, -1),)
        return self._view(self._space()[key], f".reverse({dim})")

    def subsample(self, stride: int, dim: int) -> Tensor:
        dim = self._dim(dim, "subsample")
        stride = integer_arg(stride, f"subsample of tensor {self.name!r}: stride", ShapeError)
        if stride < 1:
            raise ShapeError(f"subsample stride must be at least 1, got {stride}")
        key = (slice(None),) * dim + (slice(None, None, stride),)
        return self._view(self._space()[key], f".subsample({stride},{dim})")

    def concat(self, other: Tensor, dim: int = 0) -> Tensor:
        return concat([self, other], dim)

    # -- helpers for the engine -------------------------------------------------------
    def flat_addr(self) -> np.ndarray:
        """Element addresses in row-major order, as one contiguous int64 array."""
        return np.ascontiguousarray(self.addr.reshape(-1))

    def flat_index(self) -> np.ndarray | slice:
        """What indexes this tensor's elements in a pool column: a slice for a whole
        variable (no per-element addresses made), else the addresses."""
        span = self.pool_range()
        return slice(*span) if span is not None else self.flat_addr()


# views made by the user's program are recorded (autoReport.outputSerializedGraph)
_VIEWS = "__getitem__ slice reshape flatten transpose dim_shuffle dim_roll expand squeeze"
for _view in (*_VIEWS.split(), "broadcast", "reverse", "subsample", "concat"):
    setattr(Tensor, _view, recorded(f"Tensor.{_view}")(getattr(Tensor, _view)))


def tensor_arg(value: Any, what: str) -> Any:
    """A ``Tensor``."""
    if not isinstance(value, Tensor):
        raise GraphError(kind_error(what, "a Tensor", value))
    return value


@recorded("concat")
def concat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors along ``dim``; the result aliases every part."""
    tensors = [
        tensor_arg(t, f"concat: part {i}") for i, t in enumerate(sequence_arg(tensors, "concat"))
    ]
    if not tensors:
        raise ShapeError("concat needs at least one tensor")
    first = tensors[0]
    for t in tensors[1:]:
        if t.graph is not first.graph:
            raise GraphError(f"concat: {t.name!r} belongs to another graph than {first.name!r}")
        if t.type != first.type:
            raise TypeMismatchError(
                f"concat: {t.name!r} is {t.type!r} but {first.name!r} is {first.type!r}"
            )
    if first.rank == 0:
        raise ShapeError(f"concat: {first.name!r} is a scalar; reshape it to [1] first")
    dim = first._dim(dim, "concat")
    try:
        addr = np.concatenate([t.addr for t in tensors], axis=dim)
    except ValueError:
        shapes = ", ".join(f"{t.name!r} {t.shape}" for t in tensors)
        raise ShapeError(
            f"concat along dimension {dim} needs equal other dimensions: {shapes}"
        ) from None
    addr.flags.writeable = False
    names = ",".join(t.name for t in tensors[:4]) + (",..." if len(tensors) > 4 else "")
    return Tensor(first.graph, first.type, addr, f"concat({names})")

"""Values of a serialized graph back into engine objects: the tags of
``ipu_engine.poplar.journal_codec`` (``$graph``, ``$ref``, ``$type``, ``$array``,
``$tuple``, ``$slice``, ``$range``, ``$ellipsis``, ``$expr``) and a framework record's
``$zeros`` (a weight or large constant, kept as its shape). Anything else is a
``ReplanError`` naming where it was found: a record is data, never code."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ipu_engine.common.errors import EngineError
from ipu_engine.common.types import as_type
from ipu_engine.popops.expr_codec import decode_expr


class ReplanError(EngineError):
    """A record that cannot be replayed, or a change that cannot be planned: the message
    says which call or node and why."""


#: dtypes a ``$zeros`` may name (numeric little-endian, as the bundle's arrays)
_ZEROS = frozenset(
    np.dtype(t).str
    for t in ("<f2", "<f4", "<f8", "<i4", "<i8", "<u4", "|b1", "|u1", "|i1", "<i2", "<u2")
)


class Decoder:
    """Decodes one record's values; ``ref`` resolves ``$ref`` (a poplar record's results)."""

    def __init__(
        self,
        arrays: Mapping[str, np.ndarray],
        graph: Any = None,
        ref: Callable[[int, int], Any] | None = None,
    ) -> None:
        self.arrays = arrays
        self.graph = graph
        self.ref = ref

    def value(self, value: Any, where: str) -> Any:
        if value is None or isinstance(value, bool | int | float | str):
            return value
        if isinstance(value, list):
            return [self.value(v, where) for v in value]
        if not isinstance(value, dict):
            raise ReplanError(f"{where}: a {type(value).__name__} is not a record value")
        tags = [k for k in value if k.startswith("$")]
        if not tags:
            return {k: self.value(v, where) for k, v in value.items()}
        if len(value) != 1:
            raise ReplanError(f"{where}: a tagged value has other keys too")
        (tag,) = tags
        return self.tagged(tag, value[tag], where)

    def tagged(self, tag: str, body: Any, where: str) -> Any:
        if tag == "$graph" and self.graph is not None:
            return self.graph
        if tag == "$ref" and self.ref is not None and _ints(body, 2):
            return self.ref(body[0], body[1])
        if tag == "$type" and isinstance(body, str):
            return as_type(body)
        if tag == "$array" and isinstance(body, str) and body in self.arrays:
            return np.array(self.arrays[body])  # writable: a library may take it as its own
        if tag == "$tuple" and isinstance(body, list):
            return tuple(self.value(v, where) for v in body)
        if tag == "$slice" and isinstance(body, list) and len(body) == 3:
            return slice(*(self.value(v, where) for v in body))
        if tag == "$range" and _ints(body, 3):
            return range(*body)
        if tag == "$ellipsis":
            return Ellipsis
        if tag == "$expr":
            try:
                return decode_expr(body)
            except EngineError as error:
                raise ReplanError(f"{where}: {error}") from None
        if tag == "$zeros" and isinstance(body, list) and len(body) == 2:
            dtype, shape = body
            if (
                isinstance(dtype, str)
                and dtype in _ZEROS
                and _ints(shape)
                and min(shape, default=0) >= 0
            ):
                # a view of one zero: a weight's values are not needed to plan its graph
                return np.broadcast_to(np.zeros((), dtype=np.dtype(dtype)), shape)
        raise ReplanError(f"{where}: {tag} {body!r:.60} is not a value this replay knows")


def _ints(value: Any, count: int | None = None) -> bool:
    ok = isinstance(value, list) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    )
    return ok and (count is None or len(value) == count)

"""A table of strings stored as one UTF-8 blob plus offsets, decoded only when asked."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np


class Strings:
    """Immutable list of strings; ``strings[i]`` decodes one. ``blob`` may be a view of a
    file's bytes (the reader's), which it then keeps alive."""

    def __init__(self, blob: bytes | memoryview, offsets: np.ndarray) -> None:
        self.blob = blob
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self._decoded: list[str] | None = None

    @classmethod
    def from_list(cls, items: Iterable[str]) -> Strings:
        encoded = [s.encode("utf-8") for s in items]
        sizes = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        return cls(b"".join(encoded), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> str:
        if self._decoded is not None:
            return self._decoded[index]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"string {index} of {len(self)}")
        begin, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return str(self.blob[begin:end], "utf-8", "replace")

    def tolist(self) -> list[str]:
        if self._decoded is None:
            offsets = self.offsets.tolist()
            blob = self.blob
            self._decoded = [
                str(blob[offsets[i] : offsets[i + 1]], "utf-8", "replace")
                for i in range(len(offsets) - 1)
            ]
        return self._decoded

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def take(self, indices: np.ndarray) -> list[str]:
        """The strings at ``indices`` ("" for -1). A few of a big table are decoded one by
        one; many, by decoding the table once."""
        indices = np.asarray(indices)
        if self._decoded is None and len(indices) * 8 < len(self):
            return self.decode(indices)
        items = self.tolist()
        return [items[i] if i >= 0 else "" for i in indices.tolist()]

    def decode(self, indices: np.ndarray) -> list[str]:
        """The strings at ``indices`` ("" for negative ones), decoded one by one and not
        kept: a table written a chunk of rows at a time never holds every string at once."""
        indices = np.asarray(indices, dtype=np.int64).reshape(-1)
        if self._decoded is not None:
            items = self._decoded
            return [items[i] if i >= 0 else "" for i in indices.tolist()]
        n = len(self)
        if len(indices) and indices.max() >= n:
            raise IndexError(f"string {int(indices.max())} of {n}")
        known = indices >= 0
        row = np.where(known, indices, 0)
        starts = np.where(known, self.offsets[row], 0).tolist()
        # min(): an empty table (no strings, one offset) asked only for -1s has no row 1
        ends = np.where(known, self.offsets[np.minimum(row + 1, n)], 0).tolist()
        blob = self.blob
        return [str(blob[b:e], "utf-8", "replace") for b, e in zip(starts, ends, strict=True)]


class StringInterner:
    """Builds a string table while giving each distinct string one index."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._items: list[str] = []

    def __len__(self) -> int:
        return len(self._items)

    def __call__(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self._items)
            self._items.append(text)
        return found

    def many(self, texts: Iterable[str]) -> np.ndarray:
        return np.fromiter((self(t) for t in texts), dtype=np.int32)

    def table(self) -> Strings:
        return Strings.from_list(self._items)

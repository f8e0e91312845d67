"""Where a ``profile.pop`` section's arrays lie in the message, and its columns read as
read-only numpy views of the file's bytes: the reader's map of the message, apart from what
each section means."""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np

from profiler_core.formats.profile_pop import columns as cols
from profiler_core.formats.profile_pop.arrays import read_array
from profiler_core.formats.profile_pop.blocks import BLOCK_COLUMNS
from profiler_core.formats.profile_pop.locate import Locator, StructRef
from profiler_core.formats.profile_pop.locate import pointer_slot as _slot
from profiler_core.formats.profile_pop.schema import DECODE_ERRORS
from profiler_core.model.strings import Strings

SECTION_COLUMNS: dict[str, list[tuple[str, cols.Column]]] = {
    "graph": [("Graph", c) for c in cols.GRAPH_COLUMNS + cols.GRAPH_OPTIONAL_COLUMNS],
    "memory": [("Memory", c) for c in cols.MEMORY_COLUMNS],
    "programs": [("Programs", c) for c in cols.PROGRAM_COLUMNS + cols.PROGRAM_OPTIONAL_COLUMNS],
    "liveness": [("Liveness", c) for c in cols.LIVENESS_COLUMNS],
    "blocks": [("Blocks", c) for c in BLOCK_COLUMNS],
}
ARRAY_SECTIONS = (*SECTION_COLUMNS, "execution")
#: The fewest bytes a run takes: its struct and an Array struct (dtype, shape) per column.
_MIN_RUN_BYTES = 8 * (1 + 4 * len(cols.RUN_COLUMNS))


class SectionArrays:
    """The arrays of one opened message: ``data`` its bytes, ``locator`` its pointers."""

    def __init__(self, data: bytes | mmap.mmap | None, locator: Locator) -> None:
        self._data = data
        self._locator = locator
        self._root_ref = locator.root()

    def execution_ref(self) -> StructRef | None:
        return self._locator.child(self._root_ref, _slot("Profile.execution", "profile"))

    def run_ref(self, execution: StructRef | None, index: int) -> StructRef | None:
        return self._locator.element(execution, _slot("Execution", "runs"), index)

    def child(self, where: StructRef | None, struct_name: str, field: str) -> StructRef | None:
        return self._locator.child(where, _slot(struct_name, field))

    def section_ref(self, field: str) -> StructRef | None:
        return self._locator.child(self._root_ref, _slot("Profile", field))

    def columns(
        self, section: Any, where: StructRef | None, struct_name: str, spec: tuple[cols.Column, ...]
    ) -> dict[str, np.ndarray]:
        columns = {}
        for column in spec:
            columns[column.name] = read_array(
                getattr(section, column.field),
                column.name,
                column.dtype,
                column.ndim,
                self._data,
                self.array_span(where, struct_name, column.field),
            )
        return columns

    def array_span(
        self, where: StructRef | None, struct_name: str, field: str
    ) -> tuple[int, int] | None:
        """Where the data of the ``Array`` in ``field`` of a struct lies in the file."""
        array_where = self._locator.child(where, _slot(struct_name, field))
        return self._locator.data_span(array_where, _slot("Array", "data"))

    def array_spans(self, section: str, root: Any) -> list[tuple[int, int]]:
        """(offset, length) of the data of every array (and of the graph's string blob) of
        ``section``, as far as the message's pointers can be followed without pycapnp."""
        if section == "execution":
            return self.run_spans(root)
        where = self.section_ref(section)
        fields = [(where, struct, c.field) for struct, c in SECTION_COLUMNS[section]]
        spans = [self.array_span(*field) for field in fields]
        if section in ("graph", "blocks"):  # the sections with a string table
            strings = self._locator.child(where, _slot(section.capitalize(), "strings"))
            spans.append(self.array_span(strings, "Strings", "offsets"))
            spans.append(self._locator.data_span(strings, _slot("Strings", "blob")))
        return [span for span in spans if span is not None]

    def run_spans(self, root: Any) -> list[tuple[int, int]]:
        count = _count_runs(root)
        if count * _MIN_RUN_BYTES > len(self._data or b""):
            # More runs than the file has room for (a hostile list of empty structs can
            # claim 2^29): their pages are simply kept, rather than walked one by one.
            return []
        execution = self._locator.child(self._root_ref, _slot("Profile.execution", "profile"))
        runs = _slot("Execution", "runs")
        spans = [
            self.array_span(self._locator.element(execution, runs, i), "Run", column.field)
            for i in range(count)
            for column in cols.RUN_COLUMNS
        ]
        return [span for span in spans if span is not None]

    def strings(self, strings: Any, where: StructRef | None) -> Strings:
        offsets_where = self._locator.child(where, _slot("Strings", "offsets"))
        offsets = read_array(
            strings.offsets,
            "strings.offsets",
            cols.I64,
            1,
            self._data,
            self._locator.data_span(offsets_where, _slot("Array", "data")),
        )
        # A view of the file's bytes, like the arrays: a 400k-variable report has ~10 MB of
        # names, and copying them would be the largest allocation of opening it.
        span = self._locator.data_span(where, _slot("Strings", "blob"))
        view = memoryview(self._data).toreadonly()
        blob = strings.blob if span is None else view[span[0] : span[0] + span[1]]
        cols.check_offsets(offsets, "strings.offsets", len(blob))
        return Strings(blob, offsets)


def _count_runs(root: Any) -> int:
    """How many runs the execution section lists (0 when it was never run or is damaged: the
    damage is reported when the section is decoded)."""
    try:
        execution = root.execution
        return len(execution.profile.runs) if execution.which() == "profile" else 0
    except DECODE_ERRORS:
        return 0

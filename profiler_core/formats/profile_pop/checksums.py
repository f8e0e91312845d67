"""Section checksums of ``profile.pop`` (format 1.2): an CRC-32 per section, so a byte
changed after writing is refused instead of shown as a different number.

A Cap'n Proto section is not one contiguous byte range, so a section's checksum is CRC-32
(``formats/checksum.py``) over a canonical byte stream of its *decoded* content: every
scalar field and every array's dtype, shape and bytes, in schema order. The writer computes
it from the columns it writes, the reader right after decoding the section (the arrays are
zero-copy views of the file, so checking is one pass over their memory). A changed byte
therefore either changes what the section decodes to, and fails its checksum, or does not,
and every answer stays the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import astuple
from typing import Any

from profiler_core.errors import ChecksumError
from profiler_core.formats.checksum import Digest
from profiler_core.formats.profile_pop import columns as cols
from profiler_core.formats.profile_pop.arrays import coerce_column
from profiler_core.formats.profile_pop.blocks import blocks_checksum
from profiler_core.formats.profile_pop.schema import DECODE_ERRORS, describe
from profiler_core.model.profile import (
    ExecutionData,
    GraphCounts,
    GraphData,
    Header,
    LivenessData,
    MemoryData,
    ProgramData,
    ProgramSteps,
    TargetInfo,
)
from profiler_core.model.strings import Strings

CHECKSUMS_SINCE_MINOR = 2
"""Files of format 1.2 and later carry checksums; a 1.2 file without them is damaged."""

STRINGS = "strings"
"""The graph's string table has its own checksum: ``ProfileReader.strings`` decodes it
without the graph's columns (commands that need names alone)."""

GRAPH_COUNTS = "graph_counts"
"""The graph's counts (format 1.3) have their own checksum: the Summary shows them without
the graph's columns."""
GRAPH_COUNTS_SINCE_MINOR = 3

PROGRAM_STEPS = "program_steps"
"""The programs section's tree and steps alone (``ProfileReader.program_steps``). Since 1.4
the file stores their checksum under ``programs`` and the steps' costs' (cycles per IPU,
exchange and compute per tile: ~90% of the section) under ``program_costs``, so the Summary
checks the steps without the costs; a 1.2 or 1.3 file has one checksum over both."""
PROGRAM_COSTS = "program_costs"
PROGRAM_PARTS_SINCE_MINOR = 4

SECTIONS = (
    "header",
    "target",
    STRINGS,
    "graph",
    GRAPH_COUNTS,
    "memory",
    "programs",
    PROGRAM_COSTS,
    "liveness",
    "execution",
    "blocks",
)


VERTEX_CONTEXTS = "vertex_contexts"
"""The graph's ``vc_debug`` (added after 1.4) has a checksum of its own, stored only when the
column is: the ``graph`` checksum leaves it out, so files written before it, and readers
written before it (which ignore a checksum they do not know), still check the graph."""
CHECKED_APART = frozenset({"vc_debug"})


def _columns(digest: Digest, record: object, spec: Iterable[cols.Column]) -> None:
    """Every column of ``spec`` that ``record`` holds (optional ones may be None), in the
    schema's dtype: the writer's columns are converted as it converts them to write."""
    for column in spec:
        if column.name in CHECKED_APART:
            continue
        value = getattr(record, column.name, None)
        if value is None:
            digest.text(f"{column.name}: absent")
            continue
        digest.array(column.name, coerce_column(value, column.name, column.dtype, column.ndim))


def header_checksum(header: Header) -> int:
    digest = Digest()
    digest.integer(header.format_major)
    digest.integer(header.format_minor)
    for text in (header.producer, header.producer_version, header.program_name):
        digest.text(text)
    digest.real(header.created_unix)
    digest.text(header.report_id)
    digest.pairs(header.options)
    digest.integer(bool(header.out_of_memory))
    digest.pairs(header.framework)
    digest.text(header.instrumentation)
    digest.integer(len(header.traces))
    for trace in header.traces:
        digest.text(trace)
    return digest.value


def target_checksum(target: TargetInfo) -> int:
    digest = Digest()
    digest.text(target.version)
    for number in (target.num_ipus, target.tiles_per_ipu, target.bytes_per_tile):
        digest.integer(number)
    digest.real(target.clock_hz)
    digest.text(target.type)
    digest.integer(target.replicas)
    digest.integer(target.ipus_per_replica)
    return digest.value


def strings_checksum(strings: Strings) -> int:
    digest = Digest()
    digest.raw(strings.blob)
    digest.array("offsets", coerce_column(strings.offsets, "strings.offsets", cols.I64, 1))
    return digest.value


def graph_checksum(graph: GraphData) -> int:
    """The graph's columns and edge count (its string table has a checksum of its own)."""
    digest = Digest()
    _columns(digest, graph, cols.GRAPH_COLUMNS + cols.GRAPH_OPTIONAL_COLUMNS)
    digest.integer(graph.num_edges)
    return digest.value


def vertex_contexts_checksum(graph: GraphData) -> int:
    """The debug context of each vertex-count row (``vc_debug``), when the graph has it."""
    digest = Digest()
    column = next(c for c in cols.GRAPH_OPTIONAL_COLUMNS if c.name == "vc_debug")
    digest.array(column.name, coerce_column(graph.vc_debug, column.name, column.dtype, 1))
    return digest.value


def graph_counts_checksum(counts: GraphCounts) -> int:
    """Each count as an integer, in ``GraphCounts``'s order."""
    digest = Digest()
    for number in astuple(counts):
        digest.integer(number)
    return digest.value


def memory_checksum(memory: MemoryData) -> int:
    digest = Digest()
    _columns(digest, memory, cols.MEMORY_COLUMNS)
    return digest.value


def program_steps_checksum(programs: ProgramSteps) -> int:
    """The program tree and its steps' kinds and names (stored as ``programs`` since 1.4)."""
    digest = Digest()
    _columns(digest, programs, cols.PROGRAM_STEP_COLUMNS)
    return digest.value


def program_costs_checksum(programs: ProgramData) -> int:
    """The steps' costs: cycles per IPU, exchange bytes and compute cycles per tile."""
    digest = Digest()
    _columns(digest, programs, cols.PROGRAM_COST_COLUMNS + cols.PROGRAM_OPTIONAL_COLUMNS)
    return digest.value


def programs_checksum_1_3(programs: ProgramData) -> int:
    """Formats 1.2 and 1.3: one checksum over every column of the section."""
    digest = Digest()
    _columns(digest, programs, cols.PROGRAM_COLUMNS + cols.PROGRAM_OPTIONAL_COLUMNS)
    return digest.value


def liveness_checksum(liveness: LivenessData) -> int:
    digest = Digest()
    digest.integer(liveness.always_live_bytes)
    _columns(digest, liveness, cols.LIVENESS_COLUMNS)
    return digest.value


def execution_checksum(execution: ExecutionData | None) -> int:
    digest = Digest()
    if execution is None:
        digest.text("not run")
        return digest.value
    digest.integer(len(execution.runs))
    for run in execution.runs:
        digest.integer(run.program)
        digest.text(run.name)
        digest.integer(run.total_cycles)
        _columns(digest, run, cols.RUN_COLUMNS)
    return digest.value


SECTION_CHECKSUM = {
    "header": header_checksum,
    "target": target_checksum,
    STRINGS: strings_checksum,
    "graph": graph_checksum,
    GRAPH_COUNTS: graph_counts_checksum,
    "memory": memory_checksum,
    "programs": program_steps_checksum,
    PROGRAM_COSTS: program_costs_checksum,
    "liveness": liveness_checksum,
    "execution": execution_checksum,
    "blocks": blocks_checksum,  # 1.5: lightweight profiling (profile_pop/blocks.py)
}
"""The checksum of each section's decoded content, by the name the file stores it under."""

CONTENT = {STRINGS: "strings", GRAPH_COUNTS: "graph_counts", PROGRAM_COSTS: "programs"}
"""The ``ProfileReader`` attribute whose value each stored checksum covers (else its name)."""


_PARTS = {
    STRINGS: " (its string table)",
    VERTEX_CONTEXTS: " (its vertices' debug contexts)",
    GRAPH_COUNTS: " (its counts)",
    PROGRAM_COSTS: " (its steps' cycles and exchanges)",
}


def _vertex_contexts_if_any(graph: GraphData) -> int | None:
    return None if graph.vc_debug is None else vertex_contexts_checksum(graph)


class StoredChecksums:
    """The checksums a file stores (read when it is opened) and the check of each section
    against them, right after the section is decoded."""

    def __init__(self, root: Any, major: int, minor: int) -> None:
        self.version, self.minor = f"{major}.{minor}", minor
        self.sums: dict[str, int] | ChecksumError | None = None  # None: before checksums
        try:
            if root._has("checksums"):
                self.sums = {str(entry.section): int(entry.crc32) for entry in root.checksums}
            elif minor >= CHECKSUMS_SINCE_MINOR:
                self.sums = ChecksumError(
                    None, f"its section checksums are missing (a {self.version} file has them)"
                )
        except DECODE_ERRORS as error:
            self.sums = ChecksumError(
                None, f"its section checksums are unreadable: {describe(error)}"
            )

    @property
    def note(self) -> str:
        """A sentence for a file written before section checksums ("" when it has them)."""
        if self.sums is not None:
            return ""
        return (
            f"written in profile format {self.version}, before section checksums: damage to "
            "it after writing cannot be detected"
        )

    def check(self, key: str, name: str, content: Any) -> None:
        """Raise ChecksumError (without a path) unless ``content``, section ``name`` just
        decoded (its string table for ``key`` "strings", ...), is what was written."""
        stored = self.sums
        if stored is None:
            return
        for entry, checksum in self._parts(key):
            part = f"section '{name}'" + _PARTS.get(entry, "")
            if isinstance(stored, ChecksumError):
                raise ChecksumError(None, f"damaged: {part} cannot be checked: {stored.problem}")
            computed = checksum(content)
            if computed is None:  # an optional part the section does not have
                continue
            if entry not in stored:
                raise ChecksumError(None, f"damaged: {part} has no checksum in the file")
            if computed != stored[entry]:
                raise ChecksumError(
                    None,
                    f"damaged: {part} fails its checksum (CRC-32 {computed:08x}, written "
                    f"{stored[entry]:016x}): the file changed after it was written; write the "
                    "report again",
                )

    def _parts(self, key: str) -> list[tuple[str, Callable[[Any], int]]]:
        """The stored checksums covering what the reader caches under ``key``, each with
        the function computing it."""
        if key in ("programs", PROGRAM_STEPS) and self.minor < PROGRAM_PARTS_SINCE_MINOR:
            return [("programs", programs_checksum_1_3)]
        if key == PROGRAM_STEPS:
            return [("programs", program_steps_checksum)]
        if key == "programs":
            return [("programs", program_steps_checksum), (PROGRAM_COSTS, program_costs_checksum)]
        if key == "graph":
            return [("graph", graph_checksum), (VERTEX_CONTEXTS, _vertex_contexts_if_any)]
        return [(key, SECTION_CHECKSUM[key])]

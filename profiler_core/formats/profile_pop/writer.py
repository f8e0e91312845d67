"""Writes a ``ProfileData`` as ``profile.pop``: one Cap'n Proto message, written atomically.

Columns are checked with the same rules the reader applies, so a file this writer accepts is
a file the reader accepts; a column that breaks them raises ``ReportError`` before anything
is written.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import capnp
import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.atomic import atomic_write
from profiler_core.formats.profile_pop import columns as cols
from profiler_core.formats.profile_pop.arrays import coerce_column, write_array
from profiler_core.formats.profile_pop.blocks import array_bytes as blocks_array_bytes
from profiler_core.formats.profile_pop.blocks import build_blocks
from profiler_core.formats.profile_pop.checksums import (
    GRAPH_COUNTS,
    PROGRAM_COSTS,
    SECTION_CHECKSUM,
    STRINGS,
    VERTEX_CONTEXTS,
    vertex_contexts_checksum,
)
from profiler_core.formats.profile_pop.graph_counts import COUNT_FIELDS
from profiler_core.formats.profile_pop.schema import DECODE_ERRORS, MAGIC, describe, profile_schema
from profiler_core.model.profile import FORMAT_MAJOR, FORMAT_MINOR, ProfileData
from profiler_core.model.strings import Strings


def write_profile(path: str | Path, profile: ProfileData) -> None:
    """Write ``profile`` to ``path`` (normally ``<report>/profile.pop``) atomically.

    Raises ``ReportError`` naming ``path`` when a column is inconsistent or when the file
    cannot be written (missing or read-only directory, full disk).
    """
    write_message(path, build_message(profile, path))


def write_message(path: str | Path, message: Any) -> None:
    """Write a built ``Profile`` message to ``path`` atomically (tests patch messages here)."""

    def write(file: BinaryIO) -> None:
        try:
            message.write(file)
        except capnp.KjException as error:
            # Cap'n Proto reports a failed write(2) (full disk, file size limit) as its own
            # exception; as an OSError it becomes the ReportError every caller handles.
            raise OSError(_system_reason(str(error))) from error

    atomic_write(path, write)


def _system_reason(text: str) -> str:
    """``File too large`` out of ``kj/io.c++:450: failed: ::writev(fd, ...): File too large;``."""
    found = re.search(r"failed: [^:]*::\w+\([^)]*\): ([^;\n]+)", text)
    return found.group(1).strip() if found else text.splitlines()[0][:200]


def build_message(profile: ProfileData, path: str | Path | None = None) -> Any:
    """The ``Profile`` message builder for ``profile``; ``path`` only names errors."""
    message = profile_schema().Profile.new_message(num_first_segment_words=_estimate_words(profile))
    message.magic = MAGIC
    message.formatMajor = FORMAT_MAJOR
    message.formatMinor = FORMAT_MINOR
    sections = (
        ("header", _build_header),
        ("target", _build_target),
        ("graph", _build_graph),
        (GRAPH_COUNTS, _build_graph_counts),
        ("memory", _build_memory),
        ("programs", _build_programs),
        ("liveness", _build_liveness),
        ("execution", _build_execution),
        ("blocks", lambda message, profile: build_blocks(message, profile.blocks)),
    )
    for name, build in sections:
        try:
            build(message, profile)
        except ReportError as error:
            raise ReportError(path, f"cannot write section '{name}': {error.problem}") from error
        except DECODE_ERRORS as error:
            raise ReportError(path, f"cannot write section '{name}': {describe(error)}") from error
    _build_checksums(message, profile)
    return message


def _build_checksums(message: Any, profile: ProfileData) -> None:
    """An CRC-32 of each section as the reader will decode it (see checksums.py)."""
    header = dataclasses.replace(
        profile.header, format_major=FORMAT_MAJOR, format_minor=FORMAT_MINOR
    )
    content = {
        "header": header,
        "target": profile.target,
        STRINGS: profile.graph.strings,
        "graph": profile.graph,
        GRAPH_COUNTS: profile.graph.counts(),
        "memory": profile.memory,
        "programs": profile.programs,
        PROGRAM_COSTS: profile.programs,
        "liveness": profile.liveness,
        "execution": profile.execution,
        "blocks": profile.blocks,
    }
    sums = {section: checksum(content[section]) for section, checksum in SECTION_CHECKSUM.items()}
    if profile.graph.vc_debug is not None:  # checked apart: see checksums.VERTEX_CONTEXTS
        sums[VERTEX_CONTEXTS] = vertex_contexts_checksum(profile.graph)
    out = message.init("checksums", len(sums))
    for entry, (section, crc32) in zip(out, sums.items(), strict=True):
        entry.section = section
        entry.crc32 = crc32


def _build_graph_counts(message: Any, profile: ProfileData) -> None:
    counts, out = profile.graph.counts(), message.init("graphCounts")
    for name, field in COUNT_FIELDS:
        setattr(out, field, getattr(counts, name))


def _build_header(message: Any, profile: ProfileData) -> None:
    header, out = profile.header, message.init("header")
    out.producer = str(header.producer)
    out.producerVersion = str(header.producer_version)
    out.programName = str(header.program_name)
    out.createdUnix = float(header.created_unix)
    out.reportId = str(header.report_id)
    out.outOfMemory = bool(header.out_of_memory)
    out.instrumentation = str(header.instrumentation)
    traces = out.init("traces", len(header.traces))
    for i, trace in enumerate(header.traces):
        traces[i] = str(trace)
    for name, pairs in (("options", header.options), ("framework", header.framework)):
        options = out.init(name, len(pairs))
        for option, (key, value) in zip(options, pairs.items(), strict=True):
            option.key, option.value = str(key), str(value)


def _build_target(message: Any, profile: ProfileData) -> None:
    target, out = profile.target, message.init("target")
    out.version = str(target.version)
    out.numIpus = int(target.num_ipus)
    out.tilesPerIpu = int(target.tiles_per_ipu)
    out.bytesPerTile = int(target.bytes_per_tile)
    out.clockHz = float(target.clock_hz)
    out.type = str(target.type)
    out.replicas = int(target.replicas)
    out.ipusPerReplica = int(target.ipus_per_replica)


def _build_graph(message: Any, profile: ProfileData) -> None:
    graph, out = profile.graph, message.init("graph")
    strings = _build_strings(out.init("strings"), graph.strings)
    columns = _coerce(graph, cols.GRAPH_COLUMNS)
    cols.check_graph(columns, len(strings) - 1)
    _build_columns(out, columns, cols.GRAPH_COLUMNS)
    out.numEdges = int(graph.num_edges)
    optional = tuple(c for c in cols.GRAPH_OPTIONAL_COLUMNS if getattr(graph, c.name) is not None)
    extra = _coerce(graph, optional)
    cols.check_optional(columns, extra, cols.GRAPH_OPTIONAL_COLUMNS)
    _build_columns(out, extra, optional)


def _build_strings(out: Any, strings: Strings) -> np.ndarray:
    blob = strings.blob if isinstance(strings.blob, bytes) else bytes(strings.blob)
    offsets = coerce_column(strings.offsets, "strings.offsets", cols.I64, 1)
    cols.check_offsets(offsets, "strings", len(blob))
    out.blob = blob
    write_array(out.init("offsets"), offsets)
    return offsets


def _build_memory(message: Any, profile: ProfileData) -> None:
    columns = _coerce(profile.memory, cols.MEMORY_COLUMNS)
    cols.check_tables(columns, cols.MEMORY_COLUMNS, {})
    _build_columns(message.init("memory"), columns, cols.MEMORY_COLUMNS)


def _build_programs(message: Any, profile: ProfileData) -> None:
    programs, out = profile.programs, message.init("programs")
    columns = _coerce(programs, cols.PROGRAM_COLUMNS)
    cols.check_programs(columns)
    _build_columns(out, columns, cols.PROGRAM_COLUMNS)
    spec = cols.PROGRAM_OPTIONAL_COLUMNS
    optional = tuple(c for c in spec if getattr(programs, c.name, None) is not None)
    extra = _coerce(programs, optional)
    cols.check_optional(columns, extra, spec)
    _build_columns(out, extra, optional)


def _build_liveness(message: Any, profile: ProfileData) -> None:
    liveness, out = profile.liveness, message.init("liveness")
    columns = _coerce(liveness, cols.LIVENESS_COLUMNS)
    cols.check_tables(columns, cols.LIVENESS_COLUMNS, {})
    out.alwaysLiveBytes = int(liveness.always_live_bytes)
    _build_columns(out, columns, cols.LIVENESS_COLUMNS)


def _build_execution(message: Any, profile: ProfileData) -> None:
    if profile.execution is None:
        message.execution.notRun = None
        return
    runs = profile.execution.runs
    out = message.execution.init("profile").init("runs", len(runs))
    for index, (run, run_out) in enumerate(zip(runs, out, strict=True)):
        try:
            columns = _coerce(run, cols.RUN_COLUMNS)
            cols.check_tables(columns, cols.RUN_COLUMNS, {})
        except (ReportError, ValueError) as error:
            problem = error.problem if isinstance(error, ReportError) else str(error)
            raise ValueError(f"run {index}: {problem}") from error
        run_out.program = int(run.program)
        run_out.name = str(run.name)
        run_out.totalCycles = int(run.total_cycles)
        _build_columns(run_out, columns, cols.RUN_COLUMNS)


def _coerce(record: object, spec: tuple[cols.Column, ...]) -> Mapping[str, np.ndarray]:
    return _Coerced(record, spec)


class _Coerced(Mapping[str, np.ndarray]):
    """``record``'s columns in their schema dtypes, converted each time one is read and not
    kept: an engine keeps its ten million regions in int32, and their int64 copies for the
    file are made one column at a time, while it is checked or written."""

    def __init__(self, record: object, spec: tuple[cols.Column, ...]) -> None:
        self._record = record
        self._spec = {column.name: column for column in spec}

    def __getitem__(self, name: str) -> np.ndarray:
        column = self._spec[name]
        return coerce_column(getattr(self._record, name), name, column.dtype, column.ndim)

    def __contains__(self, name: object) -> bool:
        return name in self._spec

    def __iter__(self) -> Iterator[str]:
        return iter(self._spec)

    def __len__(self) -> int:
        return len(self._spec)


def _build_columns(
    out: Any, columns: Mapping[str, np.ndarray], spec: tuple[cols.Column, ...]
) -> None:
    for column in spec:
        try:
            write_array(out.init(column.field), columns[column.name])
        except ValueError as error:
            raise ValueError(f"column '{column.name}': {error}") from error


def _estimate_words(profile: ProfileData) -> int:
    """Room for the whole message in one segment, so capnp never has to grow it."""
    arrays: list[Any] = [profile.graph.strings.offsets]
    records: list[tuple[object, tuple[cols.Column, ...]]] = [
        (profile.graph, cols.GRAPH_COLUMNS),
        (profile.memory, cols.MEMORY_COLUMNS),
        (profile.programs, cols.PROGRAM_COLUMNS),
        (profile.liveness, cols.LIVENESS_COLUMNS),
    ]
    if profile.execution is not None:
        records += [(run, cols.RUN_COLUMNS) for run in profile.execution.runs]
    array_bytes = sum(getattr(array, "nbytes", 0) for array in arrays)
    for record, spec in records:
        columns = [(getattr(record, column.name, None), column) for column in spec]
        arrays += [array for array, _ in columns]
        # as written: in the schema's dtype, which may be wider than the one kept
        array_bytes += sum(np.size(a) * c.dtype.itemsize for a, c in columns if a is not None)
    text_bytes = len(profile.graph.strings.blob) + sum(
        len(str(key)) + len(str(value)) for key, value in profile.header.options.items()
    )
    blocks_bytes, blocks_arrays = blocks_array_bytes(profile.blocks)
    # Each Array costs a few words of struct, shape list and padding besides its data.
    words = (array_bytes + text_bytes + blocks_bytes) // 8
    return words + 16 * (len(arrays) + blocks_arrays) + 8192

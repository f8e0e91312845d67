"""Reads ``profile.pop`` lazily: the file is read once and checked up front (framing, magic,
major version); each section is decoded on first access, validated and cached.

Arrays are read-only numpy views onto the file's bytes (no copy). A damaged section raises
``ReportError`` naming the file and the section, while the other sections still load.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from profiler_core.errors import ChecksumError, FormatVersionError, ReportError
from profiler_core.formats.files import regular_file_size
from profiler_core.formats.profile_pop import columns as cols
from profiler_core.formats.profile_pop.arrays import read_array
from profiler_core.formats.profile_pop.checksums import StoredChecksums
from profiler_core.formats.profile_pop.file_bytes import FileBytes
from profiler_core.formats.profile_pop.locate import Locator, StructRef
from profiler_core.formats.profile_pop.locate import pointer_slot as _slot
from profiler_core.formats.profile_pop.schema import (
    DECODE_ERRORS,
    MAGIC,
    NESTING_LIMIT,
    describe,
    profile_schema,
    traversal_limit_words,
)
from profiler_core.model.profile import (
    FORMAT_MAJOR,
    FORMAT_MINOR,
    ExecutionData,
    GraphData,
    Header,
    LivenessData,
    MemoryData,
    ProfileData,
    ProgramData,
    RunData,
    TargetInfo,
)
from profiler_core.model.strings import Strings

_SECTION_COLUMNS: dict[str, list[tuple[str, cols.Column]]] = {
    "graph": [("Graph", c) for c in cols.GRAPH_COLUMNS + cols.GRAPH_OPTIONAL_COLUMNS],
    "memory": [("Memory", c) for c in cols.MEMORY_COLUMNS],
    "programs": [("Programs", c) for c in cols.PROGRAM_COLUMNS + cols.PROGRAM_OPTIONAL_COLUMNS],
    "liveness": [("Liveness", c) for c in cols.LIVENESS_COLUMNS],
}
_ARRAY_SECTIONS = (*_SECTION_COLUMNS, "execution")
#: The fewest bytes a run takes: its struct and an Array struct (dtype, shape) per column.
_MIN_RUN_BYTES = 8 * (1 + 4 * len(cols.RUN_COLUMNS))

MAX_PROFILE_BYTES = 64 * 1024**3
"""Larger files are refused before reading: no honest profile.pop comes near it."""
MAX_SEGMENTS = 512  # the C++ library's own limit on segments per message

T = TypeVar("T")


class ProfileReader:
    """One ``profile.pop``, opened: ``.header``, ``.target``, ... decode on first access.

    Opening reads the whole file (one ``read``) and checks that it is a complete Cap'n Proto
    message with the profile magic and a major version this reader knows. ``on_demand``
    then gives the sections' arrays back to the system until each is first decoded
    (``FileBytes``): a reader of one section holds that section alone, for a second read of
    it (~1 ms per MB). Use as a context manager or call ``close()`` to close the file; arrays
    already handed out stay valid.
    """

    def __init__(self, path: str | Path, on_demand: bool = False, verify: bool = True) -> None:
        self.path = Path(path)
        #: Check each section against its checksum when decoded (off: benchmarks' baseline).
        self.verify = verify
        self._bytes = _read_file(self.path, on_demand)
        data = self._bytes.data
        segments = _check_framing(self.path, data)
        self._data: bytes | mmap.mmap | None = data
        self._locator = Locator(data, segments)
        self._exit = contextlib.ExitStack()
        try:
            reader = profile_schema().Profile.from_bytes(
                data,
                traversal_limit_in_words=traversal_limit_words(len(data)),
                nesting_limit=NESTING_LIMIT,
            )
            self._root = self._exit.enter_context(reader)
            magic = self._root.magic
            self.format_major = int(self._root.formatMajor)
            self.format_minor = int(self._root.formatMinor)
        except DECODE_ERRORS as error:
            raise ReportError(self.path, f"not a profile.pop: {describe(error)}") from error
        _check_magic_and_version(self.path, magic, self.format_major, self.format_minor)
        self._root_ref = self._locator.root()
        self._cache: dict[str, Any] = {}
        self._checksums = StoredChecksums(self._root, self.format_major, self.format_minor)
        if self._bytes.releasable:
            for section in _ARRAY_SECTIONS:
                self._bytes.release(section, self._array_spans(section))

    def __enter__(self) -> ProfileReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._exit.close()
        self._bytes.close()
        self._root = self._data = None
        self._locator = Locator(b"", [(0, 0)])

    @property
    def header(self) -> Header:
        return self._section("header", self._decode_header)

    @property
    def target(self) -> TargetInfo:
        return self._section("target", self._decode_target)

    @property
    def graph(self) -> GraphData:
        return self._section("graph", self._decode_graph)

    @property
    def strings(self) -> Strings:
        """The graph's string table alone (names of variables, compute sets and steps),
        without decoding and checking the graph's columns."""
        return self._section("graph", self._decode_graph_strings, key="strings")

    def _decode_graph_strings(self, root: Any) -> Strings:
        where = self._locator.child(self._section_ref("graph"), _slot("Graph", "strings"))
        return self._decode_strings(root.graph.strings, where)

    @property
    def memory(self) -> MemoryData:
        return self._section("memory", self._decode_memory)

    @property
    def programs(self) -> ProgramData:
        return self._section("programs", self._decode_programs)

    @property
    def liveness(self) -> LivenessData:
        return self._section("liveness", self._decode_liveness)

    @property
    def execution(self) -> ExecutionData | None:
        """The runs, or None when the program was compiled but never run."""
        return self._section("execution", self._decode_execution)

    def to_profile(self) -> ProfileData:
        """Every section, decoded: the ``ProfileData`` that was written."""
        return ProfileData(
            header=self.header,
            target=self.target,
            graph=self.graph,
            memory=self.memory,
            programs=self.programs,
            liveness=self.liveness,
            execution=self.execution,
        )

    def _section(self, name: str, decode: Callable[[Any], T], key: str | None = None) -> T:
        """Decode section ``name`` once (cached under ``key``, default the name)."""
        # Errors are cached too: retrying a damaged section would only spend the message's
        # traversal budget that the intact sections still need.
        key = key or name
        if key not in self._cache:
            if self._root is None:
                raise ReportError(self.path, f"section '{name}': the reader was closed")
            try:
                self._bytes.restore(name)
                found = decode(self._root)
                if self.verify:
                    self._checksums.check(key, name, found)
                self._cache[key] = found
            except ChecksumError as error:
                self._cache[key] = ChecksumError(self.path, error.problem)
            except ReportError as error:
                self._cache[key] = ReportError(self.path, f"section '{name}': {error.problem}")
            except DECODE_ERRORS as error:
                self._cache[key] = ReportError(self.path, f"section '{name}': {describe(error)}")
        found = self._cache[key]
        if isinstance(found, ReportError):
            raise found
        return found

    @property
    def integrity_note(self) -> str:
        """A sentence for a file written before section checksums ("" when it has them)."""
        return self._checksums.note

    def _decode_header(self, root: Any) -> Header:
        header = root.header
        return Header(
            format_major=self.format_major,
            format_minor=self.format_minor,
            producer=header.producer,
            producer_version=header.producerVersion,
            program_name=header.programName,
            created_unix=_created_time(header.createdUnix),
            report_id=header.reportId,
            options={option.key: option.value for option in header.options},
            out_of_memory=bool(header.outOfMemory),
            framework={option.key: option.value for option in header.framework},
            instrumentation=header.instrumentation,
            traces=[str(trace) for trace in header.traces],
        )

    def _decode_target(self, root: Any) -> TargetInfo:
        target = root.target
        info = TargetInfo(
            version=target.version,
            num_ipus=int(target.numIpus),
            tiles_per_ipu=int(target.tilesPerIpu),
            bytes_per_tile=int(target.bytesPerTile),
            clock_hz=float(target.clockHz),
            type=target.type,
            replicas=int(target.replicas),
            ipus_per_replica=int(target.ipusPerReplica),
        )
        if info.num_ipus < 1 or info.tiles_per_ipu < 1:
            raise ReportError(None, f"{info.num_ipus} IPUs of {info.tiles_per_ipu} tiles")
        if not (math.isfinite(info.clock_hz) and info.clock_hz > 0):
            raise ReportError(None, f"clock of {info.clock_hz} Hz")
        return info

    def _decode_graph(self, root: Any) -> GraphData:
        graph, where = root.graph, self._section_ref("graph")
        strings = self.strings
        columns = self._decode_columns(graph, where, "Graph", cols.GRAPH_COLUMNS)
        cols.check_graph(columns, len(strings))
        # 1.1 additions: a 1.0 file has no state sizes (None) and no edge count (-1).
        optional = [c for c in cols.GRAPH_OPTIONAL_COLUMNS if graph._has(c.field)]
        extra = self._decode_columns(graph, where, "Graph", tuple(optional))
        cols.check_optional(columns, extra, cols.GRAPH_OPTIONAL_COLUMNS)
        return GraphData(strings=strings, num_edges=int(graph.numEdges), **columns, **extra)

    def _decode_memory(self, root: Any) -> MemoryData:
        where = self._section_ref("memory")
        columns = self._decode_columns(root.memory, where, "Memory", cols.MEMORY_COLUMNS)
        cols.check_tables(columns, cols.MEMORY_COLUMNS, {})
        return MemoryData(**columns)

    def _decode_programs(self, root: Any) -> ProgramData:
        where = self._section_ref("programs")
        programs = root.programs
        columns = self._decode_columns(programs, where, "Programs", cols.PROGRAM_COLUMNS)
        cols.check_programs(columns)
        optional = [c for c in cols.PROGRAM_OPTIONAL_COLUMNS if programs._has(c.field)]
        extra = self._decode_columns(programs, where, "Programs", tuple(optional))
        cols.check_optional(columns, extra, cols.PROGRAM_OPTIONAL_COLUMNS)
        return ProgramData(**columns, **extra)

    def _decode_liveness(self, root: Any) -> LivenessData:
        liveness, where = root.liveness, self._section_ref("liveness")
        columns = self._decode_columns(liveness, where, "Liveness", cols.LIVENESS_COLUMNS)
        cols.check_tables(columns, cols.LIVENESS_COLUMNS, {})
        return LivenessData(always_live_bytes=int(liveness.alwaysLiveBytes), **columns)

    def _decode_execution(self, root: Any) -> ExecutionData | None:
        execution = root.execution
        if execution.which() != "profile":
            return None
        where = self._locator.child(self._root_ref, _slot("Profile.execution", "profile"))
        runs = []
        for index, run in enumerate(execution.profile.runs):
            run_where = self._locator.element(where, _slot("Execution", "runs"), index)
            try:
                columns = self._decode_columns(run, run_where, "Run", cols.RUN_COLUMNS)
                cols.check_tables(columns, cols.RUN_COLUMNS, {})
            except ReportError as error:
                raise ReportError(None, f"run {index}: {error.problem}") from error
            _check_instances(runs, len(columns["step_ids"]), index, len(self._data or b""))
            runs.append(
                RunData(
                    program=int(run.program),
                    name=run.name,
                    total_cycles=int(run.totalCycles),
                    **columns,
                )
            )
        return ExecutionData(runs=runs)

    def _section_ref(self, field: str) -> StructRef | None:
        return self._locator.child(self._root_ref, _slot("Profile", field))

    def _decode_columns(
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
                self._array_span(where, struct_name, column.field),
            )
        return columns

    def _array_span(
        self, where: StructRef | None, struct_name: str, field: str
    ) -> tuple[int, int] | None:
        """Where the data of the ``Array`` in ``field`` of a struct lies in the file."""
        array_where = self._locator.child(where, _slot(struct_name, field))
        return self._locator.data_span(array_where, _slot("Array", "data"))

    def _array_spans(self, section: str) -> list[tuple[int, int]]:
        """(offset, length) of the data of every array (and of the graph's string blob) of
        ``section``, as far as the message's pointers can be followed without pycapnp."""
        if section == "execution":
            return self._run_spans()
        where = self._section_ref(section)
        fields = [(where, struct, c.field) for struct, c in _SECTION_COLUMNS[section]]
        spans = [self._array_span(*field) for field in fields]
        if section == "graph":
            strings = self._locator.child(where, _slot("Graph", "strings"))
            spans.append(self._array_span(strings, "Strings", "offsets"))
            spans.append(self._locator.data_span(strings, _slot("Strings", "blob")))
        return [span for span in spans if span is not None]

    def _run_spans(self) -> list[tuple[int, int]]:
        count = _count_runs(self._root)
        if count * _MIN_RUN_BYTES > len(self._data or b""):
            # More runs than the file has room for (a hostile list of empty structs can
            # claim 2^29): their pages are simply kept, rather than walked one by one.
            return []
        execution = self._locator.child(self._root_ref, _slot("Profile.execution", "profile"))
        runs = _slot("Execution", "runs")
        spans = [
            self._array_span(self._locator.element(execution, runs, i), "Run", column.field)
            for i in range(count)
            for column in cols.RUN_COLUMNS
        ]
        return [span for span in spans if span is not None]

    def _decode_strings(self, strings: Any, where: StructRef | None) -> Strings:
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


def read_profile(path: str | Path) -> ProfileData:
    """Read every section of a ``profile.pop`` at once."""
    with ProfileReader(path) as reader:
        return reader.to_profile()


def _read_file(path: Path, on_demand: bool) -> FileBytes:
    """The file's bytes, read only after its segment table agrees with its size, so a huge
    file that is not a profile (a disk image, gigabytes of zeros) is refused at once."""
    try:
        size = regular_file_size(path)
        if size > MAX_PROFILE_BYTES:
            raise ReportError(
                path, f"is {size} bytes, over the {MAX_PROFILE_BYTES} a profile.pop may have"
            )
        # Unbuffered and read into place: no buffered head joined to the rest, no copy.
        file = open(path, "rb", buffering=0)  # noqa: SIM115 -- FileBytes keeps it open
        try:
            head = file.read(4 * (MAX_SEGMENTS + 2))
            _check_framing(path, head, size)
            file.seek(0)
            return FileBytes(path, file, size, releasable=on_demand)
        except BaseException:
            file.close()
            raise
    except OSError as error:
        raise ReportError(path, f"cannot read: {error.strerror or error}") from error
    except MemoryError as error:
        raise ReportError(path, "not enough memory to read it") from error


def _check_framing(path: Path, data: bytes, size: int | None = None) -> list[tuple[int, int]]:
    """Check the stream framing against the file's length (``size``, else ``len(data)``:
    ``data`` may be only the file's first bytes); return (first byte, length) of each
    segment.

    Done before capnp sees the bytes, so a cut file says "truncated" instead of a C++ error.
    """
    size = len(data) if size is None else size
    if not size:
        raise ReportError(path, "is empty, not a profile.pop")
    if size < 8:
        raise ReportError(path, f"truncated: {size} bytes is too short for a profile.pop")
    segments = struct.unpack_from("<I", data, 0)[0] + 1
    if segments > MAX_SEGMENTS:
        raise ReportError(path, "not a profile.pop (not a Cap'n Proto message)")
    table_bytes = 4 * (segments + 1) + 4 * (segments % 2 == 0)
    if size < table_bytes:
        raise ReportError(path, f"truncated after {size} bytes, inside the segment table")
    sizes = struct.unpack_from(f"<{segments}I", data, 4)
    expected = table_bytes + 8 * sum(sizes)
    if size < expected:
        raise ReportError(path, f"truncated after {size} of {expected} bytes")
    if size > expected:
        raise ReportError(
            path, f"has {size - expected} bytes after the end of its message: not one profile"
        )
    starts = table_bytes + 8 * np.concatenate(([0], np.cumsum(sizes[:-1], dtype=np.int64)))
    return [(int(start), 8 * size) for start, size in zip(starts, sizes, strict=True)]


_LATEST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z, the last second a calendar shows


def _count_runs(root: Any) -> int:
    """How many runs the execution section lists (0 when it was never run or is damaged: the
    damage is reported when the section is decoded)."""
    try:
        execution = root.execution
        return len(execution.profile.runs) if execution.which() == "profile" else 0
    except DECODE_ERRORS:
        return 0


def _created_time(value: float) -> float:
    """``createdUnix`` as seconds since 1970, refusing what no clock gives (NaN, 1e300)."""
    value = float(value)
    if not 0.0 <= value <= _LATEST_TIME:  # also False for NaN
        raise ReportError(None, f"createdUnix {value!r} is not a time (seconds since 1970)")
    return value


def _check_instances(runs: list[RunData], count: int, index: int, file_bytes: int) -> None:
    """Refuse runs holding more step instances than the file has room for: each instance
    takes 12 bytes of its own (a step id and a start cycle) unless runs share one list,
    which only a damaged or hostile file does, and which would multiply every analysis."""
    total = sum(len(r.step_ids) for r in runs) + count
    if 12 * total > file_bytes:
        raise ReportError(
            None,
            f"run {index}: the runs so far hold {total:,} step instances, more than the "
            f"file's {file_bytes:,} bytes can (runs share their data)",
        )


def _check_magic_and_version(path: Path, magic: str, major: int, minor: int) -> None:
    if magic != MAGIC:
        raise ReportError(path, f"not a popvision-py profile (magic {magic[:40]!r})")
    if major > FORMAT_MAJOR:
        raise FormatVersionError(
            path,
            f"written in profile format {major}.{minor}, but this popvision-py reads format "
            f"{FORMAT_MAJOR} (up to {FORMAT_MAJOR}.{FORMAT_MINOR}); update popvision-py",
        )
    if major < 1:
        raise ReportError(path, f"unknown profile format version {major}.{minor}")

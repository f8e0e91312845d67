"""Reads ``profile.pop`` lazily: the file is read once and checked up front (framing, magic,
major version); each section is decoded on first access, validated and cached.

Arrays are read-only numpy views onto the file's bytes (no copy). A damaged section raises
``ReportError`` naming the file and the section, while the other sections still load.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from profiler_core.errors import ChecksumError, ReportError
from profiler_core.formats.profile_pop import columns as cols
from profiler_core.formats.profile_pop.blocks import BLOCKS_SINCE_MINOR, decode_blocks
from profiler_core.formats.profile_pop.checksums import (
    GRAPH_COUNTS,
    GRAPH_COUNTS_SINCE_MINOR,
    PROGRAM_STEPS,
    StoredChecksums,
)
from profiler_core.formats.profile_pop.framing import (
    check_framing,
    check_magic_and_version,
    read_file,
)
from profiler_core.formats.profile_pop.graph_counts import check_counts, decode_graph_counts
from profiler_core.formats.profile_pop.locate import Locator
from profiler_core.formats.profile_pop.schema import (
    DECODE_ERRORS,
    NESTING_LIMIT,
    describe,
    profile_schema,
    traversal_limit_words,
)
from profiler_core.formats.profile_pop.section_arrays import ARRAY_SECTIONS, SectionArrays
from profiler_core.model.profile import (
    BlocksData,
    ExecutionData,
    GraphCounts,
    GraphData,
    Header,
    LivenessData,
    MemoryData,
    ProfileData,
    ProgramData,
    ProgramSteps,
    RunData,
    TargetInfo,
)
from profiler_core.model.strings import Strings

T = TypeVar("T")


class ProfileReader:
    """One ``profile.pop``, opened: ``.header``, ``.target``, ... decode on first access.

    Opening reads the whole file (one ``read``) and checks that it is a complete Cap'n Proto
    message with the profile magic and a major version this reader knows. ``on_demand``
    then gives the sections' arrays back to the system until each is first decoded
    (``FileBytes``): a reader of one section holds that section alone, for a second read of
    it (~1 ms per MB). Use as a context manager or call ``close()`` to close the file; arrays
    already handed out stay valid. Threads may ask for sections at once (the window decodes
    the graph in a worker after its first paint while pages ask): one decodes at a time.
    """

    def __init__(self, path: str | Path, on_demand: bool = False, verify: bool = True) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()  # one section decoded at a time; close waits for it
        #: Check each section against its checksum when decoded (off: benchmarks' baseline).
        self.verify = verify
        self._bytes = read_file(self.path, on_demand)
        data = self._bytes.data
        segments = check_framing(self.path, data)
        self._data: bytes | mmap.mmap | None = data
        self._arrays = SectionArrays(data, Locator(data, segments))
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
        check_magic_and_version(self.path, magic, self.format_major, self.format_minor)
        self._cache: dict[str, Any] = {}
        self._checksums = StoredChecksums(self._root, self.format_major, self.format_minor)
        if self._bytes.releasable:
            for section in ARRAY_SECTIONS:
                self._bytes.release(section, self._arrays.array_spans(section, self._root))

    def __enter__(self) -> ProfileReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._exit.close()
            self._bytes.close()
            self._root = self._data = None
            self._arrays = SectionArrays(None, Locator(b"", [(0, 0)]))

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
    def graph_counts(self) -> GraphCounts:
        """The graph at a glance: the file's own counts (format 1.3, checked alone, without
        the graph's columns), else counted from the graph's columns."""
        if self._stores_counts:
            return self._section("graph", self._decode_graph_counts, key=GRAPH_COUNTS)
        return self.graph.counts()

    @property
    def _stores_counts(self) -> bool:
        return self.format_minor >= GRAPH_COUNTS_SINCE_MINOR

    def _decode_graph_counts(self, root: Any) -> GraphCounts:
        return decode_graph_counts(root, f"{self.format_major}.{self.format_minor}")

    @property
    def strings(self) -> Strings:
        """The graph's string table alone (names of variables, compute sets and steps),
        without decoding and checking the graph's columns."""
        return self._section("graph", self._decode_graph_strings, key="strings")

    def _decode_graph_strings(self, root: Any) -> Strings:
        where = self._arrays.child(self._arrays.section_ref("graph"), "Graph", "strings")
        return self._arrays.strings(root.graph.strings, where)

    @property
    def memory(self) -> MemoryData:
        return self._section("memory", self._decode_memory)

    @property
    def programs(self) -> ProgramData:
        return self._section("programs", self._decode_programs)

    @property
    def program_steps(self) -> ProgramSteps:
        """The program tree and its steps' kinds and names, checked without the steps'
        costs (format 1.4; an older file's one checksum covers both)."""
        found = self._cache.get("programs")
        if isinstance(found, ProgramData):  # already checked whole
            return found.steps()
        return self._section("programs", self._decode_programs, key=PROGRAM_STEPS).steps()

    @property
    def liveness(self) -> LivenessData:
        return self._section("liveness", self._decode_liveness)

    @property
    def execution(self) -> ExecutionData | None:
        """The runs, or None when the program was compiled but never run."""
        return self._section("execution", self._decode_execution)

    @property
    def blocks(self) -> BlocksData | None:
        """Lightweight profiling's blocks (format 1.5, ``profile_pop/blocks.py``), or None
        when it was off or the file is older."""
        if (self.format_major, self.format_minor) < (1, BLOCKS_SINCE_MINOR):
            return None
        return self._section("blocks", self._decode_blocks)

    def _decode_blocks(self, root: Any) -> BlocksData | None:
        where = self._arrays.section_ref("blocks")
        strings_where = self._arrays.child(where, "Blocks", "strings")
        return decode_blocks(
            root,
            lambda section, spec: self._arrays.columns(section, where, "Blocks", spec),
            lambda strings: self._arrays.strings(strings, strings_where),
        )

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
            blocks=self.blocks,
        )

    def _section(self, name: str, decode: Callable[[Any], T], key: str | None = None) -> T:
        """Decode section ``name`` once (cached under ``key``, default the name)."""
        # Errors are cached too: retrying a damaged section would only spend the message's
        # traversal budget that the intact sections still need.
        key = key or name
        found = self._cache.get(key)
        if found is None:
            with self._lock:
                found = self._decoded(name, decode, key)
        if isinstance(found, ReportError):
            raise found
        return found

    def _decoded(self, name: str, decode: Callable[[Any], T], key: str) -> T | ReportError:
        """Section ``name`` from the cache, decoded (and checked) into it first if need be."""
        if key not in self._cache:
            if self._root is None:
                raise ReportError(self.path, f"section '{name}': the reader was closed")
            try:
                self._bytes.restore(name)
                found = decode(self._root)
                if self.verify:
                    self._checksums.check(key, name, found)
                if key == "graph":
                    self._check_graph_counts(found)
                self._cache[key] = found
            except ChecksumError as error:
                self._cache[key] = ChecksumError(self.path, error.problem)
            except ReportError as error:
                self._cache[key] = ReportError(self.path, f"section '{name}': {error.problem}")
            except DECODE_ERRORS as error:
                self._cache[key] = ReportError(self.path, f"section '{name}': {describe(error)}")
        return self._cache[key]

    def decoded(self, section: str) -> bool:
        """Whether ``section`` has been decoded (successfully or not)."""
        return section in self._cache

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
        graph, where = root.graph, self._arrays.section_ref("graph")
        strings = self.strings
        columns = self._arrays.columns(graph, where, "Graph", cols.GRAPH_COLUMNS)
        cols.check_graph(columns, len(strings))
        # 1.1 additions: a 1.0 file has no state sizes (None) and no edge count (-1).
        optional = [c for c in cols.GRAPH_OPTIONAL_COLUMNS if graph._has(c.field)]
        extra = self._arrays.columns(graph, where, "Graph", tuple(optional))
        cols.check_optional(columns, extra, cols.GRAPH_OPTIONAL_COLUMNS)
        return GraphData(strings=strings, num_edges=int(graph.numEdges), **columns, **extra)

    def _check_graph_counts(self, graph: GraphData) -> None:
        """The graph's columns against its stored counts (after the columns' checksum, so a
        damaged column says that first)."""
        if not self._stores_counts:
            return
        try:
            counts = self.graph_counts
        except ReportError:  # said when the counts are asked for; the columns stand alone
            return
        check_counts(graph, counts)

    def _decode_memory(self, root: Any) -> MemoryData:
        where = self._arrays.section_ref("memory")
        columns = self._arrays.columns(root.memory, where, "Memory", cols.MEMORY_COLUMNS)
        cols.check_tables(columns, cols.MEMORY_COLUMNS, {})
        return MemoryData(**columns)

    def _decode_programs(self, root: Any) -> ProgramData:
        where = self._arrays.section_ref("programs")
        programs = root.programs
        columns = self._arrays.columns(programs, where, "Programs", cols.PROGRAM_COLUMNS)
        cols.check_programs(columns)
        optional = [c for c in cols.PROGRAM_OPTIONAL_COLUMNS if programs._has(c.field)]
        extra = self._arrays.columns(programs, where, "Programs", tuple(optional))
        cols.check_optional(columns, extra, cols.PROGRAM_OPTIONAL_COLUMNS)
        return ProgramData(**columns, **extra)

    def _decode_liveness(self, root: Any) -> LivenessData:
        liveness, where = root.liveness, self._arrays.section_ref("liveness")
        columns = self._arrays.columns(liveness, where, "Liveness", cols.LIVENESS_COLUMNS)
        cols.check_tables(columns, cols.LIVENESS_COLUMNS, {})
        return LivenessData(always_live_bytes=int(liveness.alwaysLiveBytes), **columns)

    def _decode_execution(self, root: Any) -> ExecutionData | None:
        execution = root.execution
        if execution.which() != "profile":
            return None
        where = self._arrays.execution_ref()
        runs = []
        for index, run in enumerate(execution.profile.runs):
            run_where = self._arrays.run_ref(where, index)
            try:
                columns = self._arrays.columns(run, run_where, "Run", cols.RUN_COLUMNS)
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


def read_profile(path: str | Path) -> ProfileData:
    """Read every section of a ``profile.pop`` at once."""
    with ProfileReader(path) as reader:
        return reader.to_profile()


_LATEST_TIME = 253402300799.0  # 9999-12-31T23:59:59Z, the last second a calendar shows


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

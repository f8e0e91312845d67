"""``open_report(path)``: a report folder (or its ``profile.pop``) as a ``Report``.

Opening reads ``profile.pop`` once and checks its header; each section (target, graph,
memory, liveness, programs, execution, debug) is decoded the first time it is used.
``load`` decodes several with progress and cancellation, for the GUI's worker thread. A
damaged section raises ``ReportError`` when used while the others still load, so a
partial report shows what it can.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from profiler_core.errors import LoadCancelledError, ReportError
from profiler_core.formats.debug_cbor import check_pair, read_debug
from profiler_core.formats.files import regular_file_size
from profiler_core.formats.profile_pop import ProfileReader
from profiler_core.formats.serialized_graph import GRAPH_FILE
from profiler_core.model.profile import (
    BlocksData,
    DebugData,
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
from profiler_core.report.summary import SECTIONS, ReportSummary, report_summary

PROFILE_FILE = "profile.pop"
DEBUG_FILE = "debug.cbor"

Progress = Callable[[float, str], None]
Cancel = Callable[[], bool]


class Report:
    """One opened report: sections as attributes, decoded on first use and cached."""

    def __init__(
        self,
        folder: Path,
        profile_path: Path,
        debug_path: Path | None,
        on_demand: bool = False,
        verify: bool = True,
    ) -> None:
        self.folder = folder
        self.profile_path = profile_path
        self.debug_path = debug_path
        self._verify = verify
        self._reader = ProfileReader(profile_path, on_demand, verify)
        self._debug: DebugData | ReportError | None = None
        self._debug_lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def files(self) -> list[Path]:
        """The report files present in the folder (profile.pop, debug.cbor, the serialized
        graph, traces)."""
        found = [self.profile_path]
        if self.debug_path is not None:
            found.append(self.debug_path)
        graph = self.folder / GRAPH_FILE
        if graph.is_file():
            found.append(graph)
        found += sorted(self.folder.glob("*.pvti"))
        return found

    @property
    def location(self) -> str:
        """Where the report is, as the user would name it (a folder; an ssh:// address for
        a report on another machine)."""
        return str(self.folder)

    def file_sizes(self) -> dict[str, int]:
        """The size of each report file present, by name."""
        return {p.name: p.stat().st_size for p in self.files if p.exists()}

    @property
    def format_version(self) -> str:
        """``major.minor`` of the profile.pop format, known as soon as the file is open."""
        return f"{self._reader.format_major}.{self._reader.format_minor}"

    def summary(self, check_debug: bool = False) -> ReportSummary:
        """What the Summary view shows first (see ``report_summary``)."""
        return report_summary(self, check_debug)

    def section_decoded(self, section: str) -> bool:
        """Whether profile.pop section ``section`` has been decoded (successfully or not)."""
        return self._reader.decoded(section)

    @property
    def debug_loaded(self) -> bool:
        """Whether debug.cbor has been read (successfully or not)."""
        return self._debug is not None

    @property
    def header(self) -> Header:
        return self._reader.header

    @property
    def target(self) -> TargetInfo:
        return self._reader.target

    @property
    def graph(self) -> GraphData:
        return self._reader.graph

    @property
    def graph_counts(self) -> GraphCounts:
        """The graph at a glance, without decoding its columns when the file stores them."""
        return self._reader.graph_counts

    @property
    def strings(self) -> Strings:
        """The graph's names alone, without decoding the graph's columns."""
        return self._reader.strings

    @property
    def memory(self) -> MemoryData:
        return self._reader.memory

    @property
    def liveness(self) -> LivenessData:
        return self._reader.liveness

    @property
    def programs(self) -> ProgramData:
        return self._reader.programs

    @property
    def program_steps(self) -> ProgramSteps:
        """The program tree and steps without their costs (checked alone since format 1.4:
        what the Summary and a list of steps need)."""
        return self._reader.program_steps

    @property
    def execution(self) -> ExecutionData | None:
        return self._reader.execution

    @property
    def blocks(self) -> BlocksData | None:
        """Lightweight profiling's timed executions, or None when it was off."""
        return self._reader.blocks

    @property
    def debug(self) -> DebugData | None:
        """Debug contexts, or None when the folder has no debug.cbor."""
        if self.debug_path is None:
            return None
        with self._debug_lock:  # decoded once, whichever thread asks first
            if self._debug is None:
                try:
                    debug = read_debug(self.debug_path, self._verify)
                    check_pair(self.header, debug, self.debug_path)
                    self._debug = debug
                except ReportError as error:
                    self._debug = error
        if isinstance(self._debug, ReportError):
            raise self._debug
        return self._debug

    def debug_or_none(self) -> DebugData | None:
        """Debug contexts if they load, else None (views that can do without them)."""
        try:
            return self.debug
        except ReportError:
            return None

    def warnings(self) -> list[str]:
        """What makes this report partial, in words ([] for a whole one): a debug.cbor that
        belongs to another run (an incomplete report), cannot be read (a FIFO, a device, a
        link to /dev/zero) or is damaged. A folder without debug.cbor is whole: debug
        information is optional (``autoReport.outputDebugInfo``)."""
        error = self.section_error("debug")
        return [str(error)] if error is not None else []

    def notes(self) -> list[str]:
        """What a reader should know about this report that does not make it partial
        ([] for files with checksums): a profile.pop or debug.cbor (once read) written
        before checksums, so damage to it after writing cannot be detected. The CLI prints
        them as ``note:`` lines; the window shows them in its status bar."""
        found = []
        if self._reader.integrity_note:
            found.append(f"{self.profile_path}: {self._reader.integrity_note}")
        debug = self._debug
        if debug is not None and not isinstance(debug, ReportError) and debug.integrity_note:
            found.append(f"{self.debug_path}: {debug.integrity_note}")
        return found

    def section_error(self, section: str) -> ReportError | None:
        """The error of a damaged section, or None when it loads."""
        try:
            getattr(self, section)
        except ReportError as error:
            return error
        return None

    def load(
        self,
        sections: Iterable[str] = SECTIONS,
        progress: Progress | None = None,
        cancel: Cancel | None = None,
    ) -> dict[str, ReportError]:
        """Decode ``sections`` now; returns the errors of damaged ones by section.

        ``progress(fraction, section)`` is called before each; ``cancel()`` returning true
        stops with ``LoadCancelledError`` between sections.
        """
        sections = list(sections)
        errors: dict[str, ReportError] = {}
        for i, section in enumerate(sections):
            if cancel is not None and cancel():
                raise LoadCancelledError(self.profile_path, "opening was cancelled")
            if progress is not None:
                progress(i / len(sections), section)
            error = self.section_error(section)
            if error is not None:
                errors[section] = error
        if progress is not None:
            progress(1.0, "done")
        return errors

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> Report:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Report({str(self.folder)!r})"


def open_report(
    path: str | Path,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    on_demand: bool = False,
    verify: bool = True,
) -> Report:
    """Open a report folder, or the ``profile.pop`` inside one.

    ``on_demand``: the sections nobody decodes hold no memory -- for a reader that needs a
    few of them once (a CLI command); each needed section is then read from the file twice
    (see ``ProfileReader``), which a window decoding them all would pay for nothing.
    ``verify``: check each section against its checksum when decoded (off only to measure
    what checking costs: ``benchmarks/bench_checksums.py``)."""
    path = Path(path)
    if cancel is not None and cancel():
        raise LoadCancelledError(path, "opening was cancelled")
    if path.is_dir():
        folder, profile = path, path / PROFILE_FILE
        if not profile.is_file():
            _refuse_irregular(profile)
            found = _report_folders(path)
            hint = f"; it holds reports in {', '.join(found[:5])}" if found else ""
            raise ReportError(path, f"no {PROFILE_FILE} in this folder{hint}")
    elif path.is_file():
        folder, profile = path.parent, path
    else:
        _refuse_irregular(path)
        raise ReportError(path, "no such file or folder")
    if progress is not None:
        progress(0.0, "reading")
    debug = folder / DEBUG_FILE
    # A debug.cbor that is a FIFO, a device or a link to /dev/zero is kept, so reading it
    # says why it cannot be used instead of the report passing for one without debug info.
    present = debug.is_file() or os.path.lexists(debug)
    return Report(folder, profile, debug if present else None, on_demand, verify)


def _refuse_irregular(path: Path) -> None:
    """Say why ``path``, which is there but no regular file, cannot be read: a FIFO, a
    device, a dangling link or a symlink loop (``ln -s L L``) -- not "no such file"."""
    if not os.path.lexists(path):
        return
    try:
        regular_file_size(path)
    except FileNotFoundError:
        raise ReportError(path, "is a link to a file that does not exist") from None
    except OSError as exc:
        raise ReportError(path, f"cannot be read: {exc.strerror or exc}") from None


def _report_folders(path: Path) -> list[str]:
    return sorted(p.parent.name for p in path.glob(f"*/{PROFILE_FILE}"))

"""Which paths are host traces, where a report's traces are, and reading them in steps a
worker can report and cancel between (Qt-free: the app's TraceLoader runs it)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from popvision_py.viewmodels.system_trace import SystemTraceModel
from profiler_core.errors import LoadCancelledError, ReportError
from profiler_core.formats.files import is_regular_file
from profiler_core.formats.pvti import read_pvti
from profiler_core.formats.recognise import FileKind, recognise
from profiler_core.trace import open_trace, trace_from_pvti
from profiler_core.trace.json_events import MAX_TRACE_BYTES
from profiler_core.trace.open import not_a_trace

MAX_JSON_BYTES = MAX_TRACE_BYTES  # a bigger Chrome JSON is refused before it is parsed


@dataclass
class OpenedTrace:
    """A trace read from ``paths``, laid out for the System Trace view."""

    paths: list[Path]
    model: SystemTraceModel
    seconds_to_load: float = 0.0
    files: list[Path] = field(default_factory=list)  # the .pvti / .json files read
    #: read from Chrome JSON (a PyTorch, TensorFlow, viztracer... trace): what it could not
    #: show is said in the banner alone, never in a box over it
    third_party: bool = False

    @property
    def name(self) -> str:
        return ", ".join(p.name for p in self.paths)

    def incomplete_text(self) -> str:
        """ "" for a finished trace; else what shows that the writer had not finished or
        that a file was cut short (``Trace.warnings``)."""
        trace = self.model.tables  # a live model's open spans are there, with the warnings
        parts = list(trace.warnings)
        parts += [f"{self.name}: {w}" for w in trace.partial_warnings()[len(trace.warnings) :]]
        return "\n".join(parts)

    def status_text(self) -> str:
        """The status bar's one line on opening: the file, its load time and how many notes
        the banner holds -- not the notes themselves, whose lines ran together there."""
        banner = self.banner_text()
        notes = banner.count("\n") + 1 if banner else 0
        said = f"; {notes} note(s) in the banner above the timeline" if notes else ""
        return f"Opened trace {self.name} in {self.seconds_to_load:.2f} s{said}."

    def banner_text(self) -> str:
        """What the System Trace banner says: ``incomplete_text`` and how the lanes were
        clamped (a damaged depth column's spans drawn in a thread's last lane)."""
        clamped = self.model.clamped_text()
        notes = [self.incomplete_text(), f"{self.name}: {clamped}" if clamped else ""]
        return "\n".join(note for note in notes if note)


def is_trace_path(path: str | Path) -> bool:
    """A trace by its content (a .pvti, a folder of them and no report, Chrome JSON plain
    or gzip, whatever the names), or a file that is neither but is named like a trace (the
    trace reader says why it cannot be read): ``formats.recognise`` decides."""
    return recognise(path).goes_to_trace_reader


def report_traces(folder: str | Path) -> list[Path]:
    """The .pvti files written with a report: in its folder, else beside it (the engine
    writes them where PVTI_OPTIONS's ``directory`` says, usually the autoReport folder)."""
    folder = Path(folder)
    for place in (folder, folder.parent):
        found = _regular_pvti_files(place)
        if found:
            return found
    return []


@dataclass(frozen=True)
class ReportTraces:
    """The host traces of one report: the files to show, and the recorded ones that are gone."""

    found: list[Path]
    missing: list[Path] = field(default_factory=list)

    def missing_text(self) -> str:
        """What the System Trace says of recorded traces that are gone ("" when none are)."""
        if not self.missing:
            return ""
        names = "\n".join(f"  {p}" for p in self.missing)
        return (
            f"This report's host trace is no longer where the program wrote it:\n{names}\n\n"
            "If it was moved, open it with File > Open trace…, or put it in or beside the "
            "report folder."
        )


def traces_of_report(folder: str | Path, recorded: Sequence[str]) -> ReportTraces:
    """The traces a report belongs with: the .pvti files its engine recorded writing
    (``Header.traces``, absolute paths wherever PVTI_OPTIONS put them); a recorded file that
    has moved is still found under its name in or beside the report folder. A report that
    recorded none (older files, or tracing was off) gets the .pvti files in or beside it."""
    folder = Path(folder)
    # Only absolute .pvti paths: a report is read, never trusted to name other files.
    paths = [Path(p) for p in recorded if p.endswith(".pvti") and Path(p).is_absolute()]
    if not paths:
        return ReportTraces(report_traces(folder))
    found, missing = [], []
    for path in paths:
        moved = (place / path.name for place in (folder, folder.parent))
        here = path if path.is_file() else next((m for m in moved if m.is_file()), None)
        if here is None:
            missing.append(path)
        elif here not in found:
            found.append(here)
    return ReportTraces(found, missing)


def trace_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = _regular_pvti_files(path)
            if not inside:
                raise ReportError(path, "folder holds no .pvti files")
            files += inside
        else:
            files.append(path)
    return files


def _regular_pvti_files(folder: Path) -> list[Path]:
    """The ``*.pvti`` regular files in ``folder``: a FIFO, device or dangling link with the
    name is no trace, and opening a FIFO would wait for a writer forever."""
    return [f for f in sorted(folder.glob("*.pvti")) if is_regular_file(f)]


def read_trace(
    paths: list[str | Path],
    progress: Callable[[float, str], None] = lambda f, t: None,
    stopped: Callable[[], bool] = lambda: False,
    *,
    max_json_bytes: int | None = None,
) -> OpenedTrace:
    """Read ``paths`` (.pvti files, folders of them, or one Chrome JSON) into one trace."""
    started = time.perf_counter()
    paths = [Path(p) for p in paths]
    files = trace_files(paths)
    for f in files:
        if not f.exists():
            raise ReportError(f, "no such file")
    kinds = [recognise(f) for f in files]
    if all(k.kind is FileKind.PVTI for k in kinds):
        contents = []
        for i, f in enumerate(files):
            _check(stopped)
            progress(0.8 * i / len(files), f"Reading {f.name} ({i + 1} of {len(files)})")
            contents.append(read_pvti(f))
        _check(stopped)
        progress(0.8, "Merging the files on one time axis")
        trace = trace_from_pvti(contents, in_place=True)
    elif len(files) == 1:
        progress(0.1, f"Reading {files[0].name} ({kinds[0].describe()})")
        limit = MAX_JSON_BYTES if max_json_bytes is None else max_json_bytes
        trace = open_trace(files[0], max_json_bytes=limit)  # JSON, or says it is neither
    else:
        odd = next(k for k in kinds if k.kind is not FileKind.PVTI)
        if odd.kind is FileKind.CHROME_JSON:
            raise ReportError(odd.path, "open Chrome JSON traces one at a time (only .pvti "
                              "files merge)")  # fmt: skip
        raise not_a_trace(odd)
    _check(stopped)
    progress(0.9, "Laying out the lanes")
    model = SystemTraceModel(trace)
    _check(stopped)
    third_party = kinds[0].kind is FileKind.CHROME_JSON
    return OpenedTrace(paths, model, time.perf_counter() - started, files, third_party)


def _check(stopped: Callable[[], bool]) -> None:
    if stopped():
        raise LoadCancelledError(None, "opening the trace was cancelled")

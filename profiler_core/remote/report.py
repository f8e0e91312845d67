"""Reports and traces on another machine, opened over SSH as local ones are.

``open_source(text)`` opens a local report folder or an ``ssh://`` one: the remote folder
is listed, profile.pop (what every first page needs) is fetched at once, debug.cbor when
first used (``RemoteReport.debug``, or ``fetch_debug`` with progress) and the .pvti files
when the System Trace asks (``fetch_traces``). A file that cannot be fetched (the
connection lost, a link out of the folder) is that file's error, as a damaged one is: what
was fetched before stays readable.
"""

from __future__ import annotations

from pathlib import Path

from profiler_core.errors import LoadCancelledError, RemoteError, ReportError
from profiler_core.formats.serialized_graph import GRAPH_FILE
from profiler_core.remote.cache import RemoteCache
from profiler_core.remote.folder import Cancel, Progress, RemoteFolder
from profiler_core.remote.location import RemoteLocation, is_remote, parse_location
from profiler_core.report.open import DEBUG_FILE, PROFILE_FILE, Report, open_report

TRACE_SUFFIXES = (".pvti", ".json", ".gz")  # .json.gz: Chrome JSON, gzipped


class RemoteReport(Report):
    """A ``Report`` whose files are fetched from ``remote`` into the local cache."""

    def __init__(self, remote: RemoteFolder, on_demand: bool = False, verify: bool = True) -> None:
        profile = remote.fetch(PROFILE_FILE)  # fetched by open_remote_report already
        debug = remote.mirror / DEBUG_FILE if remote.has(DEBUG_FILE) else None
        super().__init__(remote.mirror, profile, debug, on_demand, verify)
        self.remote = remote

    @property
    def location(self) -> str:
        return self.remote.folder_location.url

    @property
    def trace_names(self) -> list[str]:
        """The .pvti files in the remote folder (readable or refused), by name."""
        names = [n for n in (*self.remote.files, *self.remote.refused) if n.endswith(".pvti")]
        return sorted(names)

    @property
    def files(self) -> list[Path]:
        """Where the remote folder's readable files are (or will be, once fetched)."""
        return [self.remote.mirror / name for name in self._names()]

    def file_sizes(self) -> dict[str, int]:
        """Sizes as listed on the other machine (a file not fetched yet has one too)."""
        return {name: self.remote.files[name].size for name in self._names()}

    def _names(self) -> list[str]:
        """The readable files in a local report's order: profile.pop, debug.cbor, the
        serialized graph, traces."""
        first = [n for n in (PROFILE_FILE, DEBUG_FILE, GRAPH_FILE) if n in self.remote.files]
        return first + sorted(n for n in self.remote.files if n.endswith(".pvti"))

    def fetch_debug(self, progress: Progress | None = None, cancel: Cancel | None = None) -> None:
        """Fetch debug.cbor now (with progress) if it is not here yet; a failure is kept as
        the debug section's error, as a damaged debug.cbor's is."""
        if self.debug_path is None or self._debug is not None:
            return
        try:
            self.remote.fetch(DEBUG_FILE, progress, cancel)
        except LoadCancelledError:
            raise
        except ReportError as error:
            with self._debug_lock:
                if self._debug is None:
                    self._debug = error

    @property
    def debug(self):  # noqa: ANN201 -- as Report.debug
        self.fetch_debug()
        return super().debug

    def fetch_traces(
        self, progress: Progress | None = None, cancel: Cancel | None = None
    ) -> list[Path]:
        """Local copies of the folder's .pvti files (raises for the first that fails)."""
        names = [n for n in self.trace_names]
        return [
            self.remote.fetch(name, _part(progress, i, len(names)), cancel)
            for i, name in enumerate(names)
        ]

    def close(self) -> None:
        super().close()
        self.remote.close()

    def __repr__(self) -> str:
        return f"RemoteReport({self.location!r})"


def _part(progress: Progress | None, index: int, count: int) -> Progress | None:
    if progress is None:
        return None
    return lambda fraction, text: progress((index + fraction) / count, text)


def open_remote_report(
    source: str | RemoteLocation,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    on_demand: bool = False,
    verify: bool = True,
    cache: RemoteCache | None = None,
) -> RemoteReport:
    """Connect, list the remote report folder and fetch its profile.pop (the address may
    name the folder or the profile.pop in it)."""
    location = source if isinstance(source, RemoteLocation) else parse_location(source)
    if location.suffix in TRACE_SUFFIXES:
        raise RemoteError(location.url, "is a host trace, not a report: open it as a trace")
    if progress is not None:
        progress(0.0, f"Connecting to {location.host}…")
    remote = RemoteFolder.open(location, cache)
    try:
        if not remote.has(PROFILE_FILE):
            traces = sorted(n for n in remote.files if n.endswith(".pvti"))
            hint = f"; it holds host traces: open {remote.url_of(traces[0])}" if traces else ""
            raise RemoteError(remote.folder_location.url, f"no {PROFILE_FILE} in this folder{hint}")
        if cancel is not None and cancel():
            raise LoadCancelledError(None, "opening was cancelled")
        remote.fetch(PROFILE_FILE, progress, cancel)
        return RemoteReport(remote, on_demand, verify)
    except BaseException:
        remote.close()
        raise


def fetch_remote_trace(
    source: str | RemoteLocation,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    cache: RemoteCache | None = None,
) -> list[Path]:
    """Local copies of the trace an address names: one .pvti or Chrome JSON file, or every
    .pvti of a folder."""
    location = source if isinstance(source, RemoteLocation) else parse_location(source)
    remote = RemoteFolder.open(location, cache)
    try:
        if remote.named_file:
            names = [remote.named_file]
        else:
            names = sorted(n for n in (*remote.files, *remote.refused) if n.endswith(".pvti"))
            if not names:
                raise RemoteError(location.url, "folder holds no .pvti files")
        return [
            remote.fetch(n, _part(progress, i, len(names)), cancel) for i, n in enumerate(names)
        ]
    finally:
        remote.close()


def open_source(
    source: str | Path,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
    on_demand: bool = False,
    verify: bool = True,
) -> Report:
    """A report from a local path or an ``ssh://`` address."""
    if is_remote(source):
        return open_remote_report(str(source), progress, cancel, on_demand, verify)
    return open_report(source, progress, cancel, on_demand, verify)

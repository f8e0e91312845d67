"""A report folder on another machine: listed once over SFTP, each file fetched into the
cache the first time something needs it.

Only the folder the user named is read. Its files are the report's (profile.pop,
debug.cbor, *.pvti) and, when the address names a file, that file; a link among them is
followed only to a regular file inside the same folder, and anything else (a link out of
the folder, a FIFO, a folder) is refused by name, while the other files still open.
"""

from __future__ import annotations

import posixpath
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from profiler_core.errors import ConnectionLostError, RemoteError
from profiler_core.formats.serialized_graph import GRAPH_FILE
from profiler_core.remote.cache import RemoteCache, RemoteFile
from profiler_core.remote.location import RemoteLocation, parse_location
from profiler_core.remote.ssh_config import SshTarget, resolve_target

Progress = Callable[[float, str], None]
Cancel = Callable[[], bool]
REPORT_NAMES = ("profile.pop", "debug.cbor", GRAPH_FILE)


def _megabytes(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n / 1e3:,.1f} kB"


class RemoteFolder:
    """The files of one remote folder: ``files`` (readable), ``refused`` (name -> why),
    ``fetch(name)`` for a local copy. Thread-safe: one transfer at a time; a lost
    connection is made again by the next fetch."""

    def __init__(
        self,
        location: RemoteLocation,
        target: SshTarget,
        cache: RemoteCache | None = None,
    ) -> None:
        self.location, self.target = location, target
        self.cache = cache or RemoteCache()
        self.folder = ""  # the remote folder's real path, once listed
        self.named_file = ""  # the file the address names ("" for a folder)
        self.files: dict[str, RemoteFile] = {}
        self.refused: dict[str, str] = {}
        self.bytes_read = 0  # what this folder fetched over the network (tests, status)
        self.files_read: list[str] = []
        self.from_cache: list[str] = []
        self._local: dict[str, Path] = {}
        self._session = None
        self._lost = False  # a session was dropped: the next connect says so if it fails
        self._lock = threading.RLock()

    @classmethod
    def open(cls, source: str | RemoteLocation, cache: RemoteCache | None = None) -> RemoteFolder:
        """Connect and list the folder ``source`` names (or the folder of the file it names)."""
        location = source if isinstance(source, RemoteLocation) else parse_location(source)
        folder = cls(location, resolve_target(location), cache)
        try:
            folder.list()
        except BaseException:
            folder.close()
            raise
        return folder

    @property
    def host_label(self) -> str:
        return f"{self.target.user}@{self.target.hostname}:{self.target.port}"

    @property
    def mirror(self) -> Path:
        """The local folder showing this one's fetched files (named as the remote one)."""
        return self.cache.mirror_folder(self.host_label, self.folder)

    @property
    def folder_location(self) -> RemoteLocation:
        return self.location.parent() if self.named_file else self.location

    def url_of(self, name: str) -> str:
        return self.folder_location.child(name).url

    def session(self, lost: str = ""):  # noqa: ANN201 -- connection.SftpSession
        """The open SFTP session, connecting when there is none (paramiko is imported then);
        ``lost``: how the last connection went, said when connecting again fails."""
        with self._lock:
            if self._session is None or not self._session.alive:
                from profiler_core.remote.connection import connect  # paramiko, when needed

                was_lost = self._lost or self._session is not None
                self._session = None
                try:
                    self._session = connect(self.target)
                except RemoteError as error:
                    if not was_lost:
                        raise
                    first = lost or f"the connection to {self.target.hostname} was lost"
                    raise RemoteError(error.url, _lost_again(first, error.problem)) from None
                self._lost = False
            return self._session

    def _drop_lost_session(self) -> None:
        """Forget a session whose connection went away: its transport can still look
        active (a killed server's socket answers EOF before paramiko notices)."""
        if self._session is not None:
            self._session.close()
        self._session, self._lost = None, True

    def list(self) -> None:
        session = self.session()
        real = session.normalize(self.location.path)
        if stat.S_ISDIR(session.stat(real).st_mode):
            self.folder = real
        else:  # a file: its folder as named (not where a link to it points)
            parent = posixpath.dirname(self.location.path.rstrip("/")) or "/"
            self.folder = session.normalize(parent)
            self.named_file = posixpath.basename(self.location.path.rstrip("/"))
        for entry in session.listdir_attr(self.folder):
            name = entry.filename
            wanted = name in REPORT_NAMES or name.endswith(".pvti") or name == self.named_file
            if wanted and "/" not in name:
                self._classify(session, name, entry)

    def _classify(self, session, name: str, entry) -> None:  # noqa: ANN001
        mode = entry.st_mode or 0
        path = posixpath.join(self.folder, name)
        if stat.S_ISLNK(mode):
            try:
                path = session.normalize(path)
            except RemoteError:
                self.refused[name] = f"{name} is a link to a file that does not exist"
                return
            if not path.startswith(self.folder.rstrip("/") + "/"):
                self.refused[name] = (
                    f"{name} is a link out of the report folder (to {path}): refused, as "
                    "only the folder you opened is read; copy the file into it"
                )
                return
            entry = session.stat(path)
            mode = entry.st_mode or 0
        if not stat.S_ISREG(mode):
            self.refused[name] = f"{name} is not a regular file (a folder, FIFO or device)"
            return
        self.files[name] = RemoteFile(name, path, int(entry.st_size or 0), int(entry.st_mtime or 0))

    def has(self, name: str) -> bool:
        return name in self.files or name in self.refused

    def fetch(
        self, name: str, progress: Progress | None = None, cancel: Cancel | None = None
    ) -> Path:
        """A local copy of ``name``: from the cache when this version is there, else read
        over SFTP (``progress(fraction, text)`` as it comes; ``cancel()`` stops it)."""
        with self._lock:
            if name in self._local:
                return self._local[name]
            if name in self.refused:
                raise RemoteError(self.url_of(name), self.refused[name])
            file = self.files.get(name)
            if file is None:
                raise RemoteError(self.url_of(name), "no such file in the report folder")
            local = self.cache.lookup(self.mirror, file)
            if local is not None:
                self.from_cache.append(name)
            else:
                local = self._download(file, progress, cancel or (lambda: False))
            self._local[name] = local
            return local

    def _download(self, file: RemoteFile, progress: Progress | None, cancel: Cancel) -> Path:
        session = self.session()
        host = self.target.hostname

        def report(done: int) -> None:
            self.bytes_read += done - report.last  # type: ignore[attr-defined]
            report.last = done  # type: ignore[attr-defined]
            if progress is not None:
                fraction = done / file.size if file.size else 1.0
                text = f"Fetching {file.name} from {host}: {_megabytes(done)}"
                progress(min(fraction, 1.0), f"{text} of {_megabytes(file.size)}")

        report.last = 0  # type: ignore[attr-defined]
        if progress is not None:
            progress(0.0, f"Fetching {file.name} from {host}…")

        def download(write: Callable[[bytes], None]) -> int:
            read = session.read_into(file.real_path, file.size, write, report, cancel)
            now = session.stat(file.real_path)
            if read != file.size or (now.st_size, now.st_mtime) != (file.size, file.mtime):
                raise RemoteError(
                    self.url_of(file.name),
                    f"changed on {host} while it was read ({read:,} of {file.size:,} bytes): "
                    "it is still being written? Reload when the program has finished.",
                )
            return read

        try:
            local = self.cache.store(self.mirror, file, download)
        except ConnectionLostError as lost:
            # Connect once more and read the file again: a host that is back answers, one
            # that is gone says so, in the words of the first loss.
            self._drop_lost_session()
            session = self.session(lost=lost.problem.partition(". What was read")[0])
            local = self.cache.store(self.mirror, file, download)
        self.files_read.append(file.name)
        return local

    def close(self) -> None:
        with self._lock:
            if self._session is not None:
                self._session.close()
                self._session = None


def _lost_again(first: str, reason: str) -> str:
    return (
        f"{first}, and connecting again failed ({reason.rstrip('.?!')}). What was read "
        "before stays; reload (Ctrl+R) when the host is reachable again."
    )

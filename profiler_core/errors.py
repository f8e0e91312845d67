"""The one exception family of profiler_core: every problem with a file a user gave us."""

from __future__ import annotations

from pathlib import Path


class ReportError(Exception):
    """A report or trace file that cannot be read, named with what is wrong.

    The message always starts with the file, so a user can act on it without
    reading a traceback: ``profile.pop: truncated after 120 of 4096 bytes``.
    """

    def __init__(self, path: str | Path | None, problem: str) -> None:
        self.path = None if path is None else Path(path)
        self.problem = problem
        where = f"{self.path}: " if self.path is not None else ""
        super().__init__(f"{where}{problem}")


class FormatVersionError(ReportError):
    """The file was written by a newer format major version than this reader knows."""


class ChecksumError(ReportError):
    """Part of a file fails its checksum: it changed after it was written (a bad disk, a
    copy cut short, an edit), so what it decodes to cannot be trusted."""


class LoadCancelledError(ReportError):
    """The user (or a caller) cancelled a long load; nothing was kept half-loaded."""


class RemoteError(ReportError):
    """A report or trace on another machine that cannot be reached or read over SSH: the
    host, its key, the credentials, the connection, or a remote path we refuse to follow.
    The message starts with the ssh:// address (kept as typed: a ``Path`` would fold its
    ``//``) and says what to do."""

    def __init__(self, url: object, problem: str) -> None:
        super().__init__(None, problem)
        self.url = str(url)
        self.args = (f"{self.url}: {problem}",)

    def __str__(self) -> str:
        return self.args[0]


class ConnectionLostError(RemoteError):
    """The SSH connection went away during a transfer (the server stopped, the network
    dropped): a reader connects once more before giving up (``RemoteFolder.fetch``)."""


class HostKeyError(RemoteError):
    """The host's key is not known, or differs from the one known for it: refused, as ssh
    refuses it, with the fingerprint and how to accept it."""

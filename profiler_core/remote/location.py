"""``ssh://[user@]host[:port]/path``: where a report or trace lies on another machine.

The path is absolute (``ssh://server/home/me/report/training``), or from the remote home
with ``/~/`` (``ssh://server/~/report/training``), as scp-style tools write it. A path with
a ``..`` part is refused: the folder is named as it is, so nothing read later can be
"outside what the user asked for" by a trick of spelling.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote, unquote

from profiler_core.errors import RemoteError

SCHEME = "ssh://"
# user@ (no "@" or "/" in it), host (a name, an IPv4 address or [IPv6]), :port, /path
_URL = re.compile(
    r"^ssh://(?:(?P<user>[^@/]+)@)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^:/@\[\]]+)"
    r"(?::(?P<port>[0-9]*))?(?P<path>/.*)?$",
    re.IGNORECASE,
)


def is_remote(source: object) -> bool:
    """Whether ``source`` (a command-line word, a recent entry) names an ssh:// location."""
    return isinstance(source, str) and source[: len(SCHEME)].lower() == SCHEME


@dataclass(frozen=True)
class RemoteLocation:
    """A parsed ssh:// address. ``port`` is None when the URL names none (the SSH config's
    Port, else 22); ``user`` is "" when it names none (the config's User, else yours)."""

    host: str
    path: str  # absolute, or starting with "~/" for the remote home
    user: str = ""
    port: int | None = None

    @property
    def url(self) -> str:
        user = f"{quote(self.user, safe='')}@" if self.user else ""
        port = f":{self.port}" if self.port is not None else ""
        path = self.path if self.path.startswith("/") else f"/{self.path}"
        return f"{SCHEME}{user}{self.host}{port}{quote(path, safe='/~')}"

    def __str__(self) -> str:
        return self.url

    @property
    def name(self) -> str:
        """The last part of the path: the report folder's (or file's) name."""
        return PurePosixPath(self.path).name or self.path

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.path).suffix.lower()

    def child(self, name: str) -> RemoteLocation:
        """The location of ``name`` inside this folder (a plain file name)."""
        return RemoteLocation(self.host, f"{self.path.rstrip('/')}/{name}", self.user, self.port)

    def parent(self) -> RemoteLocation:
        parent = str(PurePosixPath(self.path).parent)
        return RemoteLocation(self.host, parent, self.user, self.port)


def parse_location(text: str) -> RemoteLocation:
    """``text`` as a ``RemoteLocation``; a ``RemoteError`` saying what is wrong otherwise."""
    text = text.strip()
    match = _URL.match(text)
    if not is_remote(text) or match is None:
        raise RemoteError(text, "not an ssh:// address; write ssh://user@host[:port]/path")
    host = match["host"]
    if not match["path"] or match["path"] == "/":
        raise RemoteError(text, "names no folder: write the report folder after the host")
    port_text = match["port"]
    port = None
    if port_text is not None:
        if not port_text or not 0 < int(port_text) < 65536:
            raise RemoteError(text, f"the port '{port_text}' is not a number from 1 to 65535")
        port = int(port_text)
    path = unquote(match["path"])
    if path.startswith("/~/") or path == "/~":
        path = "~/" + path[3:]
    parts = PurePosixPath(path).parts
    if ".." in parts:
        raise RemoteError(
            text, "the path has a '..' part: write the folder's own path, without '..'"
        )
    if "\x00" in path:
        raise RemoteError(text, "the path holds a NUL character")
    user = unquote(match["user"] or "")
    return RemoteLocation(host, path.rstrip("/") or "/", user, port)


def source_of(item: str | Path) -> str | Path:
    """A command-line word or recent entry as what opening takes: an ssh:// text stays text
    (``Path`` would fold its ``//``), anything else is a local path."""
    if isinstance(item, str) and is_remote(item):
        return item.strip()
    return Path(item)

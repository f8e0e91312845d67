"""The local cache of files fetched over SSH, by checksum.

Each fetched file is kept once under its SHA-256 (``blobs/ab/abcdef…``, read-only), and
shown in a mirror of the remote folder (``mirror/user@host:port/remote/path/profile.pop``, a
hard link to the blob) so readers and their messages see the file's own name. An index per
mirrored folder maps each remote file's identity (its real path, size and modification
time, as SFTP lists them) to its checksum: a second open of an unchanged remote report
lists the folder and reads nothing again.

The cache lives in ``$POPVISION_CACHE_DIR``, else ``$XDG_CACHE_HOME/popvision-py``, else
``~/.cache/popvision-py``; deleting it is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from profiler_core.errors import ReportError
from profiler_core.formats.atomic import atomic_write

CACHE_VARIABLE = "POPVISION_CACHE_DIR"
INDEX_NAME = ".popvision-remote.json"


def cache_root() -> Path:
    if os.environ.get(CACHE_VARIABLE):
        return Path(os.environ[CACHE_VARIABLE]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "popvision-py"


@dataclass(frozen=True)
class RemoteFile:
    """A file of a remote folder as listed: its name there, its real path (links
    followed), size and modification time (whole seconds, as SFTP gives them)."""

    name: str
    real_path: str
    size: int
    mtime: int


Download = Callable[[Callable[[bytes], None]], int]
"""``download(write)`` reads the remote file into ``write``; returns the bytes read."""


class RemoteCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_root()) / "remote"

    def mirror_folder(self, host_label: str, remote_folder: str) -> Path:
        """Where the files of ``remote_folder`` on ``host_label`` (``user@host:port``) are
        shown locally."""
        return self.root / "mirror" / host_label / remote_folder.lstrip("/")

    def lookup(self, mirror: Path, file: RemoteFile) -> Path | None:
        """The local copy of ``file`` when the cache holds this very version, else None."""
        entry = _read_index(mirror).get(file.name)
        if not entry or {k: entry.get(k) for k in ("real_path", "size", "mtime")} != {
            "real_path": file.real_path,
            "size": file.size,
            "mtime": file.mtime,
        }:
            return None
        blob = self._blob(str(entry.get("sha256", "")))
        try:
            if blob is None or blob.stat().st_size != file.size:
                return None
            return self._show(blob, mirror / file.name)
        except OSError:
            return None

    def store(self, mirror: Path, file: RemoteFile, download: Download) -> Path:
        """Download ``file`` into the cache (hashing it on the way) and show it in
        ``mirror``; a download that fails leaves nothing behind."""
        blobs = self.root / "blobs"
        try:
            blobs.mkdir(parents=True, exist_ok=True)
            handle = tempfile.NamedTemporaryFile(dir=blobs, prefix=".part-", delete=False)  # noqa: SIM115 -- closed below; removed on failure
        except OSError as error:
            raise ReportError(blobs, f"cannot write the cache: {error.strerror}") from None
        digest = hashlib.sha256()
        part = Path(handle.name)
        try:
            with handle:

                def write(chunk: bytes) -> None:
                    digest.update(chunk)
                    handle.write(chunk)

                download(write)
            sha = digest.hexdigest()
            blob = blobs / sha[:2] / sha
            blob.parent.mkdir(exist_ok=True)
            if blob.exists():  # the same content came from elsewhere before
                part.unlink()
            else:
                os.chmod(part, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
                os.replace(part, blob)
            shown = self._show(blob, mirror / file.name)
        except BaseException:
            with contextlib.suppress(OSError):
                part.unlink()
            raise
        self._remember(mirror, file, sha)
        return shown

    def _blob(self, sha: str) -> Path | None:
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            return None  # an index edited by hand names no file outside the cache
        return self.root / "blobs" / sha[:2] / sha

    @staticmethod
    def _show(blob: Path, shown: Path) -> Path:
        """``shown`` made the blob (a hard link; a copy where links cannot be made)."""
        try:
            if shown.exists() and os.path.samefile(blob, shown):
                return shown
        except OSError:
            pass
        shown.parent.mkdir(parents=True, exist_ok=True)
        temp = shown.with_name(f".{shown.name}.link")
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        try:
            os.link(blob, temp)
        except OSError:  # a file system without hard links
            temp.write_bytes(blob.read_bytes())
        os.replace(temp, shown)  # a reader holding the old version keeps it open
        return shown

    @staticmethod
    def _remember(mirror: Path, file: RemoteFile, sha: str) -> None:
        index = _read_index(mirror)
        index[file.name] = {**asdict(file), "sha256": sha}
        text = json.dumps(index, indent=1, sort_keys=True).encode()
        with contextlib.suppress(ReportError):  # a cache that cannot remember refetches
            atomic_write(mirror / INDEX_NAME, lambda f: f.write(text))


def _read_index(mirror: Path) -> dict[str, dict]:
    try:
        index = json.loads((mirror / INDEX_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(index, dict):
        return {}
    return {k: v for k, v in index.items() if isinstance(v, dict)}

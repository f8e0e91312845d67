"""The Recent list, Qt-free: what was opened lately, most recent first, each once, at most
``MAX_RECENT`` (64, as System Analyser keeps). An entry is one source (a report folder, a
trace, or an ``ssh://`` address) or two compared (stored as ``"A\\tB"``). Local paths are
kept absolute with links followed; ssh:// addresses as typed (the other machine's paths
are its own)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from profiler_core.errors import RemoteError
from profiler_core.remote import is_remote, parse_location

MAX_RECENT = 64
PAIR = "\t"


def absolute_path(path: str | Path) -> str:
    """``path`` with links followed as far as they go: ``os.path.realpath`` stops at a
    symlink loop (``ln -s L L``) where ``Path.resolve`` raises RuntimeError; a path no file
    can have (an embedded NUL) is kept as it was typed, made absolute."""
    try:
        return os.path.realpath(path)
    except ValueError:
        return os.path.abspath(path)


def source_key(source: str | Path) -> str:
    """How one source is remembered: an ssh:// address in its plain form, a path absolute."""
    if is_remote(source):
        try:
            return parse_location(str(source)).url
        except RemoteError:
            return str(source).strip()
    return absolute_path(source)


def entry_of(sources: Sequence[str | Path]) -> str:
    return PAIR.join(source_key(s) for s in sources[:2])


def with_entry(entries: Sequence[str], entry: str) -> list[str]:
    """``entries`` with ``entry`` first, without its older copy, cut to MAX_RECENT."""
    return [entry, *(e for e in entries if e != entry)][:MAX_RECENT]


@dataclass(frozen=True)
class RecentEntry:
    """One row of the Recent list."""

    text: str  # as stored

    @property
    def sources(self) -> list[str]:
        return self.text.split(PAIR)

    @property
    def is_comparison(self) -> bool:
        return len(self.sources) == 2

    @property
    def is_remote(self) -> bool:
        return any(is_remote(s) for s in self.sources)

    @property
    def label(self) -> str:
        """``name — where`` for one source, ``A vs B — compared`` for two."""
        names = [_name(s) for s in self.sources]
        if self.is_comparison:
            return f"{names[0]}  vs  {names[1]}    —    compared"
        return f"{names[0]}    —    {self.sources[0]}"

    @property
    def tooltip(self) -> str:
        lines = [f"{'AB'[i] + ': ' if self.is_comparison else ''}{s}" for i, s in
                 enumerate(self.sources)]  # fmt: skip
        if self.is_remote:
            lines.append("(on another machine: opened over SSH)")
        elif not all(Path(s).exists() for s in self.sources):
            lines.append("(no longer exists)")
        return "\n".join(lines)

    @property
    def missing(self) -> bool:
        """A local source that is gone (remote ones are not checked: that needs the network)."""
        return not self.is_remote and not all(Path(s).exists() for s in self.sources)


def _name(source: str) -> str:
    return source.rstrip("/").rsplit("/", 1)[-1] or source

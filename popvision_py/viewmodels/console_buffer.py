"""The run console's text, Qt-free: output arrives in chunks (lines split anywhere), ANSI
escape codes are stripped, only the newest ``max_lines`` lines are kept (a program printing
megabytes stays bounded), and the lines can be searched."""

from __future__ import annotations

import re
from collections import deque

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
MAX_LINE = 4000  # characters kept of one line (a line of megabytes is cut)


def strip_ansi(text: str) -> str:
    """``text`` without colour and cursor escape codes."""
    return ANSI.sub("", text)


class ConsoleBuffer:
    """The newest ``max_lines`` complete lines, plus the unfinished last one."""

    def __init__(self, max_lines: int = 5000) -> None:
        self.max_lines = max_lines
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.partial = ""
        self.total_lines = 0  # every complete line ever appended
        self.total_bytes = 0

    @property
    def dropped(self) -> int:
        """Lines dropped from the top to keep the scrollback bounded."""
        return self.total_lines - len(self.lines)

    def append(self, text: str) -> list[str]:
        """Add a chunk of output; returns the lines it completed (ANSI stripped)."""
        self.total_bytes += len(text)
        text = self.partial + text.replace("\r\n", "\n")
        parts = text.split("\n")
        self.partial = parts.pop()[-MAX_LINE:]
        done = [strip_ansi(p.rsplit("\r", 1)[-1])[:MAX_LINE] for p in parts[-self.max_lines :]]
        self.total_lines += len(parts)
        self.lines.extend(done)
        return done

    def finish(self) -> list[str]:
        """The output has ended: an unfinished last line counts as a line."""
        if not self.partial:
            return []
        return self.append("\n")

    def text(self) -> str:
        return "\n".join(self.lines)

    def last_lines(self, n: int) -> list[str]:
        """The last ``n`` non-blank lines (for the message of a failed run)."""
        out: list[str] = []
        for line in reversed(self.lines):
            if line.strip():
                out.append(line)
                if len(out) == n:
                    break
        return out[::-1]

    def search(self, needle: str) -> list[int]:
        """Indices into ``lines`` of the lines holding ``needle`` (case-insensitive)."""
        if not needle:
            return []
        low = needle.lower()
        return [i for i, line in enumerate(self.lines) if low in line.lower()]

    def clear(self) -> None:
        self.lines.clear()
        self.partial = ""
        self.total_lines = self.total_bytes = 0

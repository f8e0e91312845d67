"""Compare mode for host traces, Qt-free: the traces of reports A and B read in one worker
job, what each side is called, and what to say when a side has no trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from popvision_py.viewmodels.trace_open import OpenedTrace, read_trace


@dataclass
class ComparedTraces:
    """The traces of A and B (None for a side without one) and the sides' names."""

    a: OpenedTrace | None
    b: OpenedTrace | None
    names: tuple[str, str]

    @property
    def sides(self) -> list[OpenedTrace | None]:
        return [self.a, self.b]

    def missing_text(self) -> str:
        """Which side has no trace ("" when both have one)."""
        texts = [
            f"Report {letter} ({name}) has no host trace: no .pvti file in its folder or "
            'beside it (run it with PVTI_OPTIONS=\'{"enable":"true"}\' to record one).'
            for letter, name, side in zip("AB", self.names, self.sides, strict=True)
            if side is None
        ]
        return " ".join(texts)


def read_compared_traces(
    a: list[Path],
    b: list[Path],
    names: tuple[str, str],
    progress: Callable[[float, str], None] = lambda f, t: None,
    stopped: Callable[[], bool] = lambda: False,
) -> ComparedTraces:
    """Read A's trace files ``a`` then B's ``b`` (either may be empty: no trace)."""

    def half(offset: float) -> Callable[[float, str], None]:
        return lambda f, text: progress(offset + f / 2, text)

    side_a = read_trace(list(a), half(0.0), stopped) if a else None
    side_b = read_trace(list(b), half(0.5), stopped) if b else None
    return ComparedTraces(side_a, side_b, names)

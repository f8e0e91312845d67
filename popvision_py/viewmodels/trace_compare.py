"""Compare mode for host traces, Qt-free: the traces of reports A and B read in one worker
job, what each side is called, and what to say when a side has no trace."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from popvision_py.viewmodels.trace_colors import PALETTE
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


def shared_label_colors(
    labels_a: tuple[str, ...], colors_a: np.ndarray, labels_b: tuple[str, ...]
) -> np.ndarray:
    """B's RGBA per label id so that a label has one colour on both sides: A's colour for a
    label A has, the palette's next colours (after A's) for labels only B has."""
    of_a = {label: i for i, label in enumerate(labels_a)}
    colors = np.zeros((len(labels_b), 4), dtype=np.uint8)
    fresh = len(labels_a)
    for i, label in enumerate(labels_b):
        if label in of_a:
            colors[i] = colors_a[of_a[label]]
        else:
            colors[i, :3], colors[i, 3] = PALETTE[fresh % len(PALETTE)], 255
            fresh += 1
    return colors

"""The System Trace's span colours: one per label, wherever the label is drawn, and grey
for spans that stand for several events merged in a pixel."""

from __future__ import annotations

import numpy as np

#: Span colours by label (a label keeps its colour wherever it is drawn).
PALETTE = np.array(
    [
        (78, 121, 167), (242, 142, 43), (89, 161, 79), (225, 87, 89), (118, 183, 178),
        (237, 201, 72), (176, 122, 161), (255, 157, 167), (156, 117, 95), (186, 176, 172),
        (95, 158, 209), (200, 82, 0),
    ],
    dtype=np.uint8,
)  # fmt: skip
MERGED_COLOR = (128, 128, 128, 255)


def label_colors(n_labels: int) -> np.ndarray:
    """RGBA per label id."""
    rgb = PALETTE[np.arange(n_labels) % len(PALETTE)]
    return np.hstack([rgb, np.full((n_labels, 1), 255, np.uint8)])

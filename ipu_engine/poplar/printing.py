"""Tensor values printed the way Poplar's ``PrintTensor`` prints them: ``v: {{1,2},{3,4}}``.

Numbers use C++ stream formatting (6 significant digits, ``1.5``, ``10``, ``1e-07``);
long dimensions are summarised with their first and last items around ``...``.
"""

from __future__ import annotations

import numpy as np

SUMMARISE_THRESHOLD = 16
EDGE_ITEMS = 3


def format_value(value: object) -> str:
    if isinstance(value, bool | np.bool_):
        return "1" if value else "0"
    if isinstance(value, np.floating | float):
        text = f"{float(value):g}"
        return {"inf": "inf", "-inf": "-inf", "nan": "nan"}.get(text, text)
    return str(int(value))  # type: ignore[call-overload]


def format_tensor(
    values: np.ndarray,
    summarise_threshold: int = SUMMARISE_THRESHOLD,
    edge_items: int = EDGE_ITEMS,
) -> str:
    """The brace form of an array of any rank; a scalar prints as its value."""
    if values.ndim == 0:
        return format_value(values[()])
    summarise = 0 < summarise_threshold < values.size

    def render(a: np.ndarray) -> str:
        if a.ndim == 0:
            return format_value(a[()])
        n = a.shape[0]
        if summarise and n > 2 * edge_items:
            parts = [render(a[i]) for i in range(edge_items)]
            parts.append("...")
            parts += [render(a[i]) for i in range(n - edge_items, n)]
        else:
            parts = [render(a[i]) for i in range(n)]
        return "{" + ",".join(parts) + "}"

    return render(values)


def print_line(title: str, values: np.ndarray) -> str:
    return f"{title}: {format_tensor(values)}"

"""Chart axes that speak the field's units: bytes in binary units, whole tiles and IPUs."""

from __future__ import annotations

import math

import pyqtgraph as pg

from popvision_py.viewmodels.format import byte_unit_for


def nice_step(raw: float) -> float:
    """The 1-2-5 step at or above ``raw``."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def label_decimals(step: float, most: int = 3) -> int:
    """Decimals that write every multiple of ``step`` exactly (2.5 needs 1, 0.25 needs 2),
    at most ``most``: a tick's label is its value, never a rounded neighbour."""
    for decimals in range(most + 1):
        scaled = step * 10**decimals
        if abs(scaled - round(scaled)) <= 1e-6 * max(scaled, 1.0):
            return decimals
    return most


class BytesAxis(pg.AxisItem):
    """A y axis in bytes whose ticks fall on round numbers of KiB, MiB, ..."""

    def __init__(self, title: str = "Memory", **kwargs) -> None:
        super().__init__("left", **kwargs)
        self.title = title
        self.divisor, self.unit = 1, "bytes"
        self.ipu_rows = False  # the heat map: one row per IPU instead of bytes
        self.min_ticks = 1.0  # a short chart (compare's Δ) asks for more labelled ticks
        self.two_lines = False  # title and unit on two lines: a short chart's label fits
        self.enableAutoSIPrefix(False)

    def show_ipu_rows(self, on: bool) -> None:
        self.ipu_rows = on
        if on:
            self.setLabel("IPU")

    def set_largest(self, largest: float, units: str = "KiB") -> None:
        self.divisor, self.unit = byte_unit_for(largest, units)
        gap = "<br>" if self.two_lines else " "
        self.setLabel(f"{self.title}{gap}({self.unit})")

    def tickSpacing(  # pyqtgraph's names
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, float]]:
        if self.ipu_rows:
            step = max(1.0, nice_step((maxVal - minVal) / max(size / 30.0, 1.0)))
            return [(step, 0.0)]
        span = (maxVal - minVal) / self.divisor
        major = nice_step(span / max(size / 50.0, self.min_ticks)) * self.divisor
        return [(major, 0.0), (major / 2, 0.0)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.ipu_rows:
            return [f"IPU {round(v)}" if v >= 0 else "" for v in values]
        decimals = label_decimals(spacing / self.divisor)
        return [f"{v / self.divisor:,.{decimals}f}" for v in values]


class IndexAxis(pg.AxisItem):
    """An axis of whole positions (tiles, IPUs): integer ticks only, labelled ``prefix`` N."""

    def __init__(self, orientation: str, prefix: str = "", **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        self.prefix = prefix
        self.names: list[str] | None = None  # a name per position replaces the numbers
        self.enableAutoSIPrefix(False)

    def tickSpacing(  # pyqtgraph's names
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, float]]:
        target = 90.0 if self.orientation in ("bottom", "top") else 40.0
        major = max(1.0, nice_step((maxVal - minVal) / max(size / target, 1.0)))
        minor = max(1.0, major / 5) if major >= 5 else major
        return [(major, 0.0), (minor, 0.0)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            i = round(v)
            if self.names is not None:
                out.append(self.names[i] if 0 <= i < len(self.names) else "")
            else:
                out.append(f"{self.prefix}{i:,}" if i >= 0 else "")
        return out

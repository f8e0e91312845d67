"""The Runs page's state, without Qt: one row per report of a folder of reports (or a sweep),
filled a batch at a time as the reports are read; the table's columns, which rows the filter
keeps, and the scatter and over-runs series of the rows shown.

Columns are numpy arrays grown per batch (a metric missing from a report is NaN, its fit
unknown), never an object per report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from popvision_py.viewmodels.format import byte_unit_for
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.tables.names import natural_key

#: what a chart axis can show: (label, kind) by reports column
METRICS: dict[str, tuple[str, str]] = {
    "total_cycles": ("Total cycles", "count"),
    "peak_live_bytes": ("Peak live memory", "bytes"),
    "fullest_tile_bytes": ("Fullest tile", "bytes"),
    "tiles_over": ("Tiles over", "count"),
}
FITS, DOES_NOT_FIT, NO_REPORT = "Fits", "Does not fit", "No report"
FIT_COLORS = {FITS: "#2ca02c", DOES_NOT_FIT: "#d62728", NO_REPORT: "#9a9a9a"}
SHOW_CHOICES = ("All", FITS, DOES_NOT_FIT, NO_REPORT)
HELP = {
    "Report": "The report's folder below the one opened (a sweep's run and the report in it)",
    "Total cycles": "Every run's cycles, as the Summary adds them up",
    "Peak live": "Peak live memory over the program steps, always-live memory included",
    "Fullest tile": "Bytes on the fullest tile, gaps included",
    "Fits": "Whether every tile fits its memory (No report: the run wrote none, or it could "
    "not be read)",
    "Tiles over": "Tiles whose memory is over what a tile has",
    "Warnings": "Why the report could not be read, or what of it is missing",
}
#: colours of a parameter's values (categorical, then repeating)
VALUE_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f",
)  # fmt: skip


class MaybeColumn(Column):
    """A numeric column where NaN (a report without the figure) shows as "—"."""

    def display(self, row: int) -> str:
        value = self.values[row]
        if isinstance(value, float | np.floating) and np.isnan(value):
            return "—"
        return super().display(row)


class RunsTable(ColumnTable):
    """The runs table: search and sort as every table, then only the rows ``keep`` allows."""

    def __init__(self, columns: list[Column], keep: np.ndarray) -> None:
        self.keep = keep
        super().__init__(columns)
        self._apply()

    def _apply(self) -> None:
        super()._apply()
        self.rows = self.rows[self.keep[self.rows]]


@dataclass(frozen=True)
class PointGroup:
    label: str
    color: str
    rows: np.ndarray  # source rows
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class Axis:
    label: str  # with its unit: "Peak live memory (KiB)"
    divisor: float  # values are shown divided by it


class RunsModel:
    """Reports' rows as they arrive, the filter and what the charts draw."""

    def __init__(self, title: str, parameters: Sequence[str], numeric: Sequence[str]) -> None:
        self.title = title  # the folder opened
        self.parameters = list(parameters)  # sweep parameters' column names
        self.numeric = set(numeric)  # those whose values are numbers
        self.expected = 0  # reports the loader found
        self.report: list[str] = []
        self.path: list[str | None] = []
        self.warnings: list[str] = []
        self.error: list[str] = []
        self.values: dict[str, list[Any]] = {p: [] for p in self.parameters}
        self.metrics = {key: np.zeros(0, dtype=np.float64) for key in METRICS}
        self.fit = np.zeros(0, dtype=object)  # FITS, DOES_NOT_FIT or NO_REPORT per row
        self.show = "All"

    def __len__(self) -> int:
        return len(self.report)

    # -- filling ----------------------------------------------------------------------------
    def add(self, batch: dict[str, list[Any]]) -> None:
        """Append rows: ``batch`` holds the reports table's columns (as lists) of the rows."""
        self.report += [str(r) for r in batch["report"]]
        self.path += list(batch["path"])
        self.warnings += [w or "" for w in batch["warnings"]]
        self.error += [e or "" for e in batch["error"]]
        for name in self.parameters:
            self.values[name] += list(batch.get(name, [None] * len(batch["report"])))
        for key in METRICS:
            column = np.array([np.nan if v is None else v for v in batch[key]], dtype=np.float64)
            self.metrics[key] = np.concatenate((self.metrics[key], column))
        fits = [NO_REPORT if ok is None else FITS if ok else DOES_NOT_FIT for ok in batch["fits"]]
        self.fit = np.concatenate((self.fit, np.array(fits, dtype=object)))

    # -- the table --------------------------------------------------------------------------
    def kept(self) -> np.ndarray:
        """Which rows the Show choice keeps."""
        if self.show == "All":
            return np.ones(len(self), dtype=bool)
        return self.fit == self.show

    def table(self) -> RunsTable:
        columns: list[Column] = [Column("Report", list(self.report), HELP["Report"])]
        columns += [self._parameter_column(name) for name in self.parameters]
        for key, header in (("total_cycles", "Total cycles"), ("peak_live_bytes", "Peak live"),
                            ("fullest_tile_bytes", "Fullest tile")):  # fmt: skip
            columns.append(MaybeColumn(header, self.metrics[key], HELP[header], METRICS[key][1]))
        columns.append(Column("Fits", list(self.fit), HELP["Fits"]))
        columns.append(
            MaybeColumn("Tiles over", self.metrics["tiles_over"], HELP["Tiles over"], "count")
        )
        why = [e or w for e, w in zip(self.error, self.warnings, strict=True)]
        columns.append(Column("Warnings", why, HELP["Warnings"]))
        return RunsTable(columns, self.kept())

    def _parameter_column(self, name: str) -> Column:
        values = self.values[name]
        if name in self.numeric:
            numbers = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
            kind = "count" if np.all(np.isnan(numbers) | (numbers == np.round(numbers))) else ""
            return MaybeColumn(name, numbers, "The sweep's value", kind or "number")
        return Column(name, ["" if v is None else str(v) for v in values], "The sweep's value")

    # -- the charts -------------------------------------------------------------------------
    def axis_choices(self) -> list[tuple[str, str]]:
        """(key, label) of what an axis can show: the figures, then numeric parameters."""
        choices = [(key, label) for key, (label, _) in METRICS.items()]
        return choices + [(p, p) for p in self.parameters if p in self.numeric]

    def color_choices(self) -> list[tuple[str, str]]:
        return [("fits", "Fits")] + [(p, p) for p in self.parameters]

    def axis_values(self, key: str) -> np.ndarray:
        if key in self.metrics:
            return self.metrics[key]
        return np.array([np.nan if v is None else v for v in self.values[key]], np.float64)

    def axis(self, key: str, rows: np.ndarray) -> Axis:
        """The label and unit of an axis showing ``key`` over ``rows``."""
        label, kind = METRICS.get(key, (key, "count"))
        values = self.axis_values(key)[rows]
        largest = float(np.nanmax(values)) if values.size and np.isfinite(values).any() else 0.0
        if kind == "bytes":
            divisor, unit = byte_unit_for(largest)
            return Axis(f"{label} ({unit})", float(divisor))
        if largest >= 1e6 and key in METRICS:
            return Axis(f"{label} (millions)", 1e6)
        return Axis(label, 1.0)

    def groups(self, rows: np.ndarray, x_key: str, y_key: str, color: str) -> list[PointGroup]:
        """The points of ``rows`` with both values, grouped by colour: fits / does not fit,
        or by each value of the parameter ``color``."""
        x, y = self.axis_values(x_key)[rows], self.axis_values(y_key)[rows]
        has = np.isfinite(x) & np.isfinite(y)
        rows, x, y = rows[has], x[has], y[has]
        x_axis, y_axis = self.axis(x_key, rows), self.axis(y_key, rows)
        x, y = x / x_axis.divisor, y / y_axis.divisor
        if color == "fits":
            labels = self.fit[rows].astype(str)
            order = [(k, FIT_COLORS[k]) for k in (FITS, DOES_NOT_FIT, NO_REPORT)]
        else:
            labels = np.array([str(self.values[color][r]) for r in rows.tolist()], dtype=str)
            distinct = sorted(set(labels.tolist()), key=natural_key)
            order = [(v, VALUE_COLORS[i % len(VALUE_COLORS)]) for i, v in enumerate(distinct)]
        groups = []
        for label, tint in order:
            mine = labels == label
            if mine.any():
                groups.append(PointGroup(label, tint, rows[mine], x[mine], y[mine]))
        return groups

    def over_runs(self, rows: np.ndarray, y_key: str) -> tuple[np.ndarray, np.ndarray]:
        """``rows`` in the order of their names (run-9 before run-10: a CI series) and their
        ``y_key`` values, in the axis's unit."""
        order = sorted(rows.tolist(), key=lambda r: natural_key(self.report[r]))
        ordered = np.array(order, dtype=np.int64)
        values = self.axis_values(y_key)[ordered] / self.axis(y_key, ordered).divisor
        return ordered, values

    def progress_text(self) -> str:
        failed = sum(1 for e in self.error if e)
        text = f"{len(self):,} of {self.expected:,} reports"
        return text + (f" ({failed:,} could not be read or wrote no report)" if failed else "")

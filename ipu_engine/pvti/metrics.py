"""libpvti's metric API: Graph/Series line charts and HeatmapDouble/HeatmapInt64 histograms."""

from __future__ import annotations

from collections.abc import Sequence
from time import monotonic_ns

import numpy as np

from ipu_engine.common.arguments import host_values, kind_error, name_arg, number_arg, sequence_arg
from ipu_engine.common.errors import ArgumentError
from ipu_engine.common.types import LONGLONG, Type
from ipu_engine.pvti.errors import MetricError
from ipu_engine.pvti.session import resolve, session
from profiler_core.formats.pvti import PvtiWriter


class Series:
    """One line of a Graph; ``add(value)`` records a sample at the current time."""

    __slots__ = ("graph", "name")

    def __init__(self, graph: Graph, name: str) -> None:
        if not isinstance(graph, Graph):
            raise ArgumentError(kind_error("Series: the graph", "a pvti.Graph", graph))
        self.graph = graph
        self.name = name_arg(name, f"Series of {graph.name!r}: the name", ArgumentError)

    def add(self, value: float) -> None:
        what = f"Series {self.name!r} of {self.graph.name!r}: the value"
        number = number_arg(value, what, MetricError)  # a str or list is refused, traced or not
        if session.recording and session.writer is not None:
            session.writer.add_sample(
                self.graph.name, self.name, monotonic_ns(), number, self.graph.unit
            )


class Graph:
    """A chart of named series sharing one unit, e.g. ``Graph("Loss", "")``."""

    def __init__(self, name: str, unit: str = "") -> None:
        resolve()
        self.name = name_arg(name, "Graph: the name", ArgumentError)
        self.unit = name_arg(unit, f"Graph {name!r}: the unit", ArgumentError)

    def addSeries(self, name: str) -> Series:
        return Series(self, name)

    add_series = addSeries


class _Heatmap:
    """Samples of many values counted into buckets: below edges[0], between each pair of
    edges (lower edge inclusive), and from edges[-1] up: ``len(edges) + 1`` buckets."""

    _type: Type = Type("double", np.dtype("<f8"), 8)

    def __init__(self, name: str, edges: Sequence[float], units: str = "") -> None:
        resolve()
        name_arg(name, "heatmap: the name", ArgumentError)
        name_arg(units, f"heatmap {name!r}: the units", ArgumentError)
        what = f"heatmap {name!r}: edges"
        items = sequence_arg(edges, what, MetricError)
        if any(isinstance(e, bool | str | bytes) for e in items):
            raise MetricError(f"{what} must be numbers, got {items[:5]!r}")
        try:
            edges_array = np.asarray(items, dtype=np.float64)
        except (TypeError, ValueError):
            raise MetricError(f"{what} must be numbers, got {items[:5]!r}") from None
        if np.isnan(edges_array).any():
            raise MetricError(f"{what} must be numbers, not NaN: {items[:5]!r}")
        if edges_array.ndim != 1 or len(edges_array) == 0 or np.any(np.diff(edges_array) <= 0):
            raise MetricError(f"heatmap {name!r}: edges must be a non-empty increasing list")
        self.name = name
        self.edges = edges_array
        self.units = units
        self._declared_in: PvtiWriter | None = None

    def bucket_counts(self, values: Sequence[float] | np.ndarray) -> np.ndarray:
        """How many of ``values`` fall in each bucket (numbers of the heatmap's type: 2.5 is
        refused by an int64 heatmap, not counted as 2)."""
        what = f"heatmap {self.name!r}: the values"
        v = host_values(values, self._type, what, MetricError).ravel()
        buckets = np.searchsorted(self.edges, v, side="right")
        return np.bincount(buckets, minlength=len(self.edges) + 1)

    def add(self, values: Sequence[float] | np.ndarray) -> None:
        counts = self.bucket_counts(values)  # checked whether or not a trace is recording
        writer = session.writer
        if not session.recording or writer is None:
            return
        if self._declared_in is not writer:
            writer.declare_heatmap(self.name, self.edges, self.units)
            self._declared_in = writer
        writer.add_heatmap_sample(self.name, monotonic_ns(), counts)


class HeatmapDouble(_Heatmap):
    """A heatmap of floating-point values (libpvti's HeatmapDouble)."""


class HeatmapInt64(_Heatmap):
    """A heatmap of integer values (libpvti's HeatmapInt64)."""

    _type = LONGLONG

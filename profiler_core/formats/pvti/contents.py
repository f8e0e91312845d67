"""What a .pvti file holds, as plain records and numpy columns (no model logic)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class PvtiMeta:
    """The ``meta`` table: who wrote the file, and the clock origins taken together."""

    format_major: int
    format_minor: int
    producer: str
    pid: int
    hostname: str
    process_name: str
    origin_wall_ns: int  # time.time_ns() at the writer's start
    origin_monotonic_ns: int  # time.monotonic_ns() at the same moment
    #: "writing" until the writer closes the file ("closed"), "failed: ..." after a write
    #: error; "" in files of format 1.0, which do not say.
    writer_state: str = ""


@dataclass(frozen=True)
class ProcessRow:
    pid: int
    hostname: str
    name: str


@dataclass(frozen=True)
class ThreadRow:
    process: int  # index into processes
    os_tid: int | None  # None for a pseudo track
    name: str
    kind: str  # "thread" or "track"


@dataclass(frozen=True)
class SeriesDef:
    graph: str
    unit: str
    name: str


@dataclass(frozen=True)
class HeatmapDef:
    name: str
    unit: str
    edges: np.ndarray  # float64; counts have len(edges) + 1 buckets


@dataclass
class PvtiDelta:
    """What was committed since the previous read (all of it on the first read).

    Event times are raw ``monotonic_ns`` values of the writing process. ``open_spans``
    is not incremental: it is the full set of spans open as of the latest commit.
    """

    events: dict[str, np.ndarray]
    args: dict[int, str]  # index among all committed events of the file -> JSON text
    open_spans: dict[str, np.ndarray]
    series_id: np.ndarray  # per new sample: index into series definitions
    # per new heatmap sample: index into heatmap definitions, time, and bucket counts
    series_t_ns: np.ndarray
    series_value: np.ndarray
    heatmap_id: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    heatmap_t_ns: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    heatmap_counts: list[np.ndarray] = field(default_factory=list)

    @property
    def n_events(self) -> int:
        return len(self.events["start_ns"])


@dataclass
class PvtiContents:
    """A whole .pvti file: its tables and event columns (open spans appended last)."""

    path: Path
    meta: PvtiMeta
    processes: list[ProcessRow]
    threads: list[ThreadRow]
    channels: list[str]
    labels: list[str]
    events: dict[str, np.ndarray]
    args: dict[int, str]
    series: list[tuple[SeriesDef, np.ndarray, np.ndarray]]  # (def, t_ns, values)
    heatmaps: list[tuple[HeatmapDef, np.ndarray, np.ndarray]]  # (def, t_ns, counts 2-D)
    incomplete: str = ""  # a truncated file: what is shown and what was lost, else ""

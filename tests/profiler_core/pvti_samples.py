"""Small real .pvti files written with known timestamps, for the trace tests."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from profiler_core.formats.pvti import PvtiWriter

#: What ``small_pvti`` writes, in ns after the writer's monotonic origin. The thread's
#: events are listed in the order they are recorded (a span when it ends).
MAIN_TID = 101
MAIN_EVENTS = [
    # (label, start, end, depth, kind) with kind "span" / "instant"
    ("step", 2000, 4000, 1, "span"),
    ("tick", 3000, 3000, 2, "instant"),
    ("step", 5000, 8000, 1, "span"),
    ("epoch", 1000, 9000, 0, "span"),
]
IPU_STEPS = [("Compute", 1500, 2500), ("Exchange", 2500, 3000), ("Sync", 3000, 3100)]
LOSS = [(1000, 0.5), (5000, 0.25)]
HEAT_EDGES = [0.0, 1.0]
HEAT_COUNTS = [1, 2, 3]


def write_small_trace(directory: Path) -> PvtiWriter:
    """A closed writer whose file holds the events above."""
    writer = PvtiWriter(directory, process_name="small", background=False)
    o = writer.origin_monotonic_ns
    writer.name_thread(MAIN_TID, "main")
    for label, start, end, depth, kind in MAIN_EVENTS:
        if kind == "span":
            args = {"n": 2} if start == 5000 else None
            writer.add_span(MAIN_TID, "Training", label, o + start, o + end, depth, args=args)
        else:
            writer.add_instant(MAIN_TID, "Training", label, o + start, depth)
    names = [s[0] for s in IPU_STEPS]
    writer.add_spans(
        "IPU 0",
        "IPU",
        np.array([o + s[1] for s in IPU_STEPS]),
        np.array([o + s[2] for s in IPU_STEPS]),
        names,
        np.arange(len(names)),
    )
    for t, value in LOSS:
        writer.add_sample("Loss", "train", o + t, value)
    writer.declare_heatmap("w", HEAT_EDGES)
    writer.add_heatmap_sample("w", o + 7000, np.array(HEAT_COUNTS))
    writer.close()
    return writer


def sql(path: Path, statement: str, params: tuple = ()) -> list[tuple]:
    """Run one statement on ``path`` read-write (to damage files on purpose) and close."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(statement, params).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def as_format_1_1(path: Path) -> Path:
    """``path`` as a writer of format 1.1 left it: event batches without a checksum column."""
    sql(path, "ALTER TABLE event_batches DROP COLUMN checksum")
    sql(path, "UPDATE meta SET value = '1' WHERE key = 'format_minor'")
    return path

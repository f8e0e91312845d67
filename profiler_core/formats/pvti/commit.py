"""Write one commit of a PvtiWriter: dictionary rows, event batches, samples, open spans.

Everything goes in one SQLite transaction, so a reader (or a crash) sees a commit whole
or not at all.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field

import numpy as np

from profiler_core.formats.pvti.batch import pack_batch
from profiler_core.formats.pvti.schema import EVENT_COLUMNS

_INSERT_BATCH = (
    f"INSERT INTO event_batches(n, {', '.join(EVENT_COLUMNS)}, checksum) "
    f"VALUES (?{', ?' * len(EVENT_COLUMNS)}, ?)"
)
_INSERT_DICTIONARY = {
    "threads": "INSERT INTO threads VALUES (?, ?, ?, ?, ?)",
    "channels": "INSERT INTO channels VALUES (?, ?)",
    "labels": "INSERT INTO labels VALUES (?, ?)",
    "series": "INSERT INTO series VALUES (?, ?, ?, ?)",
    "heatmaps": "INSERT INTO heatmaps VALUES (?, ?, ?, ?, ?)",
}


@dataclass
class PendingCommit:
    """The rows of one commit, built before its transaction starts."""

    open_spans: list[tuple]  # as the writer's open-spans source gave them
    batches: list[tuple[dict[str, np.ndarray], dict[int, str]]] = field(default_factory=list)
    open_rows: list[tuple] = field(default_factory=list)
    series_rows: list[tuple] = field(default_factory=list)
    heat_rows: list[tuple] = field(default_factory=list)
    dictionaries: dict[str, list[tuple]] = field(default_factory=dict)  # table -> new rows


def write_commit(conn: sqlite3.Connection, pending: PendingCommit) -> None:
    """Write ``pending`` as one transaction; the open_spans table is replaced, not grown."""
    conn.execute("BEGIN")
    for table, rows in pending.dictionaries.items():
        conn.executemany(_INSERT_DICTIONARY[table], rows)
    for cols, args in pending.batches:
        cursor = conn.execute(_INSERT_BATCH, pack_batch(cols))
        conn.executemany(
            "INSERT INTO event_args VALUES (?, ?, ?)",
            [(cursor.lastrowid, i, text) for i, text in args.items()],
        )
    conn.executemany("INSERT INTO series_samples VALUES (?, ?, ?)", pending.series_rows)
    conn.executemany("INSERT INTO heatmap_samples VALUES (?, ?, ?, ?)", pending.heat_rows)
    conn.execute("DELETE FROM open_spans")
    conn.executemany("INSERT INTO open_spans VALUES (?, ?, ?, ?, ?, ?)", pending.open_rows)
    conn.execute("COMMIT")

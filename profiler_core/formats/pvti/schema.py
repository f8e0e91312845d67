"""The .pvti schema: format version, SQL tables, event column dtypes and file naming.

A .pvti file is SQLite. Events are stored in batch rows, one per commit, each row holding
every event column as a packed little-endian BLOB, so a reader turns a whole trace into
numpy columns with one ``np.frombuffer`` per column per batch instead of one Python
object per event.
"""

from __future__ import annotations

import enum
import os
import sqlite3
import time
from pathlib import Path

import numpy as np

FORMAT_MAJOR = 1
# 1.1: meta 'writer_state' says whether the writer closed the file; a series value may be
# NULL, which holds NaN; 1.2: each event batch row has an CRC-32 of its count and
# columns (``checksum``), and a row that fails it is skipped as damaged
FORMAT_MINOR = 2
PRODUCER = "popvision-py"

#: Events per batch row at most; bigger bulk writes are split so no BLOB grows unbounded.
MAX_BATCH_EVENTS = 1 << 20


#: Times (origins, event times, and both combined) stay below this in magnitude, so
#: shifting them onto another file's clock never leaves int64.
MAX_TIME_NS = 1 << 62


class EventKind(enum.IntEnum):
    """What an event row is. Values are stored in the file: never renumber."""

    SPAN = 0  # a begin/end span with both timestamps known
    INSTANT = 1  # a point in time (libpvti's Tracepoint.event)
    OPEN = 2  # a span begun but not ended at the last commit (only ever from open_spans)


#: The event batch columns in the order they appear in ``event_batches``, with the dtype
#: the writer stores. The reader accepts any of READABLE_DTYPES for each and converts.
EVENT_COLUMNS: dict[str, str] = {
    "start_ns": "<i8",
    "end_ns": "<i8",
    "thread": "<i4",
    "channel": "<i4",
    "label": "<i4",
    "kind": "|u1",
    "depth": "<i4",
}
READABLE_DTYPES = frozenset({"<i8", "<i4", "<i2", "|i1", "<u4", "<u2", "|u1"})
HEATMAP_DTYPES = frozenset({"<u4", "<u8", "<i4", "<i8"})

META_KEYS = (
    "format_major",
    "format_minor",
    "producer",
    "pid",
    "hostname",
    "process_name",
    "origin_wall_ns",
    "origin_monotonic_ns",
)

REQUIRED_TABLES = (
    "meta",
    "processes",
    "threads",
    "channels",
    "labels",
    "event_columns",
    "event_batches",
    "event_args",
    "open_spans",
    "series",
    "series_samples",
    "heatmaps",
    "heatmap_samples",
)

_BLOBS = ", ".join(f"{name} BLOB NOT NULL" for name in EVENT_COLUMNS)

SCHEMA_SQL = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE processes(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL,
    hostname TEXT NOT NULL, name TEXT NOT NULL);
CREATE TABLE threads(id INTEGER PRIMARY KEY, process INTEGER NOT NULL, os_tid INTEGER,
    name TEXT NOT NULL, kind TEXT NOT NULL);
CREATE TABLE channels(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE labels(id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
CREATE TABLE event_columns(name TEXT PRIMARY KEY, dtype TEXT NOT NULL);
CREATE TABLE event_batches(id INTEGER PRIMARY KEY, n INTEGER NOT NULL, {_BLOBS}, checksum INTEGER);
CREATE TABLE event_args(batch INTEGER NOT NULL, item INTEGER NOT NULL, json TEXT NOT NULL,
    PRIMARY KEY(batch, item));
CREATE TABLE open_spans(thread INTEGER NOT NULL, channel INTEGER NOT NULL,
    label INTEGER NOT NULL, start_ns INTEGER NOT NULL, depth INTEGER NOT NULL,
    as_of_ns INTEGER NOT NULL);
CREATE TABLE series(id INTEGER PRIMARY KEY, graph TEXT NOT NULL, unit TEXT NOT NULL,
    name TEXT NOT NULL, UNIQUE(graph, name));
CREATE TABLE series_samples(series INTEGER NOT NULL, t_ns INTEGER NOT NULL,
    value REAL);
CREATE TABLE heatmaps(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
    unit TEXT NOT NULL, edges BLOB NOT NULL, edges_dtype TEXT NOT NULL);
CREATE TABLE heatmap_samples(heatmap INTEGER NOT NULL, t_ns INTEGER NOT NULL,
    counts BLOB NOT NULL, dtype TEXT NOT NULL);
"""


#: meta ``writer_state`` values (format 1.1); a failed writer stores "failed: <why>".
WRITER_WRITING, WRITER_CLOSED, WRITER_FAILED = "writing", "closed", "failed"


def writer_state_note(state: str) -> str:
    """What a file's ``writer_state`` says about its completeness ("" when complete or
    not recorded)."""
    if state == WRITER_WRITING:
        return (
            "its writer never closed it (the program is still running, or was killed or "
            "stopped abruptly): what happened after its last commit is missing"
        )
    if state.startswith(WRITER_FAILED):
        return f"its writer {state}: later events are missing"
    return ""


def event_dtype(name: str) -> np.dtype:
    """The numpy dtype the writer stores for event column ``name``."""
    return np.dtype(EVENT_COLUMNS[name])


def reserve_trace_file(directory: str | Path, pid: int | None = None) -> Path:
    """Create and return a new empty ``<YYYY_MM_DD>_<HHMMSS>_<pid>.pvti`` in ``directory``.

    The file is created exclusively, so two writers of one process in one second get
    ``_1``, ``_2``... suffixes rather than sharing a file.
    """
    pid = os.getpid() if pid is None else pid
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = f"{time.strftime('%Y_%m_%d_%H%M%S')}_{pid}"
    n = 0
    while True:
        path = directory / (f"{stem}.pvti" if n == 0 else f"{stem}_{n}.pvti")
        try:
            with open(path, "x"):
                return path
        except FileExistsError:
            n += 1


def create_tables(conn: sqlite3.Connection, meta: dict[str, object]) -> None:
    """Create every table and fill ``meta``, ``processes`` and ``event_columns``, in one
    transaction, so a reader sees either no tables or all of them."""
    conn.execute("BEGIN")
    for statement in SCHEMA_SQL.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()])
    conn.execute(
        "INSERT INTO processes VALUES (0, ?, ?, ?)",
        (meta["pid"], meta["hostname"], meta["process_name"]),
    )
    conn.executemany("INSERT INTO event_columns VALUES (?, ?)", EVENT_COLUMNS.items())
    conn.execute("COMMIT")

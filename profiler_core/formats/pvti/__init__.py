"""The .pvti host-trace format: SQLite (WAL while written) with batched, packed event columns.

See ``schema.py`` for the tables and ``writer.py``/``reader.py`` for how they are used.
"""

from profiler_core.formats.pvti.contents import (
    HeatmapDef,
    ProcessRow,
    PvtiContents,
    PvtiDelta,
    PvtiMeta,
    SeriesDef,
    ThreadRow,
)
from profiler_core.formats.pvti.reader import PvtiReader
from profiler_core.formats.pvti.schema import FORMAT_MAJOR, FORMAT_MINOR, EventKind
from profiler_core.formats.pvti.sqlite_file import is_sqlite
from profiler_core.formats.pvti.whole_file import read_pvti
from profiler_core.formats.pvti.writer import PvtiWriter

__all__ = [
    "FORMAT_MAJOR",
    "FORMAT_MINOR",
    "EventKind",
    "HeatmapDef",
    "ProcessRow",
    "PvtiContents",
    "PvtiDelta",
    "PvtiMeta",
    "PvtiReader",
    "PvtiWriter",
    "SeriesDef",
    "ThreadRow",
    "is_sqlite",
    "read_pvti",
]

"""A whole ``.pvti`` file at once: every committed event, series and heatmap as one
``PvtiContents``, and a sentence saying what makes the file incomplete (salvaged, damaged
batches left out, a writer that failed or never closed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from profiler_core.formats.pvti.contents import PvtiContents
from profiler_core.formats.pvti.reader import PvtiReader
from profiler_core.formats.pvti.schema import writer_state_note


def incomplete_note(reader: PvtiReader, n_events: int) -> str:
    """What makes the file incomplete, in a sentence ("" for a whole, closed file): a
    salvaged read of a truncated file (what it shows and lost), and a writer that failed or
    never closed the file (killed mid-run)."""
    notes = [writer_state_note(reader.meta.writer_state if reader.meta else "")]
    if reader.truncated:
        lost = "; lost: " + ", ".join(reader.lost) if reader.lost else ""
        notes.insert(
            0,
            f"the file is {reader.truncated}: shows the {n_events:,} committed event(s) whose "
            f"pages are present{lost}",
        )
    elif reader.lost:  # batches that fail their checksum
        notes.insert(
            0, f"shows {n_events:,} event(s); left out as damaged: {', '.join(reader.lost)}"
        )
    return "; ".join(note for note in notes if note)


def read_pvti(path: str | Path) -> PvtiContents:
    """The whole of the .pvti file ``path``: tables, event columns, series, heatmaps."""
    with PvtiReader(path) as reader:
        delta = reader.read_new(open_spans_in_events=True)
        assert reader.meta is not None
        events = delta.events
        series = []
        order = np.argsort(delta.series_id, kind="stable")
        bounds = np.searchsorted(delta.series_id[order], np.arange(len(reader.series) + 1))
        for i, sdef in enumerate(reader.series):
            pick = order[bounds[i] : bounds[i + 1]]
            series.append((sdef, delta.series_t_ns[pick], delta.series_value[pick]))
        heatmaps = []
        for i, hdef in enumerate(reader.heatmaps):
            pick = np.flatnonzero(delta.heatmap_id == i)
            grid = np.zeros((len(pick), len(hdef.edges) + 1), np.int64)
            for row, j in enumerate(pick):
                grid[row] = delta.heatmap_counts[j]
            heatmaps.append((hdef, delta.heatmap_t_ns[pick], grid))
        return PvtiContents(
            reader.path,
            reader.meta,
            reader.processes,
            reader.threads,
            reader.channels,
            reader.labels,
            events,
            delta.args,
            series,
            heatmaps,
            incomplete_note(reader, len(events["start_ns"])),
        )

"""The ``blocks`` section of ``profile.pop`` (format 1.5): lightweight profiling's timed
executions, written, read, checked and checksummed here, apart from the other sections.

The section is self-contained: its names are in its own string table, so it reads (and a
damaged one is refused) without the graph or the programs. Its checksum covers the string
table, the tile and every column in ``BLOCK_COLUMNS``' order; a report made with
lightweight profiling off has no section and the checksum of the text "off".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.checksum import Digest
from profiler_core.formats.profile_pop import columns as cols
from profiler_core.formats.profile_pop.arrays import coerce_column, write_array
from profiler_core.model.profile import BlocksData
from profiler_core.model.strings import Strings

BLOCKS_SINCE_MINOR = 5
"""Files of format 1.5 and later may carry blocks (and always a checksum for them)."""

I32, I64, U8 = cols.I32, cols.I64, cols.U8
C = cols.Column
BLOCK_COLUMNS: tuple[cols.Column, ...] = (
    C("block_name", I32, "blocks", ref="strings"),
    C("block_kind", U8, "blocks"),
    C("block_node", I32, "blocks"),  # a node of the programs section: the analyses check it
    C("run_program", I32, "runs"),
    C("run_name", I32, "runs", ref="strings"),
    C("run_start", I64, "runs"),
    C("run_cycles", I64, "runs"),
    C("exec_block", I32, "executions", ref="blocks"),
    C("exec_run", I32, "executions", ref="runs"),
    C("exec_ipu", I32, "executions"),
    C("exec_tile", I32, "executions"),
    C("exec_depth", I32, "executions"),
    C("exec_start", I64, "executions"),
    C("exec_end", I64, "executions"),
)

_NOT_NEGATIVE = ("run_start", "run_cycles", "exec_ipu", "exec_tile", "exec_depth", "exec_start")


def check_blocks(columns: Mapping[str, np.ndarray], num_strings: int, tile: int) -> None:
    """Raise ``ReportError`` (without a path) unless the section agrees with itself: equal
    table lengths, references in range, no negative counter, no execution ending before it
    starts. References into other sections (IPUs, program nodes) are the analyses'."""
    cols.check_tables(columns, BLOCK_COLUMNS, {"strings": num_strings})
    if tile < 0:
        raise ReportError(None, f"tile {tile} is negative")
    for name in _NOT_NEGATIVE:
        values = columns[name]
        if values.size and int(values.min()) < 0:
            row = int(np.argmax(values < 0))
            raise ReportError(
                None, f"column '{name}' is negative ({int(values[row])}) at row {row}"
            )
    starts, ends = columns["exec_start"], columns["exec_end"]
    backwards = ends < starts
    if backwards.any():
        row = int(np.argmax(backwards))
        raise ReportError(
            None,
            f"execution {row} ends at cycle {int(ends[row])}, before it starts "
            f"({int(starts[row])})",
        )


def blocks_checksum(blocks: BlocksData | None) -> int:
    """CRC-32 of the string table, the tile and every column, in ``BLOCK_COLUMNS``' order."""
    digest = Digest()
    if blocks is None:
        digest.text("off")
        return digest.value
    digest.raw(blocks.strings.blob)
    offsets = coerce_column(blocks.strings.offsets, "strings.offsets", I64, 1)
    digest.array("offsets", offsets)
    digest.integer(blocks.tile)
    for column in BLOCK_COLUMNS:
        value = coerce_column(getattr(blocks, column.name), column.name, column.dtype, 1)
        digest.array(column.name, value)
    return digest.value


def build_blocks(message: Any, blocks: BlocksData | None) -> None:
    """Fill ``Profile.blocks`` (nothing when lightweight profiling was off)."""
    if blocks is None:
        return
    out = message.init("blocks")
    blob = blocks.strings.blob
    blob = blob if isinstance(blob, bytes) else bytes(blob)
    offsets = coerce_column(blocks.strings.offsets, "strings.offsets", I64, 1)
    cols.check_offsets(offsets, "strings", len(blob))
    strings_out = out.init("strings")
    strings_out.blob = blob
    write_array(strings_out.init("offsets"), offsets)
    columns = {
        c.name: coerce_column(getattr(blocks, c.name), c.name, c.dtype, 1) for c in BLOCK_COLUMNS
    }
    check_blocks(columns, len(offsets) - 1, int(blocks.tile))
    out.tile = int(blocks.tile)
    for column in BLOCK_COLUMNS:
        try:
            write_array(out.init(column.field), columns[column.name])
        except ValueError as error:
            raise ValueError(f"column '{column.name}': {error}") from error


ReadColumns = Callable[[Any, tuple[cols.Column, ...]], dict[str, np.ndarray]]
ReadStrings = Callable[[Any], Strings]


def decode_blocks(
    root: Any, read_columns: ReadColumns, read_strings: ReadStrings
) -> BlocksData | None:
    """The section as ``BlocksData`` (None when the file has none), its arrays read by
    ``read_columns(section, spec)`` and its names by ``read_strings(strings)`` (views of the
    file's bytes: the reader's)."""
    if not root._has("blocks"):
        return None
    section = root.blocks
    strings = read_strings(section.strings)
    columns = read_columns(section, BLOCK_COLUMNS)
    tile = int(section.tile)
    check_blocks(columns, len(strings), tile)
    return BlocksData(strings=strings, tile=tile, **columns)


def array_bytes(blocks: BlocksData | None) -> tuple[int, int]:
    """(bytes of its arrays as written, number of arrays): the writer's size estimate."""
    if blocks is None:
        return 0, 0
    sizes = [np.size(getattr(blocks, c.name)) * c.dtype.itemsize for c in BLOCK_COLUMNS]
    return sum(sizes) + len(blocks.strings.blob) + 8 * len(blocks.strings.offsets), len(sizes) + 1

"""Colours of the memory categories, shared by the chart, its legend and exports.

Variables in blues and greens (what the user allocated), code in oranges and reds, exchange in
purples, overheads in browns and greys; gaps are pale greys so they read as empty space.
"""

from __future__ import annotations

import numpy as np

from profiler_core.model.kinds import MemoryCategory

# Picked tiles on the Tile Map, the heat map and the Operations cycles chart, and the tile
# limit on the heat scale: magenta, a colour no heat scale or category uses.
SELECTION_OUTLINE = (255, 0, 255, 255)

CATEGORY_COLORS: dict[MemoryCategory, str] = {
    MemoryCategory.ALWAYS_LIVE_VARIABLES: "#1f77b4",
    MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES: "#6baed6",
    MemoryCategory.CONSTANTS: "#2ca02c",
    MemoryCategory.VERTEX_CODE: "#ff7f0e",
    MemoryCategory.VERTEX_STATE: "#d62728",
    MemoryCategory.VERTEX_DESCRIPTORS: "#e377c2",
    MemoryCategory.CONTROL_CODE: "#bcbd22",
    MemoryCategory.INTERNAL_EXCHANGE_CODE: "#9467bd",
    MemoryCategory.HOST_EXCHANGE_CODE: "#c5b0d5",
    MemoryCategory.GLOBAL_EXCHANGE_CODE: "#7b4173",
    MemoryCategory.EXCHANGE_BUFFERS: "#17becf",
    MemoryCategory.STACK: "#8c564b",
    MemoryCategory.INSTRUMENTATION: "#e7ba52",
    MemoryCategory.ALIGNMENT_GAPS: "#a0a0a0",
    MemoryCategory.REGION_GAPS: "#cfcfcf",
}

CATEGORY_HELP: dict[MemoryCategory, str] = {
    MemoryCategory.ALWAYS_LIVE_VARIABLES: "Variables live for the whole program (weights, "
    "inputs mapped once).",
    MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES: "Variables live only between their first "
    "write and last read; they share memory by liveness.",
    MemoryCategory.CONSTANTS: "Constant tensors stored on the tile.",
    MemoryCategory.VERTEX_CODE: "Code of the codelets run on the tile, once per vertex type.",
    MemoryCategory.VERTEX_STATE: "The fields of each vertex instance.",
    MemoryCategory.VERTEX_DESCRIPTORS: "Vertex descriptors and the edge pointers to their "
    "inputs and outputs.",
    MemoryCategory.CONTROL_CODE: "Code that sequences the program on the tile.",
    MemoryCategory.INTERNAL_EXCHANGE_CODE: "Code for exchanges between tiles of one IPU.",
    MemoryCategory.HOST_EXCHANGE_CODE: "Code for stream copies to and from the host.",
    MemoryCategory.GLOBAL_EXCHANGE_CODE: "Code for exchanges between IPUs.",
    MemoryCategory.EXCHANGE_BUFFERS: "Buffers receiving exchanged data.",
    MemoryCategory.STACK: "Worker and supervisor stacks.",
    MemoryCategory.INSTRUMENTATION: "Cycle counters written when debug.instrument is on.",
    MemoryCategory.ALIGNMENT_GAPS: "Bytes left unused to align data.",
    MemoryCategory.REGION_GAPS: "Bytes left unused at memory region boundaries.",
}


def rgba(hex_color: str, alpha: int = 255) -> tuple[int, int, int, int]:
    value = hex_color.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16), alpha


def color_table(categories: list[MemoryCategory]) -> np.ndarray:
    """(len(categories), 4) uint8 RGBA, in the order given."""
    return np.array([rgba(CATEGORY_COLORS[c]) for c in categories], dtype=np.uint8).reshape(-1, 4)

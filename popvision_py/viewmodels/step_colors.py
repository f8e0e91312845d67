"""Colours of program step kinds, shared by the Program Tree, the Execution Trace and the
liveness chart's step markers, so a kind reads the same everywhere.

Kinds are grouped as Graph Analyser groups them in its execution trace: compute, internal
exchange, global (IPU-to-IPU) exchange, sync, stream copies to the host, and control.
"""

from __future__ import annotations

import enum

import numpy as np

from popvision_py.viewmodels.colors import rgba
from profiler_core.model.kinds import StepKind


class StepClass(enum.Enum):
    """What a program step spends its cycles on, with the label legends show."""

    COMPUTE = "Compute"
    INTERNAL_EXCHANGE = "Internal exchange"
    GLOBAL_EXCHANGE = "Global exchange"
    SYNC = "Sync"
    STREAM_COPY = "Stream copy (host)"
    CONTROL = "Control"


STEP_CLASS_OF_KIND: dict[StepKind, StepClass] = {
    StepKind.ON_TILE_EXECUTE: StepClass.COMPUTE,
    StepKind.DO_EXCHANGE: StepClass.INTERNAL_EXCHANGE,
    StepKind.GLOBAL_EXCHANGE: StepClass.GLOBAL_EXCHANGE,
    StepKind.STREAM_COPY_BEGIN: StepClass.STREAM_COPY,
    StepKind.STREAM_COPY_MID: StepClass.STREAM_COPY,
    StepKind.STREAM_COPY_END: StepClass.STREAM_COPY,
    StepKind.SYNC: StepClass.SYNC,
    StepKind.REPEAT: StepClass.CONTROL,
    StepKind.REPEAT_WHILE: StepClass.CONTROL,
    StepKind.IF: StepClass.CONTROL,
    StepKind.CALL: StepClass.CONTROL,
    StepKind.PRINT_TENSOR: StepClass.CONTROL,
    StepKind.WRITE_UNDEF: StepClass.CONTROL,
}

STEP_CLASS_COLORS: dict[StepClass, str] = {
    StepClass.COMPUTE: "#3a7dd8",
    StepClass.INTERNAL_EXCHANGE: "#e8871e",
    StepClass.GLOBAL_EXCHANGE: "#b04fc0",
    StepClass.SYNC: "#d8433a",
    StepClass.STREAM_COPY: "#2aa876",
    StepClass.CONTROL: "#8a8f98",
}

MERGED_COLOR = "#9aa0a8"
"""Spans that merge steps of different kinds (sub-pixel runs) are drawn in this grey."""


def step_kind_color(kind: int) -> str:
    return STEP_CLASS_COLORS[STEP_CLASS_OF_KIND[StepKind(int(kind))]]


def step_kind_color_table() -> np.ndarray:
    """(len(StepKind), 4) uint8 RGBA, indexed by ``StepKind`` value."""
    return np.array([rgba(step_kind_color(kind)) for kind in StepKind], dtype=np.uint8)

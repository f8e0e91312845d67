"""Closed sets of the report model: memory categories, program step kinds, program kinds.

Their integer values are stored in files; append new members, never renumber.
"""

from __future__ import annotations

import enum


class MemoryCategory(enum.IntEnum):
    """What a byte of tile memory holds, in the stacking order of the memory chart."""

    ALWAYS_LIVE_VARIABLES = 0
    NOT_ALWAYS_LIVE_VARIABLES = 1
    CONSTANTS = 2
    VERTEX_CODE = 3
    VERTEX_STATE = 4
    VERTEX_DESCRIPTORS = 5
    CONTROL_CODE = 6
    INTERNAL_EXCHANGE_CODE = 7
    HOST_EXCHANGE_CODE = 8
    GLOBAL_EXCHANGE_CODE = 9
    EXCHANGE_BUFFERS = 10
    STACK = 11
    INSTRUMENTATION = 12
    ALIGNMENT_GAPS = 13
    REGION_GAPS = 14

    @property
    def label(self) -> str:
        return _CATEGORY_LABELS[self]

    @property
    def is_gap(self) -> bool:
        return self in (MemoryCategory.ALIGNMENT_GAPS, MemoryCategory.REGION_GAPS)


_CATEGORY_LABELS = {
    MemoryCategory.ALWAYS_LIVE_VARIABLES: "Always-live variables",
    MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES: "Not-always-live variables",
    MemoryCategory.CONSTANTS: "Constants",
    MemoryCategory.VERTEX_CODE: "Vertex code",
    MemoryCategory.VERTEX_STATE: "Vertex instance state",
    MemoryCategory.VERTEX_DESCRIPTORS: "Vertex descriptors and edge pointers",
    MemoryCategory.CONTROL_CODE: "Control code",
    MemoryCategory.INTERNAL_EXCHANGE_CODE: "Internal exchange code",
    MemoryCategory.HOST_EXCHANGE_CODE: "Host exchange code",
    MemoryCategory.GLOBAL_EXCHANGE_CODE: "Global exchange code",
    MemoryCategory.EXCHANGE_BUFFERS: "Exchange buffers",
    MemoryCategory.STACK: "Stack",
    MemoryCategory.INSTRUMENTATION: "Instrumentation results",
    MemoryCategory.ALIGNMENT_GAPS: "Gaps (alignment)",
    MemoryCategory.REGION_GAPS: "Gaps (memory region boundaries)",
}


class StepKind(enum.IntEnum):
    """Kinds of program steps, with Poplar's names (``.poplar_name``)."""

    ON_TILE_EXECUTE = 0
    DO_EXCHANGE = 1
    GLOBAL_EXCHANGE = 2
    STREAM_COPY_BEGIN = 3
    STREAM_COPY_MID = 4
    STREAM_COPY_END = 5
    SYNC = 6
    REPEAT = 7
    REPEAT_WHILE = 8
    IF = 9
    CALL = 10
    PRINT_TENSOR = 11
    WRITE_UNDEF = 12

    @property
    def poplar_name(self) -> str:
        return _STEP_NAMES[self]

    @classmethod
    def from_poplar_name(cls, name: str) -> StepKind:
        return _STEP_BY_NAME[name]

    @property
    def is_control(self) -> bool:
        return self in (StepKind.REPEAT, StepKind.REPEAT_WHILE, StepKind.IF, StepKind.CALL)


_STEP_NAMES = {
    StepKind.ON_TILE_EXECUTE: "OnTileExecute",
    StepKind.DO_EXCHANGE: "DoExchange",
    StepKind.GLOBAL_EXCHANGE: "GlobalExchange",
    StepKind.STREAM_COPY_BEGIN: "StreamCopyBegin",
    StepKind.STREAM_COPY_MID: "StreamCopyMid",
    StepKind.STREAM_COPY_END: "StreamCopyEnd",
    StepKind.SYNC: "Sync",
    StepKind.REPEAT: "Repeat",
    StepKind.REPEAT_WHILE: "RepeatWhile",
    StepKind.IF: "If",
    StepKind.CALL: "Call",
    StepKind.PRINT_TENSOR: "PrintTensor",
    StepKind.WRITE_UNDEF: "WriteUndef",
}
_STEP_BY_NAME = {v: k for k, v in _STEP_NAMES.items()}


class ProgramKind(enum.IntEnum):
    """Nodes of the program tree (what the user wrote), above the program steps."""

    SEQUENCE = 0
    EXECUTE = 1
    COPY = 2
    STREAM_COPY = 3
    REPEAT = 4
    REPEAT_WHILE = 5
    IF = 6
    CALL = 7
    PRINT_TENSOR = 8
    SYNC = 9
    WRITE_UNDEF = 10
    FUNCTION = 11


class BlockKind(enum.IntEnum):
    """What a lightweight-profiling block times (profile.pop 1.5), with the names Poplar's
    libpva gives them (``isCommon``, ``isStreamCopy``)."""

    BLOCK = 0  # a Block program whose name matches profiler.blocks.filter
    PROGRAM = 1  # an implicit Block around a program matched by profiler.programs.filter
    STREAM_COPY_BEGIN = 2  # every StreamCopy is timed, in its three phases
    STREAM_COPY_MID = 3
    STREAM_COPY_END = 4

    @property
    def label(self) -> str:
        return _BLOCK_LABELS[self]

    @property
    def is_stream_copy(self) -> bool:
        return self >= BlockKind.STREAM_COPY_BEGIN


_BLOCK_LABELS = {
    BlockKind.BLOCK: "Block",
    BlockKind.PROGRAM: "Program",
    BlockKind.STREAM_COPY_BEGIN: "StreamCopyBegin",
    BlockKind.STREAM_COPY_MID: "StreamCopyMid",
    BlockKind.STREAM_COPY_END: "StreamCopyEnd",
}


ELEMENT_TYPES: tuple[str, ...] = (
    "float",
    "half",
    "int",
    "unsigned int",
    "short",
    "unsigned short",
    "char",
    "unsigned char",
    "bool",
    "long long",
    "unsigned long long",
)
"""Element type names; a variable stores its type as an index into this tuple."""

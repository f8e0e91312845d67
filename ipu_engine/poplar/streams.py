"""Host streams: FIFOs between the host and the IPU, named and typed like Poplar's."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ipu_engine.common.types import Type


class StreamDirection(enum.Enum):
    HOST_TO_DEVICE = "host-to-device"
    DEVICE_TO_HOST = "device-to-host"


@dataclass(frozen=True, eq=False)
class DataStream:
    """A FIFO of ``num_elements`` elements per copy, connected to host data by the engine."""

    name: str
    type: Type
    num_elements: int
    direction: StreamDirection
    debug_id: int = -1

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.num_elements,)

    def __repr__(self) -> str:
        return (
            f"DataStream({self.name!r}, {self.type!r}, {self.num_elements}, {self.direction.value})"
        )

"""IPU targets and the IPU Model device: how many tiles, how much memory, how fast.

Numbers are Graphcore's published ones: Mk1 (GC2) 1216 tiles x 256 KiB; Mk2 (GC200)
1472 tiles x 624 KiB = 638,976 bytes at 1.33 GHz; Bow 1472 tiles at 1.85 GHz.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.errors import EngineError, TileMappingError


@dataclass(frozen=True)
class Target:
    """What a graph is compiled for: IPU version, IPU count, tiles and memory per tile."""

    version: str
    num_ipus: int
    tiles_per_ipu: int
    bytes_per_tile: int
    clock_hz: float

    @property
    def num_tiles(self) -> int:
        return self.num_ipus * self.tiles_per_ipu

    @property
    def bytes_per_ipu(self) -> int:
        return self.tiles_per_ipu * self.bytes_per_tile

    def ipu_of_tile(self, tile: int | np.ndarray) -> int | np.ndarray:
        return tile // self.tiles_per_ipu

    def tiles_of_ipu(self, ipu: int) -> range:
        self.check_ipu(ipu)
        return range(ipu * self.tiles_per_ipu, (ipu + 1) * self.tiles_per_ipu)

    def check_ipu(self, ipu: int) -> None:
        if not 0 <= ipu < self.num_ipus:
            raise EngineError(
                f"IPU {ipu} is outside the target: {self.version} x{self.num_ipus} "
                f"has IPUs 0..{self.num_ipus - 1}"
            )

    def check_tile(self, tile: int, what: str = "") -> None:
        if not 0 <= tile < self.num_tiles:
            subject = f"{what}: " if what else ""
            raise TileMappingError(
                f"{subject}tile {tile} is outside the target: {self.describe()} "
                f"has tiles 0..{self.num_tiles - 1}"
            )

    def describe(self) -> str:
        ipus = f"{self.num_ipus} IPUs" if self.num_ipus != 1 else "1 IPU"
        return f"{self.version} ({ipus}, {self.num_tiles} tiles)"


@dataclass(frozen=True)
class _Version:
    tiles_per_ipu: int
    bytes_per_tile: int
    clock_hz: float


VERSIONS: dict[str, _Version] = {
    "ipu1": _Version(1216, 262_144, 1.6e9),
    "ipu2": _Version(1472, 638_976, 1.33e9),
    "bow": _Version(1472, 638_976, 1.85e9),
}
_ALIASES = {"mk1": "ipu1", "gc2": "ipu1", "mk2": "ipu2", "gc200": "ipu2", "ipu21": "bow"}


class Device:
    """An IPU Model device: holds the target an engine is loaded on."""

    def __init__(self, target: Target, device_id: int = 0) -> None:
        self.target = target
        self.id = device_id

    def attach(self) -> bool:
        return True

    def detach(self) -> None:
        """Nothing to release: the model runs in this process."""

    def __repr__(self) -> str:
        return f"Device(id={self.id}, target={self.target.describe()})"


class IPUModel:
    """Poplar's IPU Model: a device simulated on the host, created from an IPU version."""

    def __init__(
        self,
        version: str = "ipu2",
        num_ipus: int = 1,
        tiles_per_ipu: int | None = None,
        bytes_per_tile: int | None = None,
    ) -> None:
        key = _ALIASES.get(version.lower(), version.lower())
        if key not in VERSIONS:
            raise EngineError(f"unknown IPU version {version!r}; use one of {', '.join(VERSIONS)}")
        if num_ipus < 1:
            raise EngineError(f"num_ipus must be at least 1, got {num_ipus}")
        spec = VERSIONS[key]
        tiles = spec.tiles_per_ipu if tiles_per_ipu is None else int(tiles_per_ipu)
        if not 1 <= tiles <= spec.tiles_per_ipu:
            raise EngineError(
                f"tiles_per_ipu must be 1..{spec.tiles_per_ipu} for {key}, got {tiles}"
            )
        self.version = key
        self.num_ipus = int(num_ipus)
        self.tiles_per_ipu = tiles
        self.bytes_per_tile = spec.bytes_per_tile if bytes_per_tile is None else bytes_per_tile
        self.clock_hz = spec.clock_hz

    def create_target(self) -> Target:
        return Target(
            self.version, self.num_ipus, self.tiles_per_ipu, self.bytes_per_tile, self.clock_hz
        )

    def create_device(self) -> Device:
        return Device(self.create_target())

"""IPU targets and the IPU Model device: how many tiles, how much memory, how fast.

Numbers are Graphcore's published ones: Mk1 (GC2) 1216 tiles x 256 KiB; Mk2 (GC200)
1472 tiles x 624 KiB = 638,976 bytes at 1.33 GHz; Bow 1472 tiles at 1.85 GHz.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from ipu_engine.common.arguments import integer_arg, name_arg, number_arg
from ipu_engine.common.errors import EngineError, TileMappingError
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula


@dataclass(frozen=True)
class CycleSettings:
    """The knobs of the cycle model that Poplar exposes on ``IPUModel`` and ``Target``.

    ``profile`` picks the figures that differ between the IPU Model's estimates and a
    hardware profile ("ipu_model" or "ipu_hardware"); see ``cost_model/constants.py``.
    """

    profile: str = "ipu_model"
    num_worker_contexts: int = C.WORKER_CONTEXTS
    exchange_bytes_per_cycle: int = C.EXCHANGE_BYTES_PER_CYCLE
    min_ipu_sync_delay: int = 0
    relative_sync_delay: str = "AUTO"
    host_bytes_per_second: float = C.HOST_BYTES_PER_SECOND["ipu_model"]

    def check(self) -> CycleSettings:
        """Raise ``EngineError`` naming the first setting out of range."""
        if self.profile not in PROFILES:
            raise EngineError(f"profile must be one of {', '.join(PROFILES)}, got {self.profile!r}")
        for name in ("num_worker_contexts", "exchange_bytes_per_cycle", "host_bytes_per_second"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise EngineError(f"{name} must be a positive number, got {value!r}")
        if not isinstance(self.num_worker_contexts, int):
            raise EngineError(
                f"num_worker_contexts must be a whole number, got {self.num_worker_contexts!r}"
            )
        delay = self.min_ipu_sync_delay
        if isinstance(delay, bool) or not isinstance(delay, int) or delay < 0:
            raise EngineError(
                f"min_ipu_sync_delay must be 0 or more cycles, got {self.min_ipu_sync_delay!r}"
            )
        if self.relative_sync_delay not in RELATIVE_SYNC_DELAYS:
            raise EngineError(
                f"relative_sync_delay must be one of {', '.join(RELATIVE_SYNC_DELAYS)}, "
                f"got {self.relative_sync_delay!r}"
            )
        return self

    @property
    def sync_delay_cycles(self) -> int:
        """Extra cycles every on-IPU sync waits: the larger of the minimum delay and, with
        relative delays on, the spread of sync arrival over the tiles."""
        relative = C.RELATIVE_SYNC_DELAY_CYCLES if self.relative_sync_delay == "AUTO" else 0
        return max(int(self.min_ipu_sync_delay), relative)


PROFILES = ("ipu_model", "ipu_hardware")
RELATIVE_SYNC_DELAYS = ("AUTO", "NO_DELAY")


@dataclass(frozen=True)
class Target:
    """What a graph is compiled for: IPU version, IPU count, tiles and memory per tile."""

    version: str
    num_ipus: int
    tiles_per_ipu: int
    bytes_per_tile: int
    clock_hz: float
    cycles: CycleSettings = field(default_factory=CycleSettings)

    # -- Poplar's Target getters, in this project's naming --------------------------------
    @property
    def num_worker_contexts(self) -> int:
        return self.cycles.num_worker_contexts

    @property
    def exchange_bytes_per_cycle(self) -> int:
        return self.cycles.exchange_bytes_per_cycle

    @property
    def tile_clock_frequency(self) -> float:
        return self.clock_hz

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


def tile_arg(value: Any, target: Target, what: str) -> int:
    """A tile number of ``target``."""
    tile = integer_arg(value, f"{what}: the tile", TileMappingError)
    target.check_tile(tile, what)
    return tile


def tile_array_arg(tiles: Any, target: Target, what: str) -> np.ndarray:
    """An array of tile numbers (one per element): integers within ``target``, as int32."""
    try:
        array = np.asarray(tiles)
    except (ValueError, TypeError) as exc:
        raise TileMappingError(f"{what}: tiles must be an array of integers ({exc})") from None
    if array.size and array.dtype.kind not in "iu":
        raise TileMappingError(f"{what}: tiles must be integers, got an array of {array.dtype}")
    array = array.reshape(-1)
    if array.size:
        low, high = int(array.min()), int(array.max())
        if low < 0 or high >= target.num_tiles:
            target.check_tile(low if low < 0 else high, what)
    return array.astype(np.int32, copy=False)


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


# Poplar's IPUModel attribute names (camelCase) and this project's own, to one setting
_MODEL_ATTRIBUTES = {
    "numIPUs": "num_ipus",
    "tilesPerIPU": "tiles_per_ipu",
    "memoryPerTile": "bytes_per_tile",
    "numWorkerContexts": "num_worker_contexts",
    "exchangeBytesPerCycle": "exchange_bytes_per_cycle",
    "minIPUSyncDelay": "min_ipu_sync_delay",
    "relativeSyncDelay": "relative_sync_delay",
    "hostBytesPerSecond": "host_bytes_per_second",
    "tileClockFrequency": "clock_hz",
}
_CYCLE_SETTINGS = {f.name for f in fields(CycleSettings)}
_OWN = {"version", "num_ipus", "tiles_per_ipu", "bytes_per_tile", "clock_hz"}


class RelativeSyncDelayType:
    """Poplar's ``IPUModel::RelativeSyncDelayType``: whether syncs wait for the spread of
    tiles' arrival (AUTO) or not (NO_DELAY, as the matrix-vector tutorials set)."""

    AUTO = "AUTO"
    NO_DELAY = "NO_DELAY"


class IPUModel:
    """Poplar's IPU Model: a device simulated on the host, created from an IPU version.

    Its attributes are settings of the cycle model; Poplar's names work too
    (``model.minIPUSyncDelay = 0``). Setting an attribute that does not exist raises.
    """

    RelativeSyncDelayType = RelativeSyncDelayType

    def __init__(
        self,
        version: str = "ipu2",
        num_ipus: int = 1,
        tiles_per_ipu: int | None = None,
        bytes_per_tile: int | None = None,
        profile: str = "ipu_model",
    ) -> None:
        version = name_arg(version, "IPUModel: the IPU version", EngineError)
        profile = name_arg(profile, "IPUModel: the profile", EngineError)
        key = _ALIASES.get(version.lower(), version.lower())
        if key not in VERSIONS:
            raise EngineError(f"unknown IPU version {version!r}; use one of {', '.join(VERSIONS)}")
        spec = VERSIONS[key]
        object.__setattr__(self, "version", key)
        object.__setattr__(self, "_spec", spec)
        self.num_ipus = num_ipus
        self.tiles_per_ipu = spec.tiles_per_ipu if tiles_per_ipu is None else tiles_per_ipu
        self.bytes_per_tile = spec.bytes_per_tile if bytes_per_tile is None else bytes_per_tile
        self.clock_hz = spec.clock_hz
        settings = CycleSettings(profile=profile)
        if profile in C.HOST_BYTES_PER_SECOND:
            settings = replace(settings, host_bytes_per_second=C.HOST_BYTES_PER_SECOND[profile])
        object.__setattr__(self, "_cycles", settings.check())

    def __setattr__(self, name: str, value: object) -> None:
        key = _MODEL_ATTRIBUTES.get(name, name)
        if key in _CYCLE_SETTINGS:
            object.__setattr__(self, "_cycles", replace(self._cycles, **{key: value}).check())
            return
        if key not in _OWN:
            known = sorted(_OWN | _CYCLE_SETTINGS | set(_MODEL_ATTRIBUTES))
            raise EngineError(
                f"IPUModel has no attribute {name!r}; settable attributes: {', '.join(known)}"
            )
        object.__setattr__(self, key, self._checked(key, value))

    def __getattr__(self, name: str) -> object:  # only called for names not found
        key = _MODEL_ATTRIBUTES.get(name)
        if key is not None:
            return getattr(self, key)
        if name in _CYCLE_SETTINGS:
            return getattr(self.__dict__["_cycles"], name)
        raise AttributeError(f"IPUModel has no attribute {name!r}")

    def _checked(self, key: str, value: object) -> object:
        spec = self._spec
        if key in ("num_ipus", "tiles_per_ipu", "bytes_per_tile"):
            value = integer_arg(value, f"IPUModel: {key}", EngineError)
        elif key == "clock_hz":
            value = number_arg(value, f"IPUModel: {key}", EngineError)
        if key == "num_ipus" and value < 1:
            raise EngineError(f"num_ipus must be at least 1, got {value!r}")
        if key == "tiles_per_ipu" and not 1 <= value <= spec.tiles_per_ipu:
            raise EngineError(
                f"tiles_per_ipu must be 1..{spec.tiles_per_ipu} for {self.version}, got {value!r}"
            )
        if key in ("bytes_per_tile", "clock_hz") and not (math.isfinite(value) and value > 0):
            raise EngineError(f"{key} must be a positive number, got {value!r}")
        return value

    @property
    def cycle_settings(self) -> CycleSettings:
        return self._cycles

    def create_target(self) -> Target:
        return Target(
            self.version,
            self.num_ipus,
            self.tiles_per_ipu,
            self.bytes_per_tile,
            self.clock_hz,
            self._cycles,
        )

    def create_device(self) -> Device:
        return Device(self.create_target())


def ipu_hardware(version: str = "ipu2", num_ipus: int = 1) -> IPUModel:
    """A model that charges what a hardware profile of the same program shows where it
    differs from the IPU Model's estimates (host link, host preparation, syncs)."""
    return IPUModel(version, num_ipus, profile="ipu_hardware")

"""Exchange planning: which bytes move between tiles before and after a compute set, and
for a copy, split into on-IPU traffic (DoExchange) and IPU-Link traffic (GlobalExchange).

A tile receives each remote element it needs once per exchange, however many of its
vertices read it; a vertex output held on another tile is sent there after the compute.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ipu_engine.arrays import unique as sorted_unique
from ipu_engine.target import Target


@dataclass(frozen=True)
class Transfer:
    """Elements of one type moving: source tile, destination tile, address, size."""

    src_tile: np.ndarray
    dst_tile: np.ndarray
    addr: np.ndarray
    elem_size: int
    pool_id: int  # keeps addresses of different element types apart


@dataclass(frozen=True)
class ExchangeTraffic:
    """Bytes each tile receives and sends in one exchange step (sparse over tiles)."""

    tiles: np.ndarray  # int32 tiles that send or receive
    bytes_in: np.ndarray  # int64
    bytes_out: np.ndarray  # int64

    @property
    def empty(self) -> bool:
        return self.tiles.size == 0

    @property
    def total_bytes(self) -> int:
        return int(self.bytes_in.sum())


@dataclass(frozen=True)
class ExchangePlan:
    on_ipu: ExchangeTraffic
    cross_ipu: ExchangeTraffic


_EMPTY = ExchangeTraffic(np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.int64))


def plan_exchange(target: Target, transfers: Iterable[Transfer]) -> ExchangePlan:
    """Sum the remote traffic of ``transfers``; local elements (same tile) cost nothing."""
    num_tiles = target.num_tiles
    by_pool: dict[int, list[np.ndarray]] = {}
    sizes: dict[int, int] = {}
    for t in transfers:
        remote = t.src_tile != t.dst_tile
        if not remote.any():
            continue
        # one key per (element, destination, source): an element reaches a tile once
        key = (t.addr[remote].astype(np.int64) * num_tiles + t.dst_tile[remote]) * num_tiles
        by_pool.setdefault(t.pool_id, []).append(key + t.src_tile[remote])
        sizes[t.pool_id] = t.elem_size
    on_in = np.zeros(num_tiles, np.int64)
    on_out = np.zeros(num_tiles, np.int64)
    cross_in = np.zeros(num_tiles, np.int64)
    cross_out = np.zeros(num_tiles, np.int64)
    for pool_id, keys in by_pool.items():
        unique = sorted_unique(np.concatenate(keys))
        src = unique % num_tiles
        dst = (unique // num_tiles) % num_tiles
        crossing = (src // target.tiles_per_ipu) != (dst // target.tiles_per_ipu)
        size = sizes[pool_id]
        for mask, bytes_in, bytes_out in (
            (~crossing, on_in, on_out),
            (crossing, cross_in, cross_out),
        ):
            if mask.any():
                bytes_in += np.bincount(dst[mask], minlength=num_tiles) * size
                bytes_out += np.bincount(src[mask], minlength=num_tiles) * size
    return ExchangePlan(_traffic(on_in, on_out), _traffic(cross_in, cross_out))


def _traffic(bytes_in: np.ndarray, bytes_out: np.ndarray) -> ExchangeTraffic:
    tiles = np.flatnonzero((bytes_in > 0) | (bytes_out > 0)).astype(np.int32)
    if tiles.size == 0:
        return _EMPTY
    return ExchangeTraffic(tiles, bytes_in[tiles], bytes_out[tiles])

"""Vertex code by group, with shared code counted once.

A tile holds a codelet's code once however many vertices of it run there (so Memory's
Vertex code is each (vertex type, tile) once). Operations whose vertices run the same
codelet on the same tile share that code: it is each one's, but only once the device's. So
a group's code is split into its own (no other group uses it) and what it shares; the
shared code is listed once per set of groups that share it, and own + shared add up to
Memory's Vertex code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from profiler_core.model.unique import sorted_unique


@dataclass(frozen=True)
class CodeSharing:
    """One row per set of groups that share code, most bytes first."""

    members: list[tuple[str, ...]] = field(default_factory=list)  # the groups' labels
    bytes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # shared once
    vertex_types: list[tuple[str, ...]] = field(default_factory=list)  # the codelets' names
    tiles: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # tiles it is on

    def __len__(self) -> int:
        return len(self.members)

    def of(self, label: str) -> list[int]:
        """The rows ``label`` is among the members of."""
        return [i for i, members in enumerate(self.members) if label in members]


@dataclass(frozen=True)
class GroupCode:
    code_bytes: np.ndarray  # int64 (groups,) code its vertices use, shared code included
    own_bytes: np.ndarray  # int64 (groups,) code no other group uses
    shared_bytes: int  # code used by several groups, each (type, tile) once
    sharing_groups: list[np.ndarray]  # per sharing set, its group ids
    sharing_bytes: np.ndarray  # int64
    sharing_types: list[np.ndarray]  # per sharing set, its vertex types
    sharing_tiles: np.ndarray  # int64


def group_code(
    group: np.ndarray,
    vertex_type: np.ndarray,
    tile: np.ndarray,
    type_code_bytes: np.ndarray,
    num_groups: int,
) -> GroupCode:
    """The code of ``num_groups`` groups from the vertex-count rows' group, type and tile."""
    num_types = max(len(type_code_bytes), 1)
    num_tiles = int(tile.max(initial=0)) + 1
    places = num_types * num_tiles
    place = vertex_type.astype(np.int64) * num_tiles + tile
    triples = sorted_unique(group.astype(np.int64) * places + place)  # (group, type, tile)
    owner, place = triples // places, triples % places
    code = np.asarray(type_code_bytes, dtype=np.int64)[place // num_tiles]
    code_bytes = np.bincount(owner, weights=code, minlength=num_groups).astype(np.int64)
    by_place = np.argsort(place, kind="stable")
    place_sorted = place[by_place]
    distinct, first, users = np.unique(place_sorted, return_index=True, return_counts=True)
    alone = np.repeat(users == 1, users)[np.argsort(by_place, kind="stable")]
    own = np.bincount(owner[alone], weights=code[alone], minlength=num_groups).astype(np.int64)
    shared_places = np.flatnonzero(users > 1)
    shared_bytes = (
        int(np.asarray(type_code_bytes, dtype=np.int64)[distinct[shared_places] // num_tiles].sum())
        if len(shared_places)
        else 0
    )
    groups, sizes, types, tiles = _sharing_sets(
        owner[by_place], first, users, shared_places, distinct, num_tiles, type_code_bytes
    )
    return GroupCode(code_bytes, own, shared_bytes, groups, sizes, types, tiles)


def _sharing_sets(
    owner_by_place: np.ndarray,
    first: np.ndarray,
    users: np.ndarray,
    shared_places: np.ndarray,
    distinct: np.ndarray,
    num_tiles: int,
    type_code_bytes: np.ndarray,
) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray], np.ndarray]:
    """The shared (type, tile) places grouped by the set of groups using them: a set is
    named by the sum of random 64-bit keys of its groups (wrapping), so no Python set is
    made per place."""
    if not len(shared_places):
        return [], np.zeros(0, np.int64), [], np.zeros(0, np.int64)
    keys = (
        np.random.default_rng(38)
        .integers(0, np.iinfo(np.int64).max, int(owner_by_place.max()) + 1, dtype=np.int64)
        .astype(np.uint64)
    )
    summed = np.add.reduceat(keys[owner_by_place], first)[shared_places]
    sets, rep, set_of = np.unique(summed, return_index=True, return_inverse=True)
    set_of = set_of.reshape(-1)
    place = distinct[shared_places]
    code = np.asarray(type_code_bytes, dtype=np.int64)[place // num_tiles]
    sizes = np.bincount(set_of, weights=code, minlength=len(sets)).astype(np.int64)
    num_types = max(len(type_code_bytes), 1)
    type_pairs = sorted_unique(set_of * num_types + place // num_tiles)
    type_bounds = np.searchsorted(type_pairs // num_types, np.arange(len(sets) + 1))
    tile_pairs = sorted_unique(set_of * num_tiles + place % num_tiles)
    tiles = np.bincount(tile_pairs // num_tiles, minlength=len(sets)).astype(np.int64)
    groups, types = [], []
    for k, p in enumerate(shared_places[rep].tolist()):
        # a place's owners are in group order (the triples were sorted by group first)
        groups.append(owner_by_place[first[p] : first[p] + users[p]])
        types.append(type_pairs[type_bounds[k] : type_bounds[k + 1]] % num_types)
    return groups, sizes, types, tiles


def code_sharing(code: GroupCode, labels: Sequence[str], type_names: Sequence[str]) -> CodeSharing:
    """``code``'s sharing sets named: the groups' labels and the codelets' names."""
    order = np.argsort(-code.sharing_bytes, kind="stable")
    return CodeSharing(
        members=[tuple(labels[int(g)] for g in code.sharing_groups[k]) for k in order],
        bytes=code.sharing_bytes[order],
        vertex_types=[tuple(type_names[int(t)] for t in code.sharing_types[k]) for k in order],
        tiles=code.sharing_tiles[order],
    )

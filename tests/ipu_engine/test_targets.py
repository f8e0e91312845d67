"""Targets: the IPU versions users choose, with Graphcore's numbers."""

import pytest

from ipu_engine import EngineError, IPUModel


@pytest.mark.parametrize(
    ("version", "tiles", "bytes_per_tile", "clock"),
    [
        ("ipu1", 1216, 262_144, None),
        ("ipu2", 1472, 638_976, 1.33e9),
        ("bow", 1472, 638_976, 1.85e9),
    ],
)
def test_versions_have_graphcores_tiles_memory_and_clock(version, tiles, bytes_per_tile, clock):
    target = IPUModel(version, num_ipus=2).create_device().target
    assert target.tiles_per_ipu == tiles
    assert target.num_tiles == 2 * tiles
    assert target.bytes_per_tile == bytes_per_tile
    if clock is not None:
        assert target.clock_hz == clock


def test_ipu2_tile_memory_is_624_kib():
    assert IPUModel("ipu2").create_device().target.bytes_per_tile == 624 * 1024


def test_unknown_version_and_bad_counts_are_clear_errors():
    with pytest.raises(EngineError, match="unknown IPU version 'ipu9'"):
        IPUModel("ipu9")
    with pytest.raises(EngineError, match="num_ipus must be at least 1"):
        IPUModel("ipu2", num_ipus=0)
    with pytest.raises(EngineError, match="tiles_per_ipu must be 1..1472"):
        IPUModel("ipu2", tiles_per_ipu=5000)

"""PopLibs' poputil: tile mapping helpers (``poputil::mapTensorLinearly``) and what every
library op of popops, poplin and popnn shares (``library_op``: its debug context,
broadcasting, per-tile vertex splits; ``splits``: the split counts the planners try)."""

from ipu_engine.poplar.journal import record_api
from ipu_engine.poputil.tile_mapping import (
    calc_linear_tile_mapping,
    linear_tile_array,
    map_tensor_linearly,
)

__all__ = ["calc_linear_tile_mapping", "linear_tile_array", "map_tensor_linearly"]

record_api(globals(), "poputil", __all__)

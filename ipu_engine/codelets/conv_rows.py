"""A depthwise group's row blocks as one taller image: the vertices of a convolution's
middle row blocks each read their own rows of one image (their windows overlap by the
kernel's height), so per-vertex sums run over a few short rows each -- a MobileNet
layer's 1,088 middle vertices sum 3 rows of 58 at a time, and numpy's per-call cost
dominates. When the group's last grid axis walks row blocks of the same images (each
block's input and output rows follow the last block's, no padding above or below, the
same weights and biases), the blocks are one vertex of all their rows: the same windows
times the same weights, added in the same order, so the same sums to the bit, over runs
of ~3,000 elements. Pure arithmetic on the edges' strided views (first address, steps).
"""

from __future__ import annotations

Affine = tuple[int, tuple[int, ...]]  # first address, step per axis


def merged_row_blocks(
    views: dict[str, Affine | None],
    shapes: dict[str, tuple[int, ...]],
    grid: tuple[int, ...],
    g: dict[str, int],
    channel_major: bool,
    overhang: tuple[int, int, int, int],
) -> tuple[tuple[int, ...], dict[str, Affine], dict[str, tuple[int, ...]], dict[str, int]] | None:
    """(grid, views, shapes, sizes) of the group with its last grid axis of row blocks
    merged into each vertex's rows, or None when the blocks are not one image's rows.
    ``views`` and ``shapes`` per field over [*grid, *shape]; ``overhang`` is the
    vertices' (top, bottom, left, right) padding."""
    top, bottom = overhang[0], overhang[1]
    blocks, k = grid[-1] if grid else 1, len(grid)
    if blocks < 2 or top or bottom or any(v is None for v in views.values()):
        return None
    rows_axis = {"in": 2 if channel_major else 0, "out": 0}
    steps = {name: view[1] for name, view in views.items() if view is not None}
    in_row, out_row = steps["in"][k + rows_axis["in"]], steps["out"][k]
    out_rows, stride = g["outRows"], g["strideH"]
    if (
        steps["in"][k - 1] != out_rows * stride * in_row
        or steps["out"][k - 1] != out_rows * out_row
    ):
        return None  # not consecutive row blocks of the same images
    if any(steps[name][k - 1] != 0 for name in steps if name not in rows_axis):
        return None  # weights or biases that differ from block to block
    if in_row <= 0 or out_row <= 0:
        return None
    sizes = dict(
        g, outRows=blocks * out_rows, inRows=(blocks - 1) * out_rows * stride + g["inRows"]
    )
    merged_views, merged_shapes = {}, {}
    for name, (first, field_steps) in ((n, v) for n, v in views.items() if v is not None):
        shape = list(shapes[name])
        if name in rows_axis:
            shape[rows_axis[name]] = sizes["inRows" if name == "in" else "outRows"]
        merged_views[name] = (first, (*field_steps[: k - 1], *field_steps[k:]))
        merged_shapes[name] = tuple(shape)
    return grid[:-1], merged_views, merged_shapes, sizes

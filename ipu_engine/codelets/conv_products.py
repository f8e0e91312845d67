"""The product of a convolution grid block: every input's patches times its weights side
by side, per group, multiplied where the data already is.

Edges arrive as strided views of memory. Each is seen in its field's own shape (an input
[groups, channels, rows, width] or [rows, width, groups, channels], weights [KH, KW, C,
groups, F], outputs [pixels, groups, F]) without a copy where numpy can, so that:
- a 1x1 kernel without padding needs no im2col: its patches are the input's pixels, a
  view at stride 1 (a transposed matrix for an NCHW input), one strided copy at stride 2;
- weights whose block is one matrix of memory (one kernel position, one group; the usual
  1x1 convolution) are multiplied as they are, others gathered into one matrix once;
- outputs that are one matrix per group of memory (rows of pixels, columns of output
  channels side by side) receive the product directly (``matmul(out=...)``).
Every sum is accumulated in float32 by BLAS, as before; the order within a sum is BLAS's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ipu_engine.codelets import kernels


def _as_float(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32, copy=False)


def input_images(x: np.ndarray, g: dict[str, int], channel_major: bool) -> np.ndarray:
    """Inputs [depth, inputs, ...their elements] -> [depth, inputs, groups, rows, width,
    channels], a view of ``x`` where its strides allow (else numpy's copy)."""
    d, u = x.shape[0], x.shape[1]
    groups, c, h, w = g["groups"], g["inChans"], g["inRows"], g["width"]
    if channel_major:  # each edge is [groups x channels, pixels]
        return x.reshape(d, u, groups, c, h, w).transpose(0, 1, 2, 4, 5, 3)
    return x.reshape(d, u, h, w, groups, c).transpose(0, 1, 4, 2, 3, 5)


def _overhang(g: dict[str, int]) -> tuple[int, int, int, int]:
    """Zero rows above and below, zero columns left and right of the input that the
    kernel windows reach."""
    rows, cols = g["outRows"], g["outWidth"]
    need_h = (rows - 1) * g["strideH"] + g["dilationH"] * (g["kernelH"] - 1) + 1
    need_w = (cols - 1) * g["strideW"] + g["dilationW"] * (g["kernelW"] - 1) + 1
    top, left = g["padTop"], g["padLeft"]
    return top, max(need_h - top - g["inRows"], 0), left, max(need_w - left - g["width"], 0)


def _valid(out: int, size: int, first: int, step: int) -> tuple[int, int]:
    """Output positions [lo, hi) whose input position ``first + i * step`` is inside
    [0, size)."""
    lo = 0 if first >= 0 else -(first // step)
    hi = min(out, (size - 1 - first) // step + 1) if first < size else 0
    return lo, max(hi, lo)


def patch_matrix(images: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """Images [depth, inputs, groups, rows, width, C] -> [depth, groups, inputs x outRows x
    outWidth, KH x KW x C] float32: the kernel window of every output pixel (zeros where it
    overhangs the image). A 1x1 kernel without overhang is the strided pixels themselves."""
    pixels = _pixels(images, g)
    if pixels is not None:
        return _as_float(pixels)
    matrix, copies, _ = window_copies(images, g)  # (blanks zeroed: a new array)
    for target, source in copies:
        target[...] = source
    return matrix


def _pixels(images: np.ndarray, g: dict[str, int]) -> np.ndarray | None:
    """A 1x1 kernel's patch matrix without overhang: the input's strided pixels (a view
    where numpy can reshape them so), else None."""
    if not g["kernelH"] == g["kernelW"] == 1 or any(_overhang(g)):
        return None
    d, u, groups, _, _, c = images.shape
    rows, cols, sh, sw = g["outRows"], g["outWidth"], g["strideH"], g["strideW"]
    pixels = images[:, :, :, : (rows - 1) * sh + 1 : sh, : (cols - 1) * sw + 1 : sw]
    pixels = pixels.transpose(0, 2, 1, 3, 4, 5)  # depth, groups, inputs, rows, cols, C
    return pixels.reshape(d, groups, u * rows * cols, c)


Copies = tuple[tuple[np.ndarray, np.ndarray], ...]
Make = Callable[[tuple[int, ...]], np.ndarray]


def _fresh(shape: tuple[int, ...]) -> np.ndarray:
    return np.empty(shape, np.float32)


def _zeros(shape: tuple[int, ...]) -> np.ndarray:
    return np.zeros(shape, np.float32)


#: The blanks of a window's matrix: its layers [depth, elements] and the elements of a
#: layer that must hold zeros (the same in every layer).
Blanks = tuple[np.ndarray, np.ndarray]


def window_copies(
    images: np.ndarray, g: dict[str, int], make: Make | None = None
) -> tuple[np.ndarray, Copies, Blanks | None]:
    """``patch_matrix``'s matrix, the copies that fill it -- (a view of it, a view of
    ``images``), a kernel position each -- and its blanks, where the windows overhang the
    image and zeros belong (None: no overhang, or a new array). The matrix is a new float32 array
    (blanks zeroed), or ``make(shape)``'s (``window_space``: values left by others, so
    ``windowed`` zeroes the blanks before the copies on each call). Made again, the copies
    refill the same matrix from the images' values then."""
    d, u, groups, h, w, c = images.shape
    rows, cols = g["outRows"], g["outWidth"]
    sh, sw, dh, dw = g["strideH"], g["strideW"], g["dilationH"], g["dilationW"]
    kh, kw = g["kernelH"], g["kernelW"]
    top, bottom, left, right = _overhang(g)
    made_here = make is None  # a new array: its blanks are zeros already
    if make is None:
        make = _zeros if top or bottom or left or right else _fresh
    # the window copies run along the input's contiguous axis: channels of an NHWC
    # image, pixels of an NCHW one (whose patches are then made [taps, C, pixels] and
    # multiplied as a transposed matrix, the same K order)
    pixels_inner = images.strides[-1] != images.itemsize
    if pixels_inner:
        patches = make((d, groups, kh * kw, c, u, rows, cols))
        source = images.transpose(0, 2, 5, 1, 3, 4)  # depth, groups, C, inputs, H, W
    else:
        patches = make((d, groups, u, rows, cols, kh * kw, c))
        source = images.transpose(0, 2, 1, 3, 4, 5)  # depth, groups, inputs, H, W, C

    def at(tap: int, r: slice, q: slice) -> tuple:  # a tap's output rows and columns
        every = slice(None)
        return (
            (every, every, tap, every, every, r, q) if pixels_inner else (every,) * 3 + (r, q, tap)
        )

    copies, blanks = [], []
    for a in range(kh):
        r0, r1 = _valid(rows, h, a * dh - top, sh)
        for b in range(kw):
            c0, c1 = _valid(cols, w, b * dw - left, sw)
            tap = a * kw + b
            if r0 == r1 or c0 == c1:  # this kernel position sees padding only
                blanks.append(at(tap, slice(None), slice(None)))
                continue
            first_h, first_w = r0 * sh + a * dh - top, c0 * sw + b * dw - left
            hs = slice(first_h, first_h + (r1 - r0 - 1) * sh + 1, sh)
            ws = slice(first_w, first_w + (c1 - c0 - 1) * sw + 1, sw)
            window = source[..., hs, ws] if pixels_inner else source[:, :, :, hs, ws]
            copies.append((patches[at(tap, slice(r0, r1), slice(c0, c1))], window))
            edges = [(slice(0, r0), slice(None)), (slice(r1, rows), slice(None)),
                     (slice(r0, r1), slice(0, c0)), (slice(r0, r1), slice(c1, cols))]  # fmt: skip
            blanks.extend(at(tap, r, q) for r, q in edges if r.start < r.stop)
    if pixels_inner:
        matrix = patches.reshape(d, groups, kh * kw * c, u * rows * cols).swapaxes(2, 3)
    else:
        matrix = patches.reshape(d, groups, u * rows * cols, kh * kw * c)
    return matrix, tuple(copies), None if made_here else _blanks(patches, blanks)


def _blanks(patches: np.ndarray, where: list[tuple]) -> Blanks | None:
    """The elements of ``patches`` at indexes ``where`` as ``Blanks`` (one fancy-index
    write zeroes them all: ResNet-50's ~1,100 small views a run took 6 ms to fill)."""
    layer = np.zeros((1, *patches.shape[1:]), bool)
    for index in where:
        layer[index] = True
    found = np.flatnonzero(layer)
    return (patches.reshape(patches.shape[0], -1), found) if found.size else None


def weight_matrix(w: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """Weights [depth, columns, ...their elements] -> [depth, groups, KH x KW x C,
    columns x F] float32: a view of memory when the block is one matrix of it."""
    d, wb, groups = w.shape[0], w.shape[1], g["groups"]
    k, f = g["kernelH"] * g["kernelW"] * g["inChans"], g["outChans"]
    return _as_float(_weight_axes(w, g).reshape(d, groups, k, wb * f))


def weight_copy(
    w: np.ndarray, g: dict[str, int], make: Make | None = None
) -> tuple[np.ndarray, Copies]:
    """``weight_matrix`` as a new float32 array (or ``make(shape)``'s) and the copy that
    fills it (a view of it, a view of ``w``): weights whose block is not one matrix of
    memory (several output channel blocks of a kernel with taps), made again from memory
    on each call."""
    d, wb, groups = w.shape[0], w.shape[1], g["groups"]
    k, f = g["kernelH"] * g["kernelW"] * g["inChans"], g["outChans"]
    source = _weight_axes(w, g)
    matrix = (make or _fresh)((d, groups, k, wb * f))
    return matrix, ((matrix.reshape(source.shape), source),)


def _weight_axes(w: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """Weights [depth, columns, ...] -> [depth, groups, KH, KW, C, columns, F] (a view)."""
    d, wb = w.shape[0], w.shape[1]
    groups, c, f = g["groups"], g["inChans"], g["outChans"]
    w7 = w.reshape(d, wb, g["kernelH"], g["kernelW"], c, groups, f)
    return w7.transpose(0, 5, 2, 3, 4, 1, 6)


def _bias_rows(bias: np.ndarray, g: dict[str, int]) -> np.ndarray:
    """Biases [depth, columns, groups x F] -> [depth, groups, 1, columns x F] float32."""
    d, wb = bias.shape[0], bias.shape[1]
    groups, f = g["groups"], g["outChans"]
    b = bias.reshape(d, wb, groups, f).transpose(0, 2, 1, 3)
    return _as_float(b.reshape(d, groups, 1, wb * f))


def multiply(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    g: dict[str, int],
    channel_major: bool,
    out: np.ndarray | None,
) -> np.ndarray | None:
    """Inputs x [depth, inputs, ...] times weights w [depth, columns, ...] (+ bias [depth,
    columns, ...], added to the sums as the vertex adds it). Written into ``out`` [depth,
    inputs, columns, pixels, groups x F] (a view of memory) when given and None returned;
    else returned as such an array (float32)."""
    d, u, wb = x.shape[0], x.shape[1], w.shape[1]
    groups, f, pixels = g["groups"], g["outChans"], g["outRows"] * g["outWidth"]
    patches, weights, b = _operands(x, w, bias, g, channel_major)
    target = None
    if out is not None:  # [depth, groups, inputs, pixels, columns, F]
        target = out.reshape(d, u, wb, pixels, groups, f).transpose(0, 4, 1, 3, 2, 5)
        direct = _matrix_view(target, (d, groups, u * pixels, wb * f))
        if direct is not None:
            product(patches, weights, b, direct)
            return None
    r = np.matmul(patches, weights)
    if b is not None:
        r += b
    r = r.reshape(d, groups, u, pixels, wb, f)
    if target is not None:
        target[...] = r
        return None
    return r.transpose(0, 2, 4, 3, 1, 5).reshape(d, u, wb, pixels, groups * f)


Operands = tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]


def prepare(
    x: np.ndarray,
    w: np.ndarray,
    bias: np.ndarray | None,
    g: dict[str, int],
    channel_major: bool,
    out: np.ndarray,
    memory: tuple[np.ndarray, ...],
    make: Make | None = None,
) -> tuple[Callable[..., None], tuple] | None:
    """``multiply``'s work as a call whose arguments are views of engine ``memory`` (the
    pools of in, weights, out and bias) -- ``product(patches, weights, bias rows, output
    matrix)``, or ``windowed(copies, ...)`` when the patches or the weights are made
    (``window_copies``, ``weight_copy``: into matrices kept with the call, each
    ``make(shape)``'s) -- so that the same call computes the next run's product too, from
    memory's values then. None when
    an edge is a copy of memory (gathered for this run) or the product cannot be written
    straight into ``out``."""
    if not (np.may_share_memory(x, memory[0]) and np.may_share_memory(w, memory[1])):
        return None
    d, u, wb = x.shape[0], x.shape[1], w.shape[1]
    groups, f, pixels = g["groups"], g["outChans"], g["outRows"] * g["outWidth"]
    images = input_images(x, g, channel_major)
    patches, copies, blanks = _pixels(images, g), (), None
    if patches is None or patches.dtype != np.float32 or not np.may_share_memory(x, patches):
        patches, copies, blanks = window_copies(images, g, make)
    weights = weight_matrix(w, g)
    if not np.may_share_memory(w, weights):
        weights, made = weight_copy(w, g, make)
        copies += made
    b = None if bias is None else _bias_rows(bias, g)
    target = out.reshape(d, u, wb, pixels, groups, f).transpose(0, 4, 1, 3, 2, 5)
    direct = _matrix_view(target, (d, groups, u * pixels, wb * f))
    if direct is None or not np.may_share_memory(direct, memory[2]):
        return None
    if b is not None and not np.may_share_memory(b, memory[3]):
        return None
    if copies:
        return windowed, (copies, blanks, patches, weights, b, direct)
    return product, (patches, weights, b, direct)


def product(
    patches: np.ndarray, weights: np.ndarray, b: np.ndarray | None, direct: np.ndarray
) -> None:
    """``direct = patches @ weights (+ b)``: one BLAS product per layer, the bias added
    to its rows (``kernels.add_into``: the output channels' rows in longer rows of
    memory)."""
    np.matmul(patches, weights, out=direct)
    if b is not None:
        kernels.add_into(direct, np.broadcast_to(b, direct.shape))


def windowed(
    copies: Copies,
    blanks: Blanks | None,
    patches: np.ndarray,
    weights: np.ndarray,
    b: np.ndarray | None,
    direct: np.ndarray,
) -> None:
    """``product`` of patches and weights made first: ``blanks`` zeroed, ``copies`` made
    (``window_copies``, ``weight_copy``)."""
    if blanks is not None:
        layers, zeros = blanks
        layers[:, zeros] = 0
    for target, source in copies:
        np.copyto(target, source)
    product(patches, weights, b, direct)


def _operands(
    x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, g: dict[str, int], channel_major: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    patches = patch_matrix(input_images(x, g, channel_major), g)
    return patches, weight_matrix(w, g), None if bias is None else _bias_rows(bias, g)


def _matrix_view(target: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """``target`` reshaped to ``shape`` as a view of the same float32 memory, or None."""
    if target.dtype != np.float32:
        return None
    try:
        return target.reshape(shape, copy=False)
    except ValueError:  # its strides do not merge: not one matrix of memory
        return None

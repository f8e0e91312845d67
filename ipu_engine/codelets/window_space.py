"""Where kept convolution products keep the matrices they make: the patches of a padded or
strided window, the weights of several output-channel blocks (``conv_products.windowed``).

Compute sets run one after another, so they share one float32 space per engine memory: each
compute set takes its matrices from the start of the space, apart from one another (its
products may run at once, on two cores), and overwrites what the compute set before it
left there. Kept apart, ResNet-50's matrices were 65 MB more memory than its graph needs;
shared, they are the largest compute set's. A compute set that needs more than the space
holds starts a larger one; the kept calls of the others keep the smaller one alive.
"""

from __future__ import annotations

import weakref

import numpy as np

from ipu_engine.poplar.vertex import VertexBatch

# id of an engine memory -> (a weak reference to it, its space): arrays are not hashable
_SPACES: dict[int, tuple[weakref.ref, np.ndarray]] = {}
_TAKEN = "window_space_taken"  # a compute set's (space, elements taken) in its cache


def _shared(memory: np.ndarray) -> np.ndarray | None:
    found = _SPACES.get(id(memory))
    return found[1] if found is not None and found[0]() is memory else None


def _share(memory: np.ndarray, space: np.ndarray) -> None:
    for key in [k for k, (ref, _) in _SPACES.items() if ref() is None]:
        del _SPACES[key]  # memories gone: their spaces go when no kept call holds them
    _SPACES[id(memory)] = (weakref.ref(memory), space)


def take(batch: VertexBatch, memory: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A float32 array of ``shape`` in the space of engine ``memory`` (its values left by
    the last compute set that used it), apart from everything this compute set took."""
    count = int(np.prod(shape, dtype=np.int64))
    space, taken = batch.cache.get(_TAKEN, (None, 0))
    if space is None:
        space = _shared(memory)
    if space is None or taken + count > space.size:
        shared = _shared(memory)
        if shared is None or shared is space or count > shared.size:
            size = max(count, 2 * shared.size if shared is not None else 0)
            shared = np.empty(size, np.float32)
            _share(memory, shared)
        space, taken = shared, 0
    batch.cache[_TAKEN] = (space, taken + count)
    return space[taken : taken + count].reshape(shape)

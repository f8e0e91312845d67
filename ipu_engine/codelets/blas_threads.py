"""numpy's BLAS kept to one thread while a codelet multiplies.

A compute set's products are many and mid-sized (a convolution's grid blocks: hundreds
per ResNet-50 run). OpenBLAS wakes its threads for each and waits for all of them, and on
a machine whose other cores are busy that wait is a scheduler time slice: ResNet-50's run
took 2.1 s with two BLAS threads on two shared cores, 0.45 s with one. The codelets'
own products are therefore single-threaded; the setting is put back afterwards, so the
user's numpy keeps its threads. The library is found among those loaded (as
threadpoolctl finds it); without one that answers, nothing changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# OpenBLAS's thread setters, plain and as scipy-openblas (numpy's wheels) names them
_PREFIXES = ("openblas", "scipy_openblas")
_SUFFIXES = ("", "64_")


@functools.cache
def openblas_libraries() -> tuple[Any, ...]:
    """The OpenBLAS libraries this process has loaded (numpy's among them), as ctypes
    libraries: found in ``/proc/self/maps``, as threadpoolctl finds them; none elsewhere."""
    import numpy  # noqa: F401 - loads the BLAS library first

    maps = Path("/proc/self/maps")
    try:
        lines = maps.read_text().splitlines() if maps.exists() else []
    except OSError:
        return ()
    paths = {line.split()[-1] for line in lines if "openblas" in line.lower() and "/" in line}
    found = []
    for path in sorted(paths):
        try:
            found.append(ctypes.CDLL(path))
        except OSError:
            continue
    return tuple(found)


@functools.cache
def _openblas() -> tuple[Any, Any] | None:
    """(get_num_threads, set_num_threads) of the OpenBLAS numpy loaded, or None."""
    for lib in openblas_libraries():
        for prefix in _PREFIXES:
            for suffix in _SUFFIXES:
                get = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    return get, put
    return None


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run the block with numpy's BLAS on one thread, then restore its thread count."""
    found = _openblas()
    if found is None:
        yield
        return
    get, put = found
    before = int(get())
    if before != 1:
        put(1)
    try:
        yield
    finally:
        if before != 1:
            put(before)

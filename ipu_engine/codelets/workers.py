"""The machine's other cores for a codelet's large, independent pieces of work.

BLAS runs single-threaded in the codelets (``blas_threads``: OpenBLAS's own threads
spin-wait, and on a shared machine a waiting thread costs a scheduler time slice). A
convolution's batched product is many independent products, one per layer of its depth
(numpy's matmul calls BLAS layer by layer); the layers are split between this thread and
a pool of threads, each layer computed by the very same BLAS call as before, so the sums
are the same to the bit. numpy releases the GIL inside BLAS and its copies, so the
halves run at once; if another process holds the other core, the caller finishes its
half and then waits, about as long as doing it all itself.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(cores() - 1, thread_name_prefix="ipu-codelet")
        return _POOL


def _forget_pool() -> None:  # a forked child has none of the parent's threads
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run_all(tasks: Sequence[Callable[[], None]]) -> None:
    """Run every task: the first here, the others on the pool's threads, at once; then
    wait for all. An exception in any is raised here, after all have ended."""
    if (
        len(tasks) <= 1 or cores() < 2 or threading.current_thread().name.startswith("ipu-codelet")
    ):  # no nesting: a pool thread runs its tasks itself
        for task in tasks:
            task()
        return
    pool = _pool()
    futures: list[Future] = [pool.submit(task) for task in tasks[1:]]
    try:
        tasks[0]()
    finally:
        errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error


def split(count: int, parts: int) -> list[slice]:
    """``count`` items as at most ``parts`` contiguous, nearly equal slices, none empty."""
    parts = max(1, min(parts, count))
    bounds = [count * k // parts for k in range(parts + 1)]
    return [slice(bounds[k], bounds[k + 1]) for k in range(parts)]

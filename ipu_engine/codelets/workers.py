"""The machine's other cores for a codelet's large, independent pieces of work.

BLAS runs single-threaded in the codelets (``blas_threads``: OpenBLAS's own threads
spin-wait, and on a shared machine a waiting thread costs a scheduler time slice). A
convolution's batched product is many independent products, one per layer of its depth
(numpy's matmul calls BLAS layer by layer); the layers are split between this thread and
a pool of threads, each layer computed by the very same BLAS call as before, so the sums
are the same to the bit. numpy releases the GIL inside BLAS and its copies, so the
halves run at once; if another process holds the other core, the caller runs the half
no pool thread has begun itself, so a loaded machine costs about what one thread does.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

_LOCK = threading.Lock()
_POOL: ThreadPoolExecutor | None = None


def cores() -> int:
    """Cores this process may use now: those it may run on, less those other processes
    keep busy -- the 1-minute load average less this process's own share of it (its CPU
    time over the wall time since the last look), read at most every half second. On a
    machine whose other cores are taken, a second thread only waits for one and fights
    for the GIL: on 2 cores at load 3, ResNet-50's run took 374 ms on two threads against
    312 on one, where with a core idle its products run nearly twice as fast."""
    now = time.monotonic()
    last_wall, last_cpu, found = _SEEN
    if now - last_wall > 0.5:
        cpu = time.process_time()
        own = (cpu - last_cpu) / (now - last_wall) if last_wall > 0 else 1.0
        _SEEN[:] = [now, cpu, _usable(own)]
        found = _SEEN[2]
    return int(found)


_SEEN: list[float] = [-1.0, 0.0, 1]  # when last looked (wall, CPU time), what it found


def _allowed() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _usable(own: float) -> int:
    """Cores left for this process when its own threads ran ``own`` cores' worth."""
    allowed = _allowed()
    try:
        others = max(0.0, os.getloadavg()[0] - min(own, allowed))
    except (AttributeError, OSError):
        others = 0.0
    return max(1, min(allowed, int(allowed - others + 0.5)))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max(1, _allowed() - 1), thread_name_prefix="ipu-codelet")
        return _POOL


def _forget_pool() -> None:  # a forked child has none of the parent's threads
    global _POOL
    _POOL = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


class _Task:
    """A piece of work that runs once, on whichever thread claims it first."""

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.claim = threading.Lock()
        self.done = threading.Event()
        self.error: BaseException | None = None

    def run_if_unclaimed(self) -> bool:
        if not self.claim.acquire(blocking=False):
            return False
        try:
            self.fn()
        except BaseException as exc:  # raised by ``run_all``, on the caller's thread
            self.error = exc
        finally:
            self.done.set()
        return True


def run_all(tasks: Sequence[Callable[[], None]]) -> None:
    """Run every task: the first here, the others offered to the pool's threads at once;
    then each task no pool thread has started yet is run here (on a loaded machine a pool
    thread may wait a scheduler time slice for a core: the caller never waits for work
    that has not begun), and the started ones are waited for. An exception in any task is
    raised here, after all have ended."""
    if (
        len(tasks) <= 1 or cores() < 2 or threading.current_thread().name.startswith("ipu-codelet")
    ):  # no nesting: a pool thread runs its tasks itself
        for task in tasks:
            task()
        return
    pool = _pool()
    offered = [_Task(task) for task in tasks]
    for task in offered[1:]:
        pool.submit(task.run_if_unclaimed)
    for task in offered:
        if not task.run_if_unclaimed():
            task.done.wait()
    for task in offered:
        if task.error is not None:
            raise task.error


def split(count: int, parts: int) -> list[slice]:
    """``count`` items as at most ``parts`` contiguous, nearly equal slices, none empty."""
    parts = max(1, min(parts, count))
    bounds = [count * k // parts for k in range(parts + 1)]
    return [slice(bounds[k], bounds[k + 1]) for k in range(parts)]


#: Elements below which element-wise work runs on the calling thread alone: handing half
#: of it to another thread costs some tens of microseconds.
PARALLEL_ELEMENTS = 1 << 17


def run_split(count: int, elements: int, work: Callable[[slice], None]) -> None:
    """``work(slice(0, count))``, or, when ``elements`` (the work's size) is large and
    the machine has cores to spare, ``work`` over parts of ``range(count)`` at once
    (``run_all``). For work whose parts are independent and element-wise: the same
    values either way."""
    if elements < PARALLEL_ELEMENTS or count < 2 or cores() < 2:
        work(slice(0, count))
        return
    run_all([functools.partial(work, part) for part in split(count, cores())])

"""The machine's other cores for a compute set's large, independent pieces of work.

A compute set's vertices are independent (BSP: none reads what another writes in the same
step), so its work may be cut into parts and run at once, as tiles run at once. BLAS stays
single-threaded in the codelets (``blas_threads``: OpenBLAS's own threads spin-wait, and on
a shared machine a waiting thread costs a scheduler time slice); instead the parts go to
helper threads started once, one per other core. numpy releases the GIL inside BLAS,
ufuncs and copies, so the parts run at once. Each part is the very same numpy call it would
be on one thread, on fewer rows, so the values are the same to the bit.

A part no helper has begun when the caller has finished its own is run by the caller, so a
machine whose other cores are taken costs about what one thread does; ``cores`` leaves out
the cores other processes keep busy now, and then nothing is handed out at all.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

_HELPER_PREFIX = "ipu-codelet"


def cores() -> int:
    """Cores this thread's work may use now (1 within ``alone``): those the process may
    run on, less those other processes
    kept busy over the last half second or more (the machine's busy time in
    ``/proc/stat`` less this process's own CPU time; the 1-minute load average where
    there is no ``/proc/stat``), looked at most every half second. On a machine whose
    other cores are taken, a second thread only waits for one and fights for the GIL:
    on 2 cores at load 3, ResNet-50's run took 374 ms on two threads against 312 on one.
    The load average was this module's measure once, and it still counted this
    process's own second thread a minute after a run had ended."""
    if getattr(_ALONE, "on", False):
        return 1
    now = time.monotonic()
    last_wall, last_cpu, last_busy, found = _SEEN
    if now - last_wall > 0.5:
        cpu, busy = time.process_time(), _machine_busy()
        if last_wall < 0 or busy is None or last_busy is None:
            found = _by_load_average()
        else:
            others = (busy - last_busy - (cpu - last_cpu)) / (now - last_wall)
            found = _usable(others)
        _SEEN[:] = [now, cpu, busy, found]
    return int(found)


_ALONE = threading.local()  # ``on`` within ``alone`` on this thread


@contextlib.contextmanager
def alone() -> Iterator[None]:
    """Within, the work this thread gives out runs on it alone (``cores`` is 1)."""
    before = getattr(_ALONE, "on", False)
    _ALONE.on = True
    try:
        yield
    finally:
        _ALONE.on = before


# when last looked (wall, own CPU time, the machine's busy seconds), what it found
_SEEN: list = [-1.0, 0.0, None, 1]
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def allowed() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _machine_busy() -> float | None:
    """Seconds every core of the machine has been busy since boot (not idle, not waiting
    for I/O; a virtual machine's stolen time counts as busy), or None."""
    try:
        with open("/proc/stat", "rb") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 5 or fields[0] != b"cpu":
        return None
    ticks = [int(f) for f in fields[1:]]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks[:8]) - idle) / _TICKS


def _by_load_average() -> int:
    try:
        return _usable(max(0.0, os.getloadavg()[0] - 1.0))  # less this process's own
    except (AttributeError, OSError):
        return allowed()


def _usable(others: float) -> int:
    """Cores left for this process when other processes keep ``others`` cores busy."""
    mine = allowed()
    return max(1, min(mine, int(mine - max(0.0, others) + 0.5)))


class _Part:
    """A piece of work that runs once, on whichever thread claims it first."""

    __slots__ = ("claim", "done", "error", "fn")

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.claim = threading.Lock()
        self.done = threading.Lock()  # held until the part has run
        self.done.acquire()
        self.error: BaseException | None = None

    def run_if_unclaimed(self) -> bool:
        if not self.claim.acquire(blocking=False):
            return False
        try:
            self.fn()
        except BaseException as exc:  # raised by ``run_all``, on the caller's thread
            self.error = exc
        finally:
            self.done.release()
        return True

    def wait(self) -> None:
        self.done.acquire()
        self.done.release()


class _Helpers:
    """Daemon threads that run the parts put on their queue (C-level queue and locks: a
    hand-over costs a few microseconds, not a pool's futures)."""

    def __init__(self, count: int) -> None:
        self.parts: queue.SimpleQueue[_Part] = queue.SimpleQueue()
        for k in range(count):
            name = f"{_HELPER_PREFIX}-{k}"
            threading.Thread(target=self._serve, name=name, daemon=True).start()

    def _serve(self) -> None:
        while True:
            self.parts.get().run_if_unclaimed()


_LOCK = threading.Lock()
_HELPERS: _Helpers | None = None


def _helpers() -> _Helpers:
    global _HELPERS
    with _LOCK:
        if _HELPERS is None:
            _HELPERS = _Helpers(max(1, allowed() - 1))
        return _HELPERS


def _forget_helpers() -> None:  # a forked child has none of the parent's threads
    global _HELPERS
    _HELPERS = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def run_all(parts: Sequence[Callable[[], None]]) -> None:
    """Run every part: the first here, the others offered to the helpers at once; then
    each part no helper has begun is run here, and the begun ones are waited for. An
    exception in any part is raised here, after all have ended. On one core, or from a
    helper thread (no nesting), the parts run here one after another."""
    if len(parts) <= 1 or cores() < 2 or threading.current_thread().name.startswith(_HELPER_PREFIX):
        for part in parts:
            part()
        return
    helpers = _helpers()
    offered = [_Part(part) for part in parts]
    for part in offered[1:]:
        helpers.parts.put(part)
    for part in offered:
        if not part.run_if_unclaimed():
            part.wait()
    for part in offered:
        if part.error is not None:
            raise part.error


def split(count: int, parts: int) -> list[slice]:
    """``count`` items as at most ``parts`` contiguous, nearly equal slices, none empty."""
    parts = max(1, min(parts, count))
    bounds = [count * k // parts for k in range(parts + 1)]
    return [slice(bounds[k], bounds[k + 1]) for k in range(parts)]


Call = tuple[Callable[..., Any], tuple]


@dataclass(frozen=True)
class Pieces:
    """Independent calls (none reads what another writes), longest first, with each
    one's estimated seconds and their sum (found once: a kept plan runs every run);
    ``native``: the same calls compiled to run without the GIL (``codelets.team``: an
    object whose ``run(threads, others)`` runs them and other such pieces' at once)."""

    calls: tuple[Call, ...]
    seconds: tuple[float, ...]
    native: Any = None
    total: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(self.seconds))


#: Work (in seconds, as estimated) below which pieces run one after another on the calling
#: thread: handing work to a helper and waiting for it costs ~50 us, and split, the
#: MobileNet block's convolutions (~0.2 ms each) made its run 0.80 -> 0.89 ms.
MIN_SPLIT_SECONDS = 400e-6

_GATHERING = threading.local()  # .pieces: what ``run_pieces`` was given in ``gathered``


@contextlib.contextmanager
def gathered() -> Iterator[None]:
    """Pieces given to ``run_pieces`` within the block run together as it ends: a
    compute set's codelet groups (a convolution's vertices with and without a bias) are
    independent as its vertices are, and hand their work to the helpers once instead of
    once each. Not run when the block raises; a nested block's are the outer one's."""
    if getattr(_GATHERING, "pieces", None) is not None:
        yield
        return
    _GATHERING.pieces = given = []
    try:
        yield
    finally:
        _GATHERING.pieces = None
    if given:
        _run_at_once(given)


def run_pieces(pieces: Pieces) -> None:
    """Every call of ``pieces``, on the machine's free cores when there is enough work:
    the caller and the helpers each take the next call until none is left (so the cores
    end together whatever the estimates missed); within ``gathered``, when it ends."""
    given = getattr(_GATHERING, "pieces", None)
    if given is not None:
        given.append(pieces)
    else:
        _run_at_once([pieces])


def _run_at_once(given: list[Pieces]) -> None:
    if all(p.native is not None for p in given):
        on_helper = threading.current_thread().name.startswith(_HELPER_PREFIX)
        given[0].native.run(1 if on_helper else cores(), [p.native for p in given[1:]])
        return
    if len(given) == 1:
        calls: Sequence[Call] = given[0].calls
    else:  # longest first across them all (sorted stably: ties in the order given)
        timed = [(t, call) for p in given for call, t in zip(p.calls, p.seconds, strict=True)]
        calls = [call for _, call in sorted(timed, key=lambda item: -item[0])]
    if len(calls) < 2 or sum(p.total for p in given) < MIN_SPLIT_SECONDS:
        _run(calls)
        return
    left = collections.deque(calls)

    def take() -> None:
        while True:
            try:
                fn, args = left.popleft()
            except IndexError:
                return
            fn(*args)

    run_all([take] * min(allowed(), len(calls)))


def _run(calls: Sequence[Call]) -> None:
    for fn, args in calls:
        fn(*args)

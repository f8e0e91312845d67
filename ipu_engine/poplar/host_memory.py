"""How much of the host's memory a graph needs, checked as variables are added, so that a
graph too large for this machine fails at once with the tensor named, instead of the
operating system killing the process later."""

from __future__ import annotations

import os
import time

from ipu_engine.common.errors import HostMemoryError

# Host bytes per element beyond its value: its tile in the mapping column (int32).
MAPPING_BYTES = 4


def available_bytes() -> int | None:
    """Memory the process can still get: MemAvailable of /proc/meminfo, else the
    physical pages os.sysconf reports as free; None if neither is known."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


# the last reading of available memory: (monotonic time, bytes); graphs add many small
# variables, so /proc/meminfo is read again only when a graph nears half of it, or 1 s on
_last: list[tuple[float, int | None]] = [(-1.0, None)]


def _available_cached() -> int | None:
    now = time.monotonic()
    when, value = _last[0]
    if now - when > 1.0:
        value = available_bytes()
        _last[0] = (now, value)
    return value


def check_fits(name: str, shape: tuple[int, ...], elements: int, elem_size: int, held: int) -> int:
    """Raise ``HostMemoryError`` when a new variable's host bytes (its values when the
    engine loads, and its tile mapping now) do not fit in what is available beside the
    ``held`` bytes the graph's earlier variables will need. Returns the variable's bytes."""
    need = elements * (elem_size + MAPPING_BYTES)
    available = _available_cached()
    if available is None or need + held < available // 2:
        return need
    available = available_bytes()
    if available is not None and need > available - held:
        raise HostMemoryError(
            f"tensor {name!r} of shape {list(shape)} needs {_size(need)} of host memory "
            f"({elements} elements x {elem_size} bytes, plus its tile mapping) but only "
            f"{_size(max(available - held, 0))} of this machine's memory is left for it "
            f"(the graph's other variables need {_size(held)}); use a smaller shape"
        )
    return need


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n} bytes" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"

"""A guard against a reference-counting bug of the installed PySide6 (6.12.0) on CPython 3.11:
its bindings return ``None`` from every void method and ``True`` from ``Signal.emit()``
without taking a reference, as if those objects were immortal (they are from CPython 3.12
on). Each call drops one reference; pyqtgraph makes hundreds of such calls per paint, so
after some thousands of paints ``None`` or ``True`` is freed and the interpreter aborts
("none_dealloc: deallocating None", "bool_dealloc: deallocating True or False").

The guard measures the leak once, on a throw-away QObject, and only where it is found gives
``None``, ``True`` and ``False`` 2**40 spare references each, which no session can use up.
Where they are immortal or PySide6 is fixed, it does nothing.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

SPARE_REFERENCES = 1 << 40


class _Probe(QObject):
    fired = Signal()


def bindings_leak_singletons(calls: int = 16) -> bool:
    """Whether void methods or ``emit()`` drop references of ``None`` or ``True``."""
    probe = _Probe()
    none, true = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(calls):
        probe.setObjectName("probe")
        probe.fired.emit()
    lost_none = none - sys.getrefcount(None)
    lost_true = true - sys.getrefcount(True)
    return max(lost_none, lost_true) >= calls // 2


def guard_singleton_refcounts() -> bool:
    """Apply the guard where the leak is found; returns whether it was applied."""
    if sys.implementation.name != "cpython" or not bindings_leak_singletons():
        return False
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every CPython object.
        ctypes.c_ssize_t.from_address(id(singleton)).value += SPARE_REFERENCES
    return True

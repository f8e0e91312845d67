"""A guard against a reference-counting bug of the installed PySide6 (seen in 6.12.0 on
CPython 3.11): ``SignalInstance.emit()`` returns ``True`` without taking a reference, so
every signal emitted from Python (pyqtgraph emits several per zoom or pan) drops one
reference of ``True``. After some thousands of emits ``True`` is freed and the interpreter
aborts ("bool_dealloc: deallocating True or False"), at the latest when it exits.

The guard measures the leak once, on a throw-away signal, and only where it is found gives
``True`` 2**40 spare references, which no session can use up. Where ``True`` is immortal
(CPython 3.12+) or PySide6 is fixed, it does nothing.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal


class _Probe(QObject):
    fired = Signal()


def emit_leaks_true(emits: int = 16) -> bool:
    """Whether emitting a signal from Python drops references of ``True``."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(emits):
        probe.fired.emit()
    return sys.getrefcount(True) <= before - emits // 2


def guard_true_refcount() -> bool:
    """Apply the guard where the leak is found; returns whether it was applied."""
    if sys.implementation.name != "cpython" or not emit_leaks_true():
        return False
    # ob_refcnt is the first field of every CPython object.
    ctypes.c_ssize_t.from_address(id(True)).value += 1 << 40
    return True

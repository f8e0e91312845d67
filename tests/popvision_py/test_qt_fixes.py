"""The guard against PySide6 dropping references of None and True keeps a long session alive."""

from __future__ import annotations

import sys

import popvision_py.views  # noqa: F401  (applies the guard)
from popvision_py.views.qt_fixes import _Probe


def test_many_void_calls_and_emits_leave_none_and_true_with_references_to_spare():
    probe = _Probe()
    for _ in range(50_000):  # more than None and True had references before the guard
        probe.setObjectName("probe")
        probe.fired.emit()
    assert sys.getrefcount(None) > 1_000_000
    assert sys.getrefcount(True) > 1_000_000

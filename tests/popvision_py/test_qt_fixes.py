"""The guard against PySide6's emit() dropping references of True keeps a long session alive."""

from __future__ import annotations

import sys

import popvision_py.views  # noqa: F401  (applies the guard)
from popvision_py.views.qt_fixes import _Probe


def test_many_emits_leave_true_with_references_to_spare():
    probe = _Probe()
    for _ in range(20_000):  # more than True had references before the guard
        probe.fired.emit()
    assert sys.getrefcount(True) > 1_000_000

"""The Qt binding the window runs on survives a long session: PySide6 6.12.0 dropped a
reference to True on every signal emit (and to None on every timer slot), so a window
aborted with "Fatal Python error: bool_dealloc" after enough of them. Run in a child
process, since the failure is an abort, not an exception."""

from __future__ import annotations

import os
import subprocess
import sys

_LONG_SESSION = r"""
import sys
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal

app = QCoreApplication([])

class Source(QObject):
    changed = Signal()

source, calls = Source(), [0]

def slot():
    calls[0] += 1

source.changed.connect(slot)
before = (sys.getrefcount(True), sys.getrefcount(None))
for _ in range(300_000):
    source.changed.emit()
timer = QTimer()
timer.setInterval(0)
timer.timeout.connect(slot)
timer.start()
while calls[0] < 400_000:
    app.processEvents()
timer.stop()
after = (sys.getrefcount(True), sys.getrefcount(None))
print(calls[0], after[0] - before[0], after[1] - before[1])
"""


def test_signals_and_timers_keep_true_and_none_alive_through_a_long_session() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-c", _LONG_SESSION], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr[-500:]
    calls, true_drift, none_drift = (int(v) for v in result.stdout.split())
    assert calls >= 400_000
    assert abs(true_drift) < 1000 and abs(none_drift) < 1000

"""A box where the user types something to apply with Enter (tiles, a range), and the red
label beside it that says what was wrong: the same in every controls row."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QLabel, QLineEdit

from popvision_py.viewmodels.timeline import RangeError, parse_range
from popvision_py.views.plain_text import plain_tooltip

ERROR_STYLE = "color: #d03030"


def typed_entry(
    placeholder: str, help_text: str, on_enter: Callable[[str], object], width: int = 120
) -> tuple[QLineEdit, QLabel]:
    """The box (Enter calls ``on_enter(text)``) and its error label."""
    box = QLineEdit()
    box.setPlaceholderText(placeholder)
    box.setToolTip(plain_tooltip(help_text))
    box.setClearButtonEnabled(True)
    box.setMinimumWidth(width)
    box.returnPressed.connect(lambda: on_enter(box.text()))
    error = QLabel()
    error.setStyleSheet(ERROR_STYLE)
    return box, error


def read_range(text: str, error: QLabel) -> tuple[float, float] | None:
    """The range typed (``parse_range``), with ``error`` cleared; None with ``error`` saying
    what is wrong."""
    try:
        start, end = parse_range(text)
    except RangeError as problem:
        error.setText(str(problem))
        return None
    error.clear()
    return start, end

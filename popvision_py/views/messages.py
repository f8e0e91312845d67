"""The centred message every page shows in place of a chart or table (no report, a missing
section, a failure)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def message_label(text: str = "") -> QLabel:
    """A centred, wrapped message shown in place of a chart or table."""
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setMargin(24)
    return label

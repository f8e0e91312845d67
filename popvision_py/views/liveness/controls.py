"""The Liveness report's controls row: scope, always-live, Select tile, each explained on hover."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QPushButton, QWidget

from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.typed_entry import typed_entry

SELECT_HELP = (
    "Tiles whose liveness the 'Selected tiles' scope shows: comma-separated tiles and ranges, "
    "e.g. 0,5,100-120, then Enter. The selection is shared with Memory: tiles selected there "
    "show here too."
)


class LivenessControls(QWidget):
    """Widgets only; the view connects them to its view model."""

    selection_typed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope_box = QComboBox()
        self.scope_box.setToolTip(
            "Whose live memory the chart shows: every IPU, one IPU, or the selected tiles "
            "(the parts of the variables mapped to them)."
        )
        self.include_always_live = QCheckBox("Include always-live")
        self.include_always_live.setChecked(True)
        self.include_always_live.setToolTip(
            "Add the always-live variables (live for the whole program: constants, host "
            "streams, variables carried between runs) to every step."
        )
        self.select_box, self.select_error = typed_entry(
            "e.g. 0,5,100-120", SELECT_HELP, self.selection_typed.emit, width=180
        )
        self.reset_zoom = QPushButton("Show all")
        self.reset_zoom.setToolTip("Zoom out to every program step (or double-click the chart).")
        select_label = QLabel("Select tile:")
        select_label.setToolTip(plain_tooltip(SELECT_HELP))
        row = FlowLayout(self)  # wraps: at 1024 px every control keeps its size
        row.addWidget(group(QLabel("Scope:"), self.scope_box))
        row.addWidget(self.include_always_live)
        row.addSpacing(16)
        row.addWidget(group(select_label, self.select_box, self.select_error))
        row.addStretch()
        row.addWidget(self.reset_zoom)

    def set_scopes(self, scopes: list[str], current: str) -> None:
        self.scope_box.blockSignals(True)
        self.scope_box.clear()
        self.scope_box.addItems(scopes)
        self.scope_box.setCurrentText(current)
        self.scope_box.blockSignals(False)

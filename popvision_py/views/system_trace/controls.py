"""The System Trace's controls: search with next/previous, a typed time range, the selection
range, and menus and toggles for channels, tracks (pin, collapse), merging and time base."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from popvision_py.views.typed_entry import typed_entry


class SystemTraceControls(QWidget):
    """Widgets only; the view connects them to its view model."""

    range_typed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Search labels, e.g. epoch")
        self.search_box.setToolTip(
            "Find events whose label contains this text (any case). Enter or Next goes to "
            "the next match in time order, zoomed to it; Previous goes back."
        )
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setMinimumWidth(200)
        self.previous = QPushButton("◀ Previous")
        self.previous.setToolTip("Zoom to the previous match (Shift+Enter in the box)")
        self.next = QPushButton("Next ▶")
        self.next.setToolTip("Zoom to the next match (Enter in the box)")
        self.matches = QLabel("")
        self.range_box, self.range_error = typed_entry(
            "ms from start, e.g. 0.5-2",
            "Show this time range: two numbers in ms from the first event (such as 0.5-2, "
            "0.5..2 or 0.5 to 2). Enter applies. Keys on the chart: W/S zoom, A/D pan, Home all.",
            self.range_typed.emit,
        )
        self.range_box.setMaximumWidth(180)
        # the box's clear button (or deleting the text) shows the whole trace again
        self.range_box.textChanged.connect(lambda text: None if text else self.range_typed.emit(""))
        self.select_range = QPushButton("Select range")
        self.select_range.setCheckable(True)
        self.select_range.setToolTip(
            "Show a draggable range on the timeline: its duration and events are shown here "
            "and the Call Tree sums only what is inside it."
        )
        self.range_info = QLabel("")
        self.range_info.setToolTip("Duration of the selected range and events overlapping it")
        self.channels = QToolButton()
        self.channels.setText("Channels")
        self.channels.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.channels.setToolTip("Show or hide the events of each trace channel")
        self.channel_menu = QMenu(self.channels)
        self.channels.setMenu(self.channel_menu)
        self.tracks = QToolButton()
        self.tracks.setText("Tracks")
        self.tracks.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.tracks.setToolTip(
            "Pin a thread or IPU track to the top, or collapse a process to one summary lane"
        )
        self.track_menu = QMenu(self.tracks)
        self.tracks.setMenu(self.track_menu)
        self.merge_all = QCheckBox("Merge all charts")
        self.merge_all.setToolTip("Draw every thread's events in one flame, a lane per depth")
        self.absolute = QCheckBox("Absolute time")
        self.absolute.setToolTip(
            "Label the time axis with the wall clock (UTC) instead of the time from the first "
            "event; files opened together are aligned on the wall clock either way."
        )
        self.area = QCheckBox("Series as area")
        self.area.setToolTip("Fill the metric series down to zero instead of drawing lines")

        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        for widget in (QLabel("Search:"), self.search_box, self.previous, self.next, self.matches):
            top.addWidget(widget)
        top.addStretch(1)
        for widget in (QLabel("Range:"), self.range_box, self.range_error):
            top.addWidget(widget)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(0, 0, 0, 0)
        for widget in (self.channels, self.tracks, self.merge_all, self.absolute, self.area):
            bottom.addWidget(widget)
        bottom.addStretch(1)
        bottom.addWidget(self.select_range)
        bottom.addWidget(self.range_info)
        rows = QVBoxLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setSpacing(4)
        rows.addLayout(top)
        rows.addLayout(bottom)

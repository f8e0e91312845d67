"""Rail pages whose reports arrive with later work: they say what they will show."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from popvision_py.views.base import ReportView, message_label

PLANNED = {
    "Execution Trace": "The Execution Trace will show each run's program steps on a "
    "timeline per IPU, with the cycles by step kind (compute, exchange, sync).",
}


class PlaceholderView(ReportView):
    """A rail page for a report that is not built yet."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.rail_help = PLANNED[title]
        self.label = message_label(f"{title}\n\n{PLANNED[title]}\n\nThis report is coming soon.")
        self.label.setObjectName("placeholder")
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)

"""Rail pages whose reports arrive with later work: they say what they will show."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from popvision_py.views.base import ReportView, message_label

PLANNED = {
    "Liveness": "The Liveness report will plot the memory live at each program step, "
    "always-live and not-always-live, and list the variables live at a selected step.",
    "Program Tree": "The Program Tree will show the program as written (Sequence, Repeat, "
    "Execute, Copy ...) with the program steps each node lowered to.",
    "Operations": "The Operations summary will list every operation (PopLibs call, layer) "
    "with its code size, cycles, vertices and FLOPs.",
    "System Trace": "The System Trace will show the host trace (.pvti files): host threads, "
    "stream copies and the IPU runs they start, on one timeline.",
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

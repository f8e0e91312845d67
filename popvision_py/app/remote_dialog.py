"""File > Open remote…: the dialog that names a report (or trace) on another machine, as
``ssh://user@host[:port]/path``. It checks the address as it is typed and says what is
wrong in the dialog itself; connecting happens in the window's worker, like any open."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from popvision_py.views.plain_text import plain_label
from profiler_core.errors import RemoteError
from profiler_core.remote import is_remote, parse_location

HOW_IT_CONNECTS = (
    "Connects as ssh does: your SSH agent and ~/.ssh keys, ~/.ssh/config (Host aliases, "
    "User, Port, IdentityFile), and the host's key checked against ~/.ssh/known_hosts. No "
    "password is asked for or kept. Files are fetched as pages need them and cached, so "
    "opening the same report again reads nothing twice."
)


def address_of(host: str, folder: str) -> str:
    """The ssh:// address of ``folder`` on ``host`` (``[user@]host[:port]``, or a whole
    ssh:// address typed into the host box)."""
    host, folder = host.strip(), folder.strip()
    if is_remote(host):
        return host
    if folder.startswith("~"):
        folder = "/" + folder
    elif folder and not folder.startswith("/"):
        folder = "/~/" + folder  # relative to the remote home, as scp reads it
    return f"ssh://{host}{folder}"


class RemoteDialog(QDialog):
    """Host and folder (or a whole address), recent remote reports; ``url()`` once accepted."""

    def __init__(self, recent: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open a report on another machine")
        self.setMinimumWidth(680)
        self.form = form = QFormLayout(self)
        self.recent = QComboBox()
        self.recent.addItem("(recent remote reports)")
        for url in recent:
            self.recent.addItem(url, url)
        self.recent.setEnabled(bool(recent))
        self.recent.setToolTip("Open again a report opened over SSH before.")
        self.recent.currentIndexChanged.connect(self._on_recent)
        form.addRow("Recent", self.recent)
        self.host = QLineEdit()
        self.host.setPlaceholderText("user@host:port, a Host of ~/.ssh/config, or ssh://…")
        self.host.setToolTip("The machine the report is on; the user and port are optional.")
        form.addRow("Host", self.host)
        self.folder = QLineEdit()
        self.folder.setPlaceholderText("/home/me/reports/training  or  ~/reports/training")
        self.folder.setToolTip(
            "The report folder (profile.pop, debug.cbor, *.pvti) on that machine, or a .pvti "
            "or Chrome JSON trace. Only this folder is read."
        )
        form.addRow("Folder", self.folder)
        self.address = plain_label()
        self.address.setToolTip("The address this opens; popvision ADDRESS opens it too.")
        form.addRow("Address", self.address)
        self.problem = plain_label()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #c0392b;")
        form.addRow("", self.problem)
        note = QLabel(HOW_IT_CONNECTS)
        note.setWordWrap(True)
        form.addRow("", note)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        form.addRow(self.buttons)
        self.host.textChanged.connect(self._check)
        self.folder.textChanged.connect(self._check)
        self._check()

    def _on_recent(self, index: int) -> None:
        url = self.recent.itemData(index)
        if url:
            location = parse_location(url)
            self.host.setText(url.split("://", 1)[1].split("/", 1)[0])
            self.folder.setText(location.path)

    def url(self) -> str:
        """The address typed, in its plain form ("" when it is not a valid one)."""
        try:
            return parse_location(address_of(self.host.text(), self.folder.text())).url
        except RemoteError:
            return ""

    def _check(self) -> None:
        """Say what is wrong with the address as it is typed; Open only for a valid one."""
        problem = ""
        if not self.host.text().strip():
            problem = "Name the host."
        elif not self.folder.text().strip() and not is_remote(self.host.text().strip()):
            problem = "Name the report folder on that host."
        else:
            try:
                parse_location(address_of(self.host.text(), self.folder.text()))
            except RemoteError as error:
                problem = error.problem[:1].upper() + error.problem[1:] + "."
        self.address.setText(self.url())
        self.problem.setText(problem)
        self.form.setRowVisible(self.problem, bool(problem))  # no empty gap when all is well
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(not problem)

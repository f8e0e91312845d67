"""The window with reports on another machine (issue 43), against the system's sshd on
loopback: opened over ssh:// (command line, File > Open remote…, the Recent list) through
the window's one open path, the Summary showing the figures the local open shows, a second
open fetching nothing (the server's SFTP log counts), the host killed after the first page
(what was read stays, the rest says why), a refused host key said in a message, the
report's .pvti fetched for the System Trace, and the Recent list's 64 entries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from popvision_py.app.compare_opening import choose_and_compare, compare_paths
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from tests.popvision_py.conftest import wait_loaded
from tests.ssh_server import TestSshd

pytestmark = pytest.mark.usefixtures("ssh_client")


def open_and_settle(qtbot, window: MainWindow, source) -> None:
    """Open ``source`` and wait until debug.cbor (fetched after the first paint) is in."""
    window.open_paths([source])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: not window.after_paint.busy, timeout=20_000)


def summary_rows(window: MainWindow) -> dict[tuple[str, str], str]:
    window.show_view("Summary")
    rows = window.view("Summary").csv_rows()
    return {(r[0], r[1]): r[2] for r in rows[1:]}


def test_a_report_over_ssh_shows_the_figures_of_the_local_open(
    qtbot, window, sshd, tutorial1_report, screenshot_dir
):
    open_and_settle(qtbot, window, tutorial1_report)
    local = summary_rows(window)
    url = sshd.url(tutorial1_report)
    reads = len(sshd.sftp_reads())
    open_and_settle(qtbot, window, url)
    remote = summary_rows(window)
    assert remote.pop(("Program", "Report folder")) == url
    assert local.pop(("Program", "Report folder")) == str(tutorial1_report)
    assert remote == local and len(local) > 40
    assert window.opened[0].report.location == url
    assert window.windowTitle().startswith("engine")
    assert "fetched profile.pop" in window.statusBar().currentMessage()
    assert [Path(n).name for n, _ in sshd.sftp_reads()[reads:]] == ["profile.pop", "debug.cbor"]
    assert not window.opened[0].errors and window.message_box is None
    window.grab().save(str(screenshot_dir / "remote-summary.png"))
    window.show_view("Memory")
    window.grab().save(str(screenshot_dir / "remote-memory.png"))

    window.reload()  # the same report again: listed, nothing read
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: not window.after_paint.busy, timeout=20_000)
    assert len(sshd.sftp_reads()) == reads + 2
    assert "read from the local cache, nothing fetched" in window.statusBar().currentMessage()
    assert window.settings.recent_reports()[0] == url


def test_the_host_killed_after_the_first_page_keeps_what_was_read(
    qtbot, window, tmp_path, monkeypatch, report_copy, screenshot_dir
):
    server = TestSshd(tmp_path / "doomed").start()
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(server.ssh_config))
    window.loader.loaded.connect(lambda _opened: server.kill())  # before debug.cbor comes
    try:
        open_and_settle(qtbot, window, server.url(report_copy))
    finally:
        server.stop()
    opened = window.opened[0]
    assert "was lost, and connecting again failed (" in str(opened.errors["debug"])
    assert window.message_box is not None
    assert "connection to 127.0.0.1 was lost" in window.message_box.text()
    assert "Traceback" not in window.message_box.text()
    assert "was lost" in window.statusBar().currentMessage()
    rows = summary_rows(window)  # every figure of profile.pop is still shown
    assert rows[("Memory", "Largest tile")].startswith("tile 0")
    window.show_view("Operations")
    operations = window.view("Operations")
    assert operations.showing_message()
    assert "connection to 127.0.0.1 was lost" in operations.message.text()
    window.grab().save(str(screenshot_dir / "remote-connection-lost.png"))


def test_open_remote_checks_the_address_and_opens_it(
    qtbot, window, sshd, tutorial1_report, screenshot_dir
):
    window.remote_action.trigger()
    dialog = window.remote_dialog
    open_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Open)
    dialog.host.setText(f"{sshd.user}@127.0.0.1:{sshd.port}")
    assert (
        not open_button.isEnabled()
        and dialog.problem.text() == "Name the report folder on that host."
    )
    dialog.folder.setText(f"{tutorial1_report}/../engine")
    assert not open_button.isEnabled() and "'..'" in dialog.problem.text()
    dialog.folder.setText(str(tutorial1_report))
    assert open_button.isEnabled() and dialog.address.text() == sshd.url(tutorial1_report)
    qtbot.wait(50)  # the layout settles with the problem row hidden
    dialog.grab().save(str(screenshot_dir / "remote-open-dialog.png"))
    qtbot.mouseClick(open_button, Qt.MouseButton.LeftButton)
    wait_loaded(qtbot, window)
    assert window.opened[0].report.location == sshd.url(tutorial1_report)


def test_an_unknown_host_key_is_a_message_and_the_recent_entry_stays(
    qtbot, window, sshd, tmp_path, monkeypatch, tutorial1_report
):
    url = sshd.url(tutorial1_report)
    window.settings.add_recent(url)
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    config = sshd.client_config(tmp_path / "config", known_hosts=empty)
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(config))
    window.open_paths([url])
    wait_loaded(qtbot, window)
    assert window.opened == []
    assert window.message_box.windowTitle() == "Could not open the report"
    text = window.message_box.text()
    assert text.startswith(f"{url}: the authenticity of host [127.0.0.1]:{sshd.port}")
    assert "answer yes" in text and "Traceback" not in text
    assert window.settings.recent_reports() == [url]


def test_the_reports_traces_come_over_ssh_for_the_system_trace(
    qtbot, window, sshd, report_copy, pvti_epochs_trace
):
    shutil.copy(pvti_epochs_trace, report_copy / "host.pvti")
    reads = len(sshd.sftp_reads())
    open_and_settle(qtbot, window, sshd.url(report_copy))
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=30_000)
    trace = window.traces.opened
    assert trace is not None and [f.name for f in trace.files] == ["host.pvti"]
    assert sshd.url(report_copy) not in str(trace.files[0])  # a local copy in the cache
    names = sorted(Path(n).name for n, _ in sshd.sftp_reads()[reads:])
    assert names == ["debug.cbor", "host.pvti", "profile.pop"]

    window.close_report()  # the trace on its own, by its address
    window.open_paths([sshd.url(report_copy / "host.pvti")])
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=30_000)
    assert window.traces.opened is not None
    assert window.settings.recent_reports()[0] == sshd.url(report_copy / "host.pvti")
    assert len(sshd.sftp_reads()) == reads + 3  # from the cache


def test_the_recent_list_keeps_64_newest_first_each_once(
    qtbot, tmp_path, settings_file, sshd, tutorial1_report
):
    settings = AppSettings(make_settings(settings_file))
    for i in range(70):
        settings.add_recent(tmp_path / f"r{i}")
    url = sshd.url(tutorial1_report)
    settings.add_recent(url)
    settings.add_recent(tmp_path / "r60")  # opened again: moves to the top
    settings.add_recent_comparison(tmp_path / "a", url)
    settings.sync()

    again = MainWindow(AppSettings(make_settings(settings_file)))  # the next session
    qtbot.addWidget(again)
    pair = f"{tmp_path / 'a'}\t{url}"
    expected = [pair, str(tmp_path / "r60"), url]
    expected += [str(tmp_path / f"r{i}") for i in [*range(69, 60, -1), *range(59, 7, -1)]]
    assert [e.text for e in again.settings.recent_entries()] == expected
    assert again.settings.recent_comparisons() == [(str(tmp_path / "a"), url)]
    page = again.start_page.recent
    assert page.count() == 64
    assert page.item(0).text() == "a  vs  engine    —    compared"
    assert page.item(2).text() == f"engine    —    {url}"
    again.actions.recent_menu.aboutToShow.emit()
    menu = [a.text() for a in again.actions.recent_menu.actions()]
    assert menu[:3] == [f"{tmp_path / 'a'}  vs  {url}", str(tmp_path / "r60"), url]
    assert menu[-1] == "Clear recent" and len(menu) == 66  # and a separator
    page.itemClicked.emit(page.item(2))  # the remote one opens over SSH
    wait_loaded(qtbot, again)
    assert again.opened[0].report.location == url
    assert [e.text for e in again.settings.recent_entries()][:2] == [url, pair]
    again.close()


def test_a_local_report_compared_with_one_over_ssh(
    qtbot, window, sshd, tutorial1_report, report_copy
):
    url = sshd.url(report_copy)
    compare_paths(window, [tutorial1_report, url])
    wait_loaded(qtbot, window)
    assert [o.report.location for o in window.opened] == [str(tutorial1_report), url]
    window.show_view("Summary")
    summary = window.view("Summary")
    assert summary.value("Memory", "Largest tile", 0) == summary.value("Memory", "Largest tile", 1)
    pair = window.settings.recent_entries()[0]
    assert pair.sources == [str(tutorial1_report), url] and pair.is_remote
    assert window.settings.recent_reports() == []  # the pair, not each side
    compare_dialog = choose_and_compare(window)
    assert compare_dialog.source.text() == str(tutorial1_report)
    compare_dialog.reject()


def test_a_trace_written_outside_the_remote_folder_is_named_not_fetched(
    qtbot, window, sshd, material_traced_report
):
    """The program wrote its .pvti in its working folder, outside the report folder: only
    the folder opened is read, and the System Trace names the trace's own address."""
    (recorded,) = window_free_header_traces(material_traced_report)
    reads = len(sshd.sftp_reads())
    open_and_settle(qtbot, window, sshd.url(material_traced_report))
    window.show_view("System Trace")
    page = window.view("System Trace")
    assert page.showing_message()
    assert sshd.url(recorded) in page.message.text()
    assert "outside its folder" in page.message.text()
    assert all(not n.endswith(".pvti") for n, _ in sshd.sftp_reads()[reads:])


def window_free_header_traces(folder: Path) -> list[str]:
    from profiler_core.report import open_report

    with open_report(folder) as report:
        return list(report.header.traces)

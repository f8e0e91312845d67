"""A report damaged after writing (issue 30): the window names the section that fails its
checksum and still shows the others; a report from before checksums opens with a note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from profiler_core.formats.profile_pop import read_profile
from profiler_core.formats.profile_pop.writer import build_message
from tests.popvision_py.conftest import open_with_file_menu
from tests.profiler_core.checksummed import as_format_1_1


@pytest.fixture
def changed_liveness_report(tmp_path: Path, tutorial4_report: Path) -> Path:
    """Tutorial 4's report with one bit of its liveness data changed in place."""
    folder = tmp_path / "changed"
    shutil.copytree(tutorial4_report, folder)
    path = folder / "profile.pop"
    live = read_profile(path).liveness.step_live_bytes.astype("<i8").tobytes()
    data = bytearray(path.read_bytes())
    assert data.count(live) == 1
    data[data.index(live) + len(live) // 2] ^= 0x04
    path.write_bytes(bytes(data))
    return folder


def test_a_section_failing_its_checksum_is_named_and_the_other_pages_show(
    qtbot, window, changed_liveness_report, monkeypatch
):
    open_with_file_menu(qtbot, window, changed_liveness_report, monkeypatch)
    assert [o.name for o in window.opened] == ["changed"]
    message = window.message_box.text()
    assert "some sections could not be read (liveness)" in message
    assert "damaged: section 'liveness' fails its checksum" in message
    assert str(changed_liveness_report / "profile.pop") in message
    assert "some sections could not be read (liveness)" in window.statusBar().currentMessage()
    window.message_box.close()
    window.show_view("Liveness")
    liveness = window.current_view()
    assert liveness.showing_message()
    assert "damaged: section 'liveness' fails its checksum" in liveness.message.text()
    window.show_view("Memory")  # another page shows its data
    memory = window.current_view()
    assert not memory.showing_message()
    assert memory.select_text("0-3")
    assert memory.breakdown.model.columnCount() == 5
    assert window.view("Summary").value("Target", "Total tiles") == "1,472"


def test_a_report_from_before_checksums_opens_with_a_note(
    qtbot, window, tmp_path, tutorial4_report, monkeypatch
):
    folder = tmp_path / "old"
    shutil.copytree(tutorial4_report, folder)
    path = folder / "profile.pop"
    path.write_bytes(as_format_1_1(build_message(read_profile(path))))
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    assert [o.name for o in window.opened] == ["old"]
    status = window.statusBar().currentMessage()
    assert status.startswith("Opened in ")
    assert f"Note: {path}: written in profile format 1.1, before section checksums" in status
    window.show_view("Liveness")
    assert not window.current_view().showing_message()

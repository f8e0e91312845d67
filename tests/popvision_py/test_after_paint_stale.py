"""The sections decoded after the first paint are said of the reports they were read from:
a decoding of reports replaced meanwhile (File > Compare right after File > Open: the same
folder opened again, by a new reader, the old one closed) must not hand its closed reader's
errors to the reports now shown -- which made the Operations page of report A say "the
program tree section could not be read: the reader was closed"."""

from __future__ import annotations

from types import SimpleNamespace

from popvision_py.app.after_paint import AfterPaintDecoding
from profiler_core.errors import ReportError


def _opened(name: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, errors={}, damaged_summary=lambda: f"{name} is damaged:")


def test_errors_of_reports_no_longer_shown_are_dropped_and_the_shown_ones_kept(qtbot) -> None:
    before, now = [_opened("tutorial4")], [_opened("tutorial4"), _opened("variant")]
    said: list[str] = []
    decoding = AfterPaintDecoding(lambda: now, said.append)
    closed = ReportError("tutorial4/profile.pop", "section 'programs': the reader was closed")
    decoding.loader.loaded.emit((before, {0: {"programs": closed}}))
    assert now[0].errors == {} and said == []
    damaged = ReportError("variant/profile.pop", "section 'graph': checksum mismatch")
    decoding.loader.loaded.emit((now, {1: {"graph": damaged}}))
    assert now[1].errors == {"graph": damaged} and now[0].errors == {}
    assert said and "variant is damaged:" in said[0] and "checksum mismatch" in said[0]

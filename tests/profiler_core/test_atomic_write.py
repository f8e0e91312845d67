"""atomic_write: a report file is the old complete one or the new complete one, never half."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from profiler_core.errors import ReportError
from profiler_core.formats import atomic
from profiler_core.formats.atomic import atomic_write


def _files(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_atomic_write_creates_the_file_with_the_bytes_written(tmp_path):
    target = tmp_path / "profile.pop"
    atomic_write(target, lambda f: f.write(b"abc" * 1000))
    assert target.read_bytes() == b"abc" * 1000
    assert _files(tmp_path) == ["profile.pop"]


def test_atomic_write_goes_through_a_temporary_file_beside_the_target(tmp_path, monkeypatch):
    target = tmp_path / "profile.pop"
    seen = {}
    real_replace = os.replace

    def spy_replace(src, dst):
        seen["src"], seen["dst"] = os.fspath(src), os.fspath(dst)
        seen["content"] = Path(src).read_bytes()  # complete before the rename
        seen["target existed"] = os.path.exists(dst)
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spy_replace)
    atomic_write(target, lambda f: f.write(b"new content"))
    temp = os.path.basename(seen["src"])
    assert os.path.dirname(seen["src"]) == str(tmp_path)
    assert temp.startswith(".profile.pop.") and temp.endswith(".tmp")
    assert seen["dst"] == str(target)
    assert seen["content"] == b"new content"
    assert seen["target existed"] is False
    assert _files(tmp_path) == ["profile.pop"]


def test_atomic_write_fsyncs_before_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(
        atomic.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))
    )
    atomic_write(tmp_path / "debug.cbor", lambda f: f.write(b"x"))
    assert events.index("fsync") < events.index("replace")


def test_a_writer_failing_midway_leaves_the_old_file_intact_and_no_temp(tmp_path):
    target = tmp_path / "profile.pop"
    target.write_bytes(b"old complete file")

    def write_half_then_fail(f):
        f.write(b"new but only half")
        raise RuntimeError("engine crashed while writing")

    with pytest.raises(RuntimeError, match="engine crashed"):
        atomic_write(target, write_half_then_fail)
    assert target.read_bytes() == b"old complete file"
    assert _files(tmp_path) == ["profile.pop"]


def test_an_os_error_midway_becomes_a_report_error_and_cleans_up(tmp_path, monkeypatch):
    target = tmp_path / "profile.pop"
    target.write_bytes(b"old")

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", disk_full)
    with pytest.raises(ReportError, match="No space left on device") as caught:
        atomic_write(target, lambda f: f.write(b"new"))
    assert caught.value.path == target
    assert str(caught.value).startswith(str(target))
    assert target.read_bytes() == b"old"
    assert _files(tmp_path) == ["profile.pop"]


def test_a_failed_rename_leaves_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "profile.pop"

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(atomic.os, "replace", refuse)
    with pytest.raises(ReportError, match="Permission denied"):
        atomic_write(target, lambda f: f.write(b"new"))
    assert _files(tmp_path) == []


def test_a_missing_directory_raises_report_error_naming_path_and_reason(tmp_path):
    target = tmp_path / "no such dir" / "profile.pop"
    with pytest.raises(ReportError) as caught:
        atomic_write(target, lambda f: f.write(b"x"))
    assert caught.value.path == target
    assert "No such file or directory" in str(caught.value)


def test_a_directory_under_a_file_raises_report_error(tmp_path):
    (tmp_path / "plain file").write_bytes(b"")
    with pytest.raises(ReportError, match="Not a directory"):
        atomic_write(tmp_path / "plain file" / "profile.pop", lambda f: f.write(b"x"))


def test_writing_over_a_directory_raises_report_error_and_cleans_up(tmp_path):
    (tmp_path / "profile.pop").mkdir()
    with pytest.raises(ReportError, match="profile.pop"):
        atomic_write(tmp_path / "profile.pop", lambda f: f.write(b"x"))
    assert _files(tmp_path) == ["profile.pop"]


def test_replacing_keeps_a_reader_of_the_old_file_whole(tmp_path):
    target = tmp_path / "profile.pop"
    target.write_bytes(b"old" * 100)
    with open(target, "rb") as reader:
        atomic_write(target, lambda f: f.write(b"new" * 100))
        assert reader.read() == b"old" * 100  # the old inode is untouched
    assert target.read_bytes() == b"new" * 100


def test_the_new_file_gets_ordinary_permissions_from_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "profile.pop", lambda f: f.write(b"x"))
    finally:
        os.umask(old)
    assert (tmp_path / "profile.pop").stat().st_mode & 0o777 == 0o644

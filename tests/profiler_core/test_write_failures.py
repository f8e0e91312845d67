"""Writes that cannot finish (a full disk, a file size limit, a killed writer) never pass as
done and never leave half a file or stray temporary files behind."""

from __future__ import annotations

import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.atomic import atomic_write
from profiler_core.formats.profile_pop import read_profile, write_profile
from tests.profiler_core.factories import make_report


def _limit_file_size(size: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def test_cli_output_into_a_full_device_is_exit_4_not_success(tutorial4_report):
    with open("/dev/full", "w") as full:
        result = subprocess.run(
            [sys.executable, "-m", "profiler_core.cli", "memory", str(tutorial4_report), "--csv"],
            stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    assert result.returncode == 4
    assert (
        result.stderr.strip() == "popvision-cli: cannot write the output: No space left on device"
    )


def test_cli_output_cut_by_a_file_size_limit_is_exit_4(tmp_path, tutorial4_report):
    target = tmp_path / "memory.csv"
    with open(target, "w") as out:
        result = subprocess.run(
            [sys.executable, "-m", "profiler_core.cli", "memory", str(tutorial4_report), "--csv"],
            stdout=out, stderr=subprocess.PIPE, text=True, timeout=120,
            preexec_fn=_limit_file_size(4096),
        )  # fmt: skip
    assert result.returncode == 4, result.stderr
    assert "cannot write the output: File too large" in result.stderr
    assert target.stat().st_size == 4096  # what is there is known to be incomplete


_WRITE_UNDER_LIMIT = r"""
import sys
from pathlib import Path
from profiler_core.errors import ReportError
from profiler_core.formats.profile_pop import write_profile
from tests.profiler_core.factories import make_report
try:
    write_profile(Path(sys.argv[1]), make_report(3)[0])
except ReportError as error:
    print(error)
"""


def test_a_profile_cut_by_a_file_size_limit_is_a_report_error_and_the_old_file_stays(tmp_path):
    path = tmp_path / "profile.pop"
    write_profile(path, make_report(7)[0])
    old = path.read_bytes()
    result = subprocess.run(
        [sys.executable, "-c", _WRITE_UNDER_LIMIT, str(path)],
        capture_output=True, text=True, timeout=120, preexec_fn=_limit_file_size(1024),
        cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{path}: cannot write: File too large"
    assert path.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profile.pop"]


def test_temporary_files_of_dead_writers_go_at_the_next_write_live_ones_stay(tmp_path):
    path = tmp_path / "debug.cbor"
    abandoned = tmp_path / ".debug.cbor.0123456789ab.tmp"
    abandoned.write_bytes(b"half a file")
    busy = tmp_path / ".debug.cbor.ba9876543210.tmp"
    busy.write_bytes(b"being written")
    other = tmp_path / ".profile.pop.0123456789ab.tmp"  # another file's: not ours to judge
    other.write_bytes(b"x")
    with open(busy, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # a live writer holds its lock
        atomic_write(path, lambda file: file.write(b"new"))
    assert path.read_bytes() == b"new"
    assert not abandoned.exists()
    assert busy.exists() and other.exists()


_WRITE_FOREVER = r"""
import sys
from pathlib import Path
from profiler_core.formats.profile_pop import write_profile
from tests.profiler_core.factories import make_report
profiles = [make_report(seed)[0] for seed in (1, 2)]
print("ready", flush=True)
i = 0
while True:
    write_profile(Path(sys.argv[1]), profiles[i % 2])
    i += 1
"""


def test_killing_a_writer_at_any_moment_leaves_a_complete_report(tmp_path):
    path = tmp_path / "profile.pop"
    expected = {}
    for seed in (1, 2):
        write_profile(path, make_report(seed)[0])
        expected[path.read_bytes()] = seed
    for attempt in range(12):
        child = subprocess.Popen(
            [sys.executable, "-c", _WRITE_FOREVER, str(path)],
            stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parents[2],
        )  # fmt: skip
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(0.01 + 0.013 * attempt)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
        assert path.read_bytes() in expected  # the old file or a complete new one
        read_profile(path)
    write_profile(path, make_report(1)[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["profile.pop"]


def test_report_error_for_an_unwritable_folder_names_it(tmp_path):
    blocker = tmp_path / "reports"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(ReportError, match="cannot write") as caught:
        write_profile(blocker / "profile.pop", make_report(1)[0])
    assert caught.value.path == blocker / "profile.pop"
    assert json.dumps(str(caught.value))  # one readable line
    assert os.listdir(tmp_path) == ["reports"]

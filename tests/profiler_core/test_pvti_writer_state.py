"""A .pvti says how its writing ended (meta ``writer_state``, format 1.1), so a trace whose
writer was killed mid-run or failed (a file size limit) is never read as a complete one:
``Trace.warnings``, ``popvision-cli trace`` (warning lines, exit 5) and the window agree."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from profiler_core import pva
from profiler_core.cli import main
from profiler_core.formats.pvti import PvtiWriter, read_pvti
from profiler_core.trace import open_trace

ROOT = Path(__file__).resolve().parents[2]

#: Writes 1,000,000 one-nanosecond spans under a 1 MiB file size limit, then closes.
LIMITED = textwrap.dedent(
    """
    import resource, sys
    from profiler_core.formats.pvti import PvtiWriter
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    writer = PvtiWriter(sys.argv[1], background=False)
    o = writer.origin_monotonic_ns
    for i in range(1_000_000):
        writer.add_span(1, "c", "s", o + i, o + i + 1)
    writer.close()
    print(writer.path, writer.committed_events, writer.dropped_events, flush=True)
    """
)

#: Commits two spans, then is killed before it can close the file.
KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from profiler_core.formats.pvti import PvtiWriter
    writer = PvtiWriter(sys.argv[1], background=False)
    o = writer.origin_monotonic_ns
    writer.add_span(1, "c", "first", o, o + 10)
    writer.add_span(1, "c", "second", o + 20, o + 30)
    writer.flush()
    print(writer.path, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _child(script: str, directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", script, str(directory)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_closed_trace_has_no_warning(tmp_path: Path) -> None:
    with PvtiWriter(tmp_path, background=False) as writer:
        writer.add_span(1, "c", "s", writer.origin_monotonic_ns, writer.origin_monotonic_ns + 5)
    assert read_pvti(writer.path).meta.writer_state == "closed"
    assert open_trace(writer.path).warnings == ()


def test_a_trace_whose_writer_was_killed_says_it_ended_abruptly(tmp_path: Path, capsys) -> None:
    done = _child(KILLED, tmp_path)
    assert done.returncode == -signal.SIGKILL, done.stderr
    path = Path(done.stdout.split()[0])
    trace = open_trace(path)
    assert [trace.label_of(i) for i in range(len(trace))] == ["first", "second"]
    (warning,) = trace.warnings
    assert warning.startswith(f"{path.name}: incomplete: its writer never closed it")
    assert "killed" in warning
    assert main(["trace", str(path)]) == 5
    err = capsys.readouterr().err
    assert err == f"popvision-cli: warning: {warning}\n"


def test_a_trace_written_under_a_file_size_limit_says_its_writer_failed(tmp_path: Path) -> None:
    # The case: "959,999 events were not written", yet the file opened as a
    # complete trace of 0 events.
    done = _child(LIMITED, tmp_path)
    assert done.returncode == 0, done.stderr
    path_text, committed, dropped = done.stdout.split()
    path, committed, dropped = Path(path_text), int(committed), int(dropped)
    assert dropped > 0 and committed + dropped <= 1_000_000
    assert os.path.getsize(path) <= 1 << 20
    trace = open_trace(path)
    assert len(trace) == committed  # every committed event, nothing more
    (warning,) = trace.warnings
    assert warning.startswith(f"{path.name}: incomplete: its writer failed (")
    assert f"{dropped:,} events were not written" in warning


def test_pva_says_the_same_as_the_cli_for_a_killed_writer(tmp_path: Path) -> None:
    done = _child(KILLED, tmp_path)
    path = Path(done.stdout.split()[0])
    with pytest.warns(pva.PartialTraceWarning, match="its writer never closed it"):
        opened = pva.openTrace(path)
    assert opened.warnings == list(open_trace(path).warnings)
    assert [e.label for t in opened.processes[0].threads for e in t.events] == ["first", "second"]


def test_a_trace_with_open_spans_says_so_the_same_way_in_every_place(
    tmp_path: Path, capsys
) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    o = writer.origin_monotonic_ns
    writer.open_spans_source = lambda: [(1, "c", "epoch", o, 0)]  # still running
    writer.add_span(1, "c", "step", o + 5, o + 10, depth=1)
    writer.flush()
    expected = [
        f"{writer.path.name}: incomplete: its writer never closed it (the program is still "
        "running, or was killed or stopped abruptly): what happened after its last commit is "
        "missing",
        "incomplete: 1 span(s) were still open at the last commit (the program was running or "
        "stopped without closing them); they end there",
    ]
    assert open_trace(writer.path).partial_warnings() == expected
    with pytest.warns(pva.PartialTraceWarning):
        assert pva.openTrace(writer.path).warnings == expected
    assert main(["trace", "--json", str(writer.path)]) == 5
    out, err = capsys.readouterr()
    assert json.loads(out)["warnings"] == expected
    assert err == "".join(f"popvision-cli: warning: {w}\n" for w in expected)
    writer.close()

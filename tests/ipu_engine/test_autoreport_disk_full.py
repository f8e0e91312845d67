"""A full disk while autoReport writes: the user's program goes on with the same results and
a warning naming the report file, whether the first write (at load) or a later one (after a
run) is the one that fails; no temporary files are left behind."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest

from profiler_core.formats.profile_pop import read_profile
from tests.conftest import EXAMPLES


def _run_tutorial4(
    directory, limit: int | None = None, **options: str
) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps(
        {"autoReport.all": "true", "autoReport.directory": str(directory), **options}
    )

    def limit_file_size() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, str(EXAMPLES / "tutorial4_matmul.py")],
        env=env, capture_output=True, text=True, timeout=600, preexec_fn=limit_file_size,
    )  # fmt: skip


@pytest.fixture(scope="module")
def unlimited(tmp_path_factory):
    """The run without a limit, and the sizes of its profile.pop as written at load (the
    compile profile alone) and after the run (with the execution profile)."""
    directory = tmp_path_factory.mktemp("unlimited")
    result = _run_tutorial4(directory)
    assert result.returncode == 0, result.stderr
    compiled = tmp_path_factory.mktemp("compile_only")
    options = {"autoReport.outputExecutionProfile": "false"}
    assert _run_tutorial4(compiled, **options).returncode == 0
    sizes = [(d / "tutorial4" / "profile.pop").stat().st_size for d in (compiled, directory)]
    assert sizes[0] < sizes[1]
    return result, sizes


@pytest.mark.parametrize("room", ["none", "the load's write only"])
def test_a_full_disk_is_a_warning_and_the_results_are_unchanged(tmp_path, unlimited, room):
    reference, (at_load, after_run) = unlimited
    limit = 2048 if room == "none" else (at_load + after_run) // 2
    result = _run_tutorial4(tmp_path, limit)
    assert result.returncode == 0, result.stderr
    assert result.stdout == reference.stdout  # the program's own output, results included
    report = tmp_path / "tutorial4"
    assert "ReportWriteWarning" in result.stderr
    assert f"{report / 'profile.pop'}: cannot write: File too large" in result.stderr
    assert not [p for p in report.iterdir() if p.name.endswith(".tmp")]
    if room != "none":  # the compile profile written at load is still there, whole
        profile = read_profile(report / "profile.pop")
        assert profile.execution is None and profile.graph.num_variables > 0

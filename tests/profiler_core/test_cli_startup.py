"""Each popvision-cli command imports what it uses and no more: ``sql`` over Parquet reads no
report (no profile.pop reader, no Dask), ``summary`` starts without pyarrow, DuckDB and Dask,
``--help`` without numpy. Checked in a fresh interpreter by the modules it holds at exit, as
a user's command starts: what a command does not import it cannot spend start-up time on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiler_core.cli import main
from tests.profiler_core.many_reports import write_fake_sweep, write_report

ROOT = Path(__file__).resolve().parents[2]
_CHILD = r"""
import json, sys
from profiler_core.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as done:  # --help
    code = done.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""
READERS = "profiler_core.formats.profile_pop"


def _modules(*argv: object) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    last = json.loads(done.stderr.strip().splitlines()[-1])
    assert last["code"] in (0, None), done.stderr
    return set(last["modules"])


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("startup")
    write_fake_sweep(folder / "sweep", {"batch": ["1", "2"]}, over=set())
    assert main(["export", "--parquet", str(folder / "pq"), str(folder / "sweep")]) == 0
    return folder / "pq"


def test_sql_over_parquet_reads_no_report(parquet: Path) -> None:
    modules = _modules("sql", "SELECT count(*) AS n FROM reports", parquet)
    assert "duckdb" in modules  # the command ran its query
    assert READERS not in modules
    assert not any(m == "dask" or m.startswith("dask.") for m in modules)
    assert "profiler_core.remote" not in modules


def test_summary_starts_without_the_many_runs_libraries(tmp_path: Path) -> None:
    report = write_report(tmp_path / "r", seed=1)
    modules = _modules("summary", report)
    assert READERS in modules  # it read the report
    for heavy in ("duckdb", "pyarrow", "dask", "distributed"):
        assert heavy not in modules, heavy


def test_help_imports_no_numpy() -> None:
    modules = _modules("--help")
    assert "numpy" not in modules
    assert "profiler_core.cli.parser" in modules


def test_trace_of_a_local_file_reads_no_report(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('[{"ph":"X","name":"a","ts":1,"dur":2,"pid":1,"tid":1}]')
    modules = _modules("trace", path)
    assert "profiler_core.trace.json_typed" in modules  # it read the trace
    assert READERS not in modules and "capnp" not in modules
    assert "profiler_core.remote.report" not in modules

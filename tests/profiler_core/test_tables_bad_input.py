"""Bad input to runs, sql and export: a damaged report is its row saying so while the rest
load; a folder without reports, SQL that is not a SELECT, a query reaching for other files,
a query that runs long (a timeout, Ctrl+C), Parquet of another schema and an output that
cannot be written are one clear line each, with nothing lost and nothing written elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from profiler_core.cli import main
from profiler_core.tables import report_tables
from profiler_core.tables import sql as sql_module
from tests.profiler_core.checksummed import flip
from tests.profiler_core.factories import make_report
from tests.profiler_core.many_reports import write_fake_sweep, write_report


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def folder(tmp_path):
    """Four synthetic reports; r1's profile.pop is garbage, r2's is cut short and r3's
    liveness section fails its checksum."""
    root = tmp_path / "reports"
    for i in range(4):
        write_report(root / f"r{i}", seed=i)
    (root / "r1" / "profile.pop").write_bytes(b"not a report at all" * 10)
    whole = (root / "r2" / "profile.pop").read_bytes()
    (root / "r2" / "profile.pop").write_bytes(whole[: len(whole) // 2])
    live = make_report(3)[0].liveness.step_live_bytes.astype("<i8")
    flip(root / "r3" / "profile.pop", live.tobytes(), at=8 * 3)
    return root


def test_a_damaged_report_is_its_row_saying_so_and_the_rest_load(capsys, folder):
    code, out, err = cli(capsys, "runs", "--json", folder)
    assert code == 5  # done, but the input is partial
    rows = {r["report"]: r for r in json.loads(out)["runs"]}
    assert list(rows) == ["r0", "r1", "r2", "r3"]
    assert rows["r0"]["error"] is None and rows["r0"]["total_cycles"] > 0
    for broken in ("r1", "r2"):
        assert rows[broken]["error"].startswith(str(folder / broken / "profile.pop"))
        assert rows[broken]["total_cycles"] is None
        assert f"popvision-cli: warning: {broken}: {rows[broken]['error']}" in err
    assert rows["r3"]["error"] is None  # only its liveness is lost
    assert rows["r3"]["peak_live_bytes"] is None and rows["r3"]["total_cycles"] > 0
    assert "section 'liveness' fails its checksum" in rows["r3"]["warnings"]
    tables = report_tables([folder])
    assert set(tables["liveness_steps"].column("report").to_pylist()) == {"r0"}
    assert set(tables["runs"].column("report").to_pylist()) == {"r0", "r3"}
    warnings = tables["reports"].column("warnings")[3].as_py()
    assert warnings.count("section 'liveness' fails its checksum") == 1  # said once


def test_a_sweeps_failed_run_is_a_row_with_the_runs_error(capsys, tmp_path):
    out = tmp_path / "sweep"
    write_fake_sweep(out, {"batch": ["1", "2", "4"]}, failed={"batch=4"})
    code, text, err = cli(capsys, "runs", "--json", out)
    assert code == 0, err  # a failed run is a result, not damaged input
    rows = json.loads(text)["runs"]
    assert [(r["report"], r["batch"]) for r in rows] == [
        ("batch=1/report", 1),
        ("batch=2/report", 2),
        ("batch=4", 4),
    ]
    assert rows[2]["error"] == "Out of memory on tile 3: 700,000 bytes used"
    tables = report_tables([out])
    assert tables["tile_memory"].column_names[:3] == ["report", "sweep_run", "batch"]
    assert set(tables["tile_memory"].column("batch").to_pylist()) == {1, 2}


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("empty", "holds no report (no profile.pop in or below it)"),
        ("nowhere", "no such file or folder"),
    ],
)
def test_a_folder_without_reports_is_a_clear_error(capsys, tmp_path, path, words):
    (tmp_path / "empty").mkdir()
    code, _, err = cli(capsys, "runs", tmp_path / path)
    assert code == 2
    assert err == f"popvision-cli: {tmp_path / path}: {words}\n"


def test_a_damaged_sweep_record_is_named(capsys, tmp_path):
    (tmp_path / "sweep.json").write_text("{not json")
    code, _, err = cli(capsys, "runs", tmp_path)
    assert code == 2 and err.startswith(f"popvision-cli: {tmp_path / 'sweep.json'}: is not JSON")


@pytest.mark.parametrize(
    "query",
    [
        "DROP VIEW reports",
        "CREATE TABLE t AS SELECT 1",
        "INSERT INTO reports SELECT * FROM reports",
        "COPY reports TO 'copied.csv'",
        "ATTACH 'other.duckdb'",
        "SET enable_external_access=true",
        "PRAGMA version",
        "SELECT 1; DROP VIEW reports",
    ],
)
def test_sql_that_is_not_one_select_is_refused(capsys, folder, tmp_path, monkeypatch, query):
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli(capsys, "sql", query, folder / "r0")
    assert code == 2 and out == ""
    assert "only a SELECT can run" in err or "give one query, not 2" in err
    assert sorted(tmp_path.rglob("*")) == before


def test_a_select_cannot_reach_other_files(capsys, folder, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    code, _, err = cli(capsys, "sql", f"SELECT * FROM read_csv('{secret}')", folder / "r0")
    assert code == 2
    assert "file system operations are disabled by configuration" in err


LONG = "SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b"


def test_a_long_query_stops_at_its_timeout(capsys, folder):
    started = time.monotonic()
    code, _, err = cli(capsys, "sql", LONG, folder / "r0", "--timeout", "0.5")
    assert time.monotonic() - started < 5
    assert code == 2
    assert err == "popvision-cli: the query was stopped: it ran past the timeout of 0.5 s\n"


def test_a_long_query_stops_on_ctrl_c(capsys, folder, monkeypatch):
    """Ctrl+C (SIGINT to this process, as a terminal sends it) half a second into the query."""
    wakeup = sql_module._ctrl_c_wakeup
    running = threading.Event()

    @contextlib.contextmanager
    def noted() -> object:
        with wakeup() as reader:
            running.set()
            yield reader

    def press_ctrl_c() -> None:
        if running.wait(60):
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(sql_module, "_ctrl_c_wakeup", noted)
    threading.Thread(target=press_ctrl_c, daemon=True).start()
    started = time.monotonic()
    code, out, err = cli(capsys, "sql", LONG, folder / "r0")
    assert running.is_set()
    assert time.monotonic() - started < 10
    assert (code, out, err) == (130, "", "popvision-cli: interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back


def test_parquet_of_another_schema_is_refused(capsys, folder, tmp_path):
    out = tmp_path / "pq"
    assert cli(capsys, "export", "--parquet", out, folder / "r0")[0] == 0
    table = pq.read_table(out / "reports.parquet")
    changed = table.replace_schema_metadata({b"popvision.schema_version": b"2.0"})
    pq.write_table(changed, out / "reports.parquet")
    code, _, err = cli(capsys, "sql", "SELECT count(*) FROM reports", out)
    assert code == 2
    assert "holds tables of schema 2.0; this popvision-cli reads 1.0" in err
    pq.write_table(pa.table({"a": [1]}), out / "reports.parquet")
    code, _, err = cli(capsys, "sql", "SELECT count(*) FROM reports", out)
    assert code == 2 and "has no popvision schema version" in err


def test_an_export_that_cannot_be_written_says_so_and_writes_nothing_else(capsys, folder, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    before = sorted(tmp_path.rglob("*"))
    code, _, err = cli(capsys, "export", "--parquet", blocker / "out", folder / "r0")
    assert code == 2
    assert err.startswith(f"popvision-cli: {blocker / 'out'}: cannot be made")
    assert sorted(tmp_path.rglob("*")) == before

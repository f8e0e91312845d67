"""The tables over many reports say what the per-report commands say about each report:
``sql`` over tile_memory is ``memory --csv``, liveness_steps is ``liveness``, operations is
``operations --group-by G`` for every G, runs is ``execution``'s runs, program_steps adds
up to ``execution``'s cycles by step kind; and the Parquet that ``export`` writes is read
back, by pyarrow and by DuckDB on their own, as the same rows."""

from __future__ import annotations

import csv
import io
import json
import shutil

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from profiler_core.analysis.operations import OPERATION_GROUPINGS
from profiler_core.cli import main
from profiler_core.report import open_report
from profiler_core.tables import SCHEMA_VERSION, TABLES, report_tables

NAMES = ("tutorial4", "variant", "tutorial1")


@pytest.fixture(scope="module")
def folder(tmp_path_factory, tutorial4_report, tutorial4_variant_report, tutorial1_report):
    """Three engine-made reports in one folder, as a user collects them."""
    root = tmp_path_factory.mktemp("many") / "reports"
    for name, report in zip(NAMES, (tutorial4_report, tutorial4_variant_report,
                                    tutorial1_report), strict=True):  # fmt: skip
        shutil.copytree(report, root / name)
    return root


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_runs_is_summary_of_each_report(capsys, folder):
    rows = json.loads(cli(capsys, "runs", "--json", folder))["runs"]
    assert [r["report"] for r in rows] == sorted(NAMES, key=lambda n: n.lower())
    for row in rows:
        s = json.loads(cli(capsys, "summary", "--json", folder / row["report"]))
        assert row["total_cycles"] == sum(r["cycles"] for r in s["runs"])
        assert row["peak_live_bytes"] == s["peak_live_bytes"]
        assert row["fullest_tile_bytes"] == s["memory"]["largest_tile_bytes"]
        assert row["tiles_over"] == s["memory"]["tiles_over_limit"]
        assert row["fits"] is (s["memory"]["tiles_over_limit"] == 0 and not s["out_of_memory"])
        assert row["warnings"] == "" and row["error"] is None


@pytest.mark.parametrize("name", NAMES)
def test_sql_over_tile_memory_is_memory_csv(capsys, folder, name):
    query = (
        "SELECT * EXCLUDE (report, total_excluding_gaps) FROM tile_memory "
        f"WHERE report = '{name}' ORDER BY tile"
    )
    assert cli(capsys, "sql", query, folder, "--csv") == cli(capsys, "memory", "--csv",
                                                              folder / name)  # fmt: skip


def test_sql_over_liveness_steps_is_liveness(capsys, folder):
    for name in NAMES:
        expected = json.loads(cli(capsys, "liveness", "--json", folder / name))["steps"]
        query = f"SELECT * EXCLUDE (report) FROM liveness_steps WHERE report='{name}' ORDER BY step"
        assert json.loads(cli(capsys, "sql", query, folder, "--json"))["query"] == expected


def test_the_operations_table_holds_every_grouping_of_operations(capsys, folder):
    for name in ("tutorial4", "tutorial1"):
        for group_by in OPERATION_GROUPINGS:
            out = cli(capsys, "operations", "--json", "--group-by", group_by, folder / name)
            expected = json.loads(out)[f"operations_by_{group_by}"]
            for row in expected:  # the label column is the grouping's name in the command
                label = row.pop(group_by)
                row["operation"] = "" if label in ("(none)", "(no phase)") else label
                for phase in [k for k in row if k.startswith(("cycles_in_", "cycles_outside"))]:
                    row.pop(phase)  # a column per phase: the rows grouped by phase say it
            query = (
                "SELECT * EXCLUDE (report, group_by) FROM operations "
                f"WHERE report='{name}' AND group_by='{group_by}'"
            )
            rows = json.loads(cli(capsys, "sql", query, folder, "--json"))["query"]
            assert rows == [{"operation": r.pop("operation"), **r} for r in expected]


def test_runs_and_program_steps_add_up_to_execution(capsys, folder):
    checked = 0
    for name in NAMES:
        execution = json.loads(cli(capsys, "execution", "--json", folder / name))
        query = f"SELECT * EXCLUDE (report) FROM runs WHERE report='{name}' ORDER BY run"
        assert json.loads(cli(capsys, "sql", query, folder, "--json"))["query"] == execution["runs"]
        if len(execution["runs"]) != 1:
            continue
        by_kind = next(v for k, v in execution.items() if k.endswith("by_step_kind"))
        query = (
            "SELECT kind, sum(executions) AS executions, sum(total_cycles) AS cycles FROM "
            f"program_steps WHERE report='{name}' AND executions > 0 GROUP BY kind"
        )
        sums = {
            r["kind"]: r for r in json.loads(cli(capsys, "sql", query, folder, "--json"))["query"]
        }
        for row in by_kind:
            assert sums[row["kind"]]["executions"] == row["executions"]
            assert sums[row["kind"]]["cycles"] == row["cycles"]
        assert set(sums) == {row["kind"] for row in by_kind}
        checked += 1
    assert checked >= 2


def test_export_writes_parquet_that_pyarrow_and_duckdb_read_back(capsys, folder, tmp_path):
    out = tmp_path / "parquet"
    cli(capsys, "export", "--parquet", out, folder)
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{t}.parquet" for t in TABLES)
    made = report_tables([folder])
    for table in TABLES:
        read = pq.read_table(out / f"{table}.parquet")
        assert read.equals(made[table])
        meta = pq.read_schema(out / f"{table}.parquet").metadata
        assert meta[b"popvision.schema_version"] == SCHEMA_VERSION.encode()
        assert meta[b"popvision.table"] == table.encode()
    # DuckDB on its own, against numpy over each report's memory section
    connection = duckdb.connect()
    sql = (
        "SELECT report, count(*) AS tiles, sum(total)::BIGINT AS bytes, max(total)::BIGINT AS "
        f"fullest FROM read_parquet('{out}/tile_memory.parquet') GROUP BY report ORDER BY report"
    )
    rows = connection.sql(sql).fetchall()
    for report, tiles, total, fullest in rows:
        per_tile = open_report(folder / report).memory.by_category.sum(axis=0)
        assert (tiles, total, fullest) == (len(per_tile), int(per_tile.sum()), int(per_tile.max()))
    assert [r[0] for r in rows] == sorted(NAMES)


def test_the_python_api_gives_arrow_tables(folder):
    tables = report_tables([folder], ["reports", "liveness_steps"])
    assert list(tables) == ["reports", "liveness_steps"]
    reports = tables["reports"]
    assert reports.column_names[:3] == ["report", "path", "program"]
    peak = np.asarray(reports.column("peak_live_bytes"))
    live = tables["liveness_steps"]
    for name, expected in zip(reports.column("report").to_pylist(), peak, strict=True):
        rows = np.asarray(live.filter(live.column("report").to_numpy(False) == name)
                          .column("live_bytes"))  # fmt: skip
        assert rows.max() == expected  # the peak is the largest step's live bytes
    with pytest.raises(Exception, match="no table 'memory'"):
        report_tables([folder], ["memory"])


def test_csv_of_runs_has_one_line_per_report(capsys, folder):
    rows = list(csv.DictReader(io.StringIO(cli(capsys, "runs", "--csv", folder))))
    assert [r["report"] for r in rows] == ["tutorial1", "tutorial4", "variant"]
    assert all(r["fits"] == "True" for r in rows)

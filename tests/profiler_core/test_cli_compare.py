"""``popvision-cli compare`` of tutorial 4 and its variant: the operations, variables and
program steps tables (text, --json and --csv) are those of a plain Python dict join of the
decoded names, though the command matches string-table ids with numpy and decodes keys only
as it writes them."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from profiler_core.analysis.operations import operations_table
from profiler_core.analysis.program_tree import program_tree
from profiler_core.cli import main
from profiler_core.cli.tables import Table, render_text
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.profiler_core.test_matching import dict_join


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def reference_tables(a, b, group_by: str) -> list[Table]:
    """Operations by ``group_by``, variables and program steps as the old dict-based join made them:
    every name decoded, repeats numbered, "" shown as "(none)"."""
    tables = []

    def joined(name, names, columns):
        table: dict = {}
        for column in columns:
            keys, in_a, in_b, va, vb = dict_join(
                names[0], columns[column][0].tolist(), names[1], columns[column][1].tolist()
            )
            table.setdefault("key", [k or "(none)" for k in keys])
            table.setdefault("in_a", np.array(in_a))
            table.setdefault("in_b", np.array(in_b))
            table[f"{column}_a"] = np.array(va, dtype=np.int64)
            table[f"{column}_b"] = np.array(vb, dtype=np.int64)
            table[f"{column}_diff"] = table[f"{column}_b"] - table[f"{column}_a"]
        tables.append(Table(name, table))

    ops = [operations_table(r, group_by) for r in (a, b)]
    shown = ("total_cycles", "compute_cycles", "exchange_cycles", "variable_bytes")
    joined(f"operations by {group_by}", [t.labels for t in ops],
           {c: [getattr(t, c) for t in ops] for c in shown})  # fmt: skip
    joined("variables", [r.graph.strings.take(r.graph.var_name) for r in (a, b)],
           {"bytes": [r.graph.var_bytes.astype(np.int64) for r in (a, b)]})  # fmt: skip
    steps = []
    for r in (a, b):
        kinds = [StepKind(k).poplar_name for k in r.programs.step_kind.tolist()]
        names = r.graph.strings.take(r.programs.step_name)
        steps.append([f"{k} {n}" for k, n in zip(kinds, names, strict=True)])
    trees = [program_tree(r) for r in (a, b)]
    joined("program steps", steps, {"cycles": [t.step_cycles for t in trees],
                                    "executions": [t.step_executions for t in trees]})  # fmt: skip
    return tables


@pytest.mark.parametrize("group_by", ["name", "op"])
def test_compare_tables_equal_a_dict_join_of_the_decoded_names(
    capsys, tutorial4_report, tutorial4_variant_report, group_by
):
    a, b = open_report(tutorial4_report), open_report(tutorial4_variant_report)
    expected = reference_tables(a, b, group_by)
    assert "partials #2" in expected[1].columns["key"]  # repeated variable names are numbered
    if group_by == "op":
        assert "(none)" in expected[0].columns["key"]  # steps of no op: the "" group
    args = ("compare", tutorial4_report, tutorial4_variant_report, "--variables", "--steps",
            "--group-by", group_by)  # fmt: skip

    text = cli(capsys, *args)
    for table in expected:
        assert render_text([table]).strip() in text, table.name

    document = json.loads(cli(capsys, *args, "--json"))
    for table in expected:
        assert document[table.name.replace(" ", "_")] == table.records(), table.name

    rows = list(csv.DictReader(io.StringIO(cli(capsys, *args, "--csv"))))
    for table in expected:
        got = [r for r in rows if r["table"] == table.name]
        columns = [n[:-2] for n in table.columns if n.endswith("_a") and n != "in_a"]
        want = [
            (record["key"], column, record[f"{column}_a"], record[f"{column}_b"])
            for record in table.records()
            for column in columns
        ]
        assert [(r["key"], r["column"], int(r["a"]), int(r["b"])) for r in got] == want

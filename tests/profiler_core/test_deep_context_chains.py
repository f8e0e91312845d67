"""A debug.cbor (format 1, built here with cbor2) whose 200,000 contexts form one parent chain,
every step, variable and compute set of the profile naming the deepest: finding the op call
that owns a context costs passes over the table, not a step per level (issue 30: ``compare``
and ``pva`` ran past 30 s)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import cbor2
import numpy as np
import pytest

from profiler_core.analysis.debug_groups import op_call_owners, operation_contexts
from profiler_core.formats.debug_cbor import read_debug
from profiler_core.formats.profile_pop import write_profile
from tests.profiler_core.factories import make_report

DEPTH = 200_000
CALL = 1_000  # the one op call on the chain (its API is its op)


def write_chain_report(folder: Path, seed: int) -> None:
    """profile.pop of ``make_report(seed)`` whose debug ids all name context DEPTH - 1, and a
    format 1 debug.cbor where context i's parent is i - 1."""
    folder.mkdir(parents=True)
    profile, _ = make_report(seed)
    for column in (profile.graph.var_debug, profile.graph.cs_debug):
        column[:] = DEPTH - 1
    for column in (profile.programs.node_debug, profile.programs.step_debug):
        column[:] = DEPTH - 1
    write_profile(folder / "profile.pop", profile)
    contexts = {
        "name": [f"ctx{i}" for i in range(DEPTH)],
        "parent": list(range(-1, DEPTH - 1)),
        "layer": ["deep"] * DEPTH,
        "op": ["popops::add"] * DEPTH,
        "api": ["popops::add" if i == CALL else "poplar::Graph" for i in range(DEPTH)],
        "file": [""] * DEPTH,
        "line": [0] * DEPTH,
        "args": [{}] * DEPTH,
    }
    document = {
        "magic": "popvision-py debug",
        "formatMajor": 1,
        "formatMinor": 0,
        "reportId": profile.header.report_id,
        "contexts": contexts,
    }
    (folder / "debug.cbor").write_bytes(cbor2.dumps(document))


@pytest.fixture(scope="module")
def chain_reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("deep_chain")
    write_chain_report(root / "a", 1)
    write_chain_report(root / "b", 2)
    return root / "a", root / "b"


def test_every_context_below_the_call_is_owned_by_it_and_those_above_by_themselves(
    chain_reports,
):
    debug = read_debug(chain_reports[0] / "debug.cbor")
    # By hand: climbing from i >= CALL meets the call at CALL; from i < CALL it reaches
    # context 0, which is no call, so i owns itself.
    expected = np.where(np.arange(DEPTH) >= CALL, CALL, np.arange(DEPTH))
    assert np.array_equal(operation_contexts(debug), expected)
    ids = np.array([DEPTH - 1, CALL + 70, CALL, CALL - 1, 5, -1, DEPTH])
    assert op_call_owners(debug, ids).tolist() == [CALL, CALL, CALL, CALL - 1, 5, -1, -1]


def run_child(code: str, seconds: float = 30) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter; a walk a step per level overruns ``seconds``."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=seconds,
            check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {seconds} s on a {DEPTH}-deep context chain")


def test_compare_of_two_deep_chain_reports_finishes_and_names_the_owning_call(chain_reports):
    a, b = chain_reports
    result = run_child(
        f"""
        from profiler_core.cli import main
        raise SystemExit(main(["compare", {str(a)!r}, {str(b)!r}, "--json"]))
        """
    )
    assert f'"ctx{CALL}"' in result.stdout and f'"ctx{DEPTH - 1}"' not in result.stdout


def test_pva_operations_of_a_deep_chain_report_finish(chain_reports):
    result = run_child(
        f"""
        import json
        from profiler_core import pva
        report = pva.openReport({str(chain_reports[0] / "profile.pop")!r})
        ops = pva.OperationAnalysis(report).operations
        print(json.dumps([[op.debugContext.id, len(op.programs()), len(op.vars)] for op in ops]))
        """
    )
    profile, _ = make_report(1)
    # Every step and variable names the deepest context, whose owner is the one call.
    steps, variables = len(profile.programs.step_kind), len(profile.graph.var_name)
    assert json.loads(result.stdout) == [[CALL, steps, variables]]

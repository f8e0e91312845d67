"""``popvision-cli insights`` as CI runs it: exit 1 with --fail-on error on the tutorial-4
OOM variant, 0 on tutorial 4, and JSON equal to the insights analysis."""

from __future__ import annotations

import json
import subprocess
import sys

from profiler_core.insights import insights
from profiler_core.report import open_report


def run_cli(*argv) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "insights", *map(str, argv)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_fail_on_error_exits_1_on_the_oom_variant(tutorial4_oom_report):
    result = run_cli(tutorial4_oom_report, "--fail-on", "error")
    assert result.returncode == 1, result.stderr
    assert "at or above error" in result.stderr
    assert "m4 (poplin::matMul) at tutorial4_matmul.py:" in result.stderr
    assert "Does not fit:" in result.stdout
    assert "Missing execution:" in result.stdout


def test_without_fail_on_the_oom_variant_exits_0(tutorial4_oom_report):
    assert run_cli(tutorial4_oom_report).returncode == 0


def test_tutorial4_passes_fail_on_warning_but_not_info(tutorial4_report):
    assert run_cli(tutorial4_report, "--fail-on", "warning").returncode == 0
    assert run_cli(tutorial4_report, "--fail-on", "info").returncode == 1


def test_json_equals_the_analysis(tutorial4_report):
    result = run_cli(tutorial4_report, "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    expected = insights(open_report(tutorial4_report))
    assert document["fit"]["fullest_tile"] == expected.fit.fullest_tile
    assert [f["rule"] for f in document["findings"]] == [f.rule for f in expected.findings]
    assert document["findings"][0]["operation"]["line"] == expected.findings[0].source.line
    assert sum(document["histogram"]["counts"]) == 1472
    assert document["peak"]["not_always_live"][0]["name"] == "partials"


def test_a_bad_severity_is_a_usage_error(tutorial4_report):
    result = run_cli(tutorial4_report, "--fail-on", "fatal")
    assert result.returncode == 2
    assert "invalid choice" in result.stderr

"""PVTI_OPTIONS: libpvti's keys are honoured, and a malformed value names the key at fault."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ipu_engine.pvti.errors import PvtiOptionsError
from ipu_engine.pvti.options import PvtiOptions, parse_options


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"enable":"true","directory":"out"}', PvtiOptions(True, Path("out"))),
        ('{"enable":true}', PvtiOptions(True, Path("."))),
        ('{"enable":"FALSE"}', PvtiOptions(False, Path("."))),
        ("{}", PvtiOptions()),
        ('{"channels":["A","B"],"duration":"2.5"}', PvtiOptions(True, Path("."), ("A", "B"), 2.5)),
    ],
)
def test_well_formed_options_are_read(text: str, expected: PvtiOptions) -> None:
    assert parse_options(text) == expected


def test_an_unset_variable_means_tracing_off() -> None:
    assert parse_options(None) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("enable=true", "PVTI_OPTIONS is not valid JSON"),
        ('["enable"]', "must be a JSON object"),
        ('{"enable":"maybe"}', "\"enable\" must be true or false, not 'maybe'"),
        ('{"enable":1}', '"enable" must be true or false'),
        ('{"enabled":"true"}', 'unknown key "enabled" (known keys: enable, directory'),
        ('{"directory":7}', '"directory" must be a folder name'),
        ('{"channels":"A"}', '"channels" must be a list of names'),
        ('{"duration":"-1"}', '"duration" must be seconds >= 0'),
    ],
)
def test_malformed_options_raise_an_error_naming_the_key(text: str, message: str) -> None:
    with pytest.raises(PvtiOptionsError) as err:
        parse_options(text)
    assert message in str(err.value)


SCRIPT = "import ipu_engine.pvti as p; p.Tracepoint.event(p.createTraceChannel('c'), 'x')"


def run_with(options: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PVTI_OPTIONS": options}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, cwd=cwd, capture_output=True, text=True
    )


def test_the_variable_is_read_at_first_use_and_writes_one_file(tmp_path: Path) -> None:
    result = run_with('{"enable":"true","directory":"traces"}', tmp_path)
    assert result.returncode == 0, result.stderr
    assert len(list((tmp_path / "traces").glob("*.pvti"))) == 1


def test_enable_false_writes_nothing(tmp_path: Path) -> None:
    result = run_with('{"enable":"false","directory":"traces"}', tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "traces").exists()


def test_a_bad_variable_stops_the_program_with_the_key_named(tmp_path: Path) -> None:
    result = run_with('{"enable":"maybe"}', tmp_path)
    assert result.returncode != 0
    assert "PvtiOptionsError" in result.stderr and '"enable"' in result.stderr
    assert list(tmp_path.iterdir()) == []

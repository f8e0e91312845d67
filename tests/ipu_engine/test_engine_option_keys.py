"""Issue 26 point 5: Poplar's real autoReport / profiler / debug option keys, as the
onboarding material and users pass them, are accepted; the ones the engine does not act on
say so in one log line each; unknown keys name the closest known ones; values of the wrong
type are errors naming the option; the README lists the keys the engine honours."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ipu_engine import Engine, Graph, IPUModel, OptionError, Sequence
from ipu_engine.common.log import configure_logging
from ipu_engine.poplar.option_keys import ENGINE_OPTION_KEYS
from ipu_engine.poplar.options import parse_options
from profiler_core.report import open_report

ROOT = Path(__file__).resolve().parents[2]

# Keys and values exactly as Graphcore's examples and tutorials set them (see option_keys).
MATERIAL = {
    "autoReport.all": "true",
    "autoReport.outputSerializedGraph": "false",
    "autoReport.outputArchive": False,
    "autoReport.executionProfileProgramRunCount": 1,
    "debug.allowOutOfMemory": "true",
    "debug.outputAllSymbols": "true",
    "debug.retainDebugInformation": "true",
    "debug.instrumentCompute": "true",
    "debug.computeInstrumentationLevel": "tile",
    "profiler.format": "v3",
    "profiler.includeFlopEstimates": "true",
    "profiler.includeCycleEstimates": "true",
    "profiler.perExecutionStreamCopyCycles": "true",
    "profiler.replicaToProfile": 0,
    "profiler.programs.filter": "operation",
    "profiler.blocks.implicitFlush": "false",
}


def _graph():
    device = IPUModel("ipu2", tiles_per_ipu=2).create_device()
    return Graph(device.target)


@pytest.fixture
def poplar_log(monkeypatch, tmp_path):
    """POPLAR_LOG_LEVEL=WARN into a file; the fixture's value reads what was logged."""
    log_file = tmp_path / "poplar.log"
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "WARN")
    monkeypatch.setenv("POPLAR_LOG_DEST", str(log_file))
    configure_logging()
    yield lambda: log_file.read_text() if log_file.exists() else ""
    monkeypatch.delenv("POPLAR_LOG_LEVEL")
    monkeypatch.delenv("POPLAR_LOG_DEST")
    configure_logging()


def test_the_materials_poplar_keys_run_the_program_and_write_its_report(
    tmp_path, monkeypatch, poplar_log
):
    options = {**MATERIAL, "autoReport.directory": str(tmp_path)}
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps(options))
    engine = Engine(_graph(), Sequence(name="material"))
    report = open_report(engine.report_folder)
    assert report.header.options["profiler.format"] == "v3"  # recorded as given
    assert report.header.options["autoReport.executionProfileProgramRunCount"] == "1"
    # one line for each key given that the engine does not act on, none for the others
    given_without_effect = sorted(k for k in MATERIAL if not ENGINE_OPTION_KEYS[k].honoured)
    lines = [line for line in poplar_log().splitlines() if "has no effect" in line]
    said = sorted(re.search(r"engine option (\S+)=", line).group(1) for line in lines)
    assert said == given_without_effect
    # counted by hand from MATERIAL: 9, as profiler.programs.filter is honoured (lightweight
    # profiling) and autoReport.outputSerializedGraph writes the serialized graph (issue 41)
    assert len(given_without_effect) == 9
    assert "profiler.format='v3' is accepted but has no effect" in "".join(lines)


def test_honoured_keys_say_nothing(poplar_log):
    parse_options({"autoReport.all": "true", "debug.instrument": "true"}, environ={})
    assert "has no effect" not in poplar_log()


@pytest.mark.parametrize(
    ("key", "closest"),
    [
        ("profiler.includeFlopEstimate", "'profiler.includeFlopEstimates'"),
        ("debug.retainDebugInfo", "'debug.retainDebugInformation'"),
        ("autoReport.outputSerialisedGraph", "'autoReport.outputSerializedGraph'"),
        ("autoreport.all", "'autoReport.all'"),
    ],
)
def test_an_unknown_key_is_an_error_naming_the_closest_known_keys(key, closest):
    with pytest.raises(OptionError, match=f"unknown engine option '{key}' in options") as error:
        parse_options({key: "true"}, environ={})
    assert f"did you mean {closest}" in str(error.value)


def test_a_key_near_nothing_names_the_families():
    with pytest.raises(OptionError, match=r"known keys start with autoReport\., debug\."):
        parse_options({"colour": "blue"}, environ={})


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("autoReport.outputSerializedGraph", "maybe", "is not a boolean"),
        ("profiler.includeFlopEstimates", 2.5, "is not a boolean"),
        ("profiler.replicaToProfile", "first", "is not a count"),
        ("profiler.replicaToProfile", -1, "is not a count"),
        ("profiler.replicaToProfile", 1.5, "is not a count"),
        ("profiler.replicaToProfile", True, "is not a count"),
        ("profiler.programs.filter", "stage(", "is not a regular expression"),
        ("profiler.format", 3, "must be a non-empty string"),
        ("debug.traceFile", "", "must be a non-empty string"),
        ("debug.computeInstrumentationLevel", "cpu", "is not one of tile, vertex"),
        ("debug.retainDebugInformation", ["true"], "must be a string, number or boolean"),
    ],
)
def test_a_value_of_the_wrong_type_is_an_error_naming_the_option(key, value, problem):
    with pytest.raises(OptionError, match=f"engine option '{re.escape(key)}'.*{problem}"):
        parse_options({key: value}, environ={})
    env = {"POPLAR_ENGINE_OPTIONS": json.dumps({key: value})}
    with pytest.raises(OptionError, match=re.escape(key)):
        parse_options(None, environ=env)


def test_hexadecimal_integers_are_read_as_poplar_reads_them():
    assert (
        parse_options({"profiler.replicaToProfile": "0x10"}, environ={})[
            "profiler.replicaToProfile"
        ]
        == 16
    )


def test_the_readme_lists_exactly_the_honoured_keys():
    text = (ROOT / "README.md").read_text()
    section = text.split("### Engine options", 1)[1].split("\n## ", 1)[0]
    first_cells = re.findall(r"^\| (`.+?) \|", section, flags=re.M)
    table_rows = [key for cell in first_cells for key in re.findall(r"`([\w.]+)`", cell)]
    assert sorted(table_rows) == sorted(k for k, s in ENGINE_OPTION_KEYS.items() if s.honoured)
    without_effect = section.split("without effect", 1)[1]
    named = set(re.findall(r"`([\w.]+)`", without_effect))
    assert named == {k for k, s in ENGINE_OPTION_KEYS.items() if not s.honoured}


def test_the_instrumentation_levels_reach_pvas_instrumentation_settings(tmp_path):
    from profiler_core import pva

    options = {
        "autoReport.all": "true",
        "autoReport.directory": str(tmp_path),
        "debug.computeInstrumentationLevel": "vertex",
        "debug.externalExchangeInstrumentationLevel": "ipu",
    }
    engine = Engine(_graph(), Sequence(name="levels"), options=options)
    settings = pva.openReport(f"{engine.report_folder}/profile.pop").instrumentationSettings
    assert settings.computeInstrumentationLevel is pva.InstrumentationLevel.Vertex
    assert settings.externalExchangeInstrumentationLevel is pva.InstrumentationLevel.Ipu

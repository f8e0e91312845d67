"""Issue 26 point 4: two executables with the same name in one process write two report
folders (``training``, ``training_2``), the second one said in a log line; a new run of the
script replaces its own earlier reports, whole."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ipu_engine import Engine, Graph, IPUModel, Sequence
from ipu_engine.common.log import configure_logging
from profiler_core.report import open_report

ROOT = Path(__file__).resolve().parents[2]


def _engine(name: str, directory: Path | None) -> Engine:
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=2).create_device().target)
    options = None
    if directory is not None:
        options = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    return Engine(graph, Sequence(name=name), options=options)


def test_same_named_executables_write_separate_folders(tmp_path, monkeypatch):
    log_file = tmp_path / "poplar.log"
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "WARN")
    monkeypatch.setenv("POPLAR_LOG_DEST", str(log_file))
    try:
        training = _engine("training", tmp_path / "report")
        _engine("training", None)  # no report: takes no name
        recompiled = _engine("training", tmp_path / "report")
        third = _engine("training", tmp_path / "report")
        elsewhere = _engine("training", tmp_path / "other")
    finally:
        monkeypatch.delenv("POPLAR_LOG_LEVEL")
        configure_logging()
    report_dir = tmp_path / "report"
    assert sorted(os.listdir(report_dir)) == ["training", "training_2", "training_3"]
    assert Path(training.report_folder) == report_dir / "training"
    assert Path(recompiled.report_folder) == report_dir / "training_2"
    assert Path(third.report_folder) == report_dir / "training_3"
    assert Path(elsewhere.report_folder) == tmp_path / "other" / "training"
    # each folder holds its own engine's report: the first was not replaced
    for engine in (training, recompiled, third, elsewhere):
        assert open_report(engine.report_folder).header.report_id == engine.report_id
    logged = log_file.read_text()
    assert f"this one's report is in {report_dir / 'training_2'}" in logged
    assert f"this one's report is in {report_dir / 'training_3'}" in logged
    assert logged.count("already wrote a report") == 2


SCRIPT = textwrap.dedent(
    """
    import sys
    from ipu_engine import Engine, Graph, IPUModel, Sequence
    graph = Graph(IPUModel("ipu2", tiles_per_ipu=2).create_device().target)
    options = {"autoReport.all": "true", "autoReport.directory": sys.argv[1]}
    for _ in range(2):
        print(Engine(graph, Sequence(name="training"), options=options).report_id)
    """
)


def _run(script: Path, report_dir: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, str(script), str(report_dir)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in ("PVTI_OPTIONS", "POPLAR_ENGINE_OPTIONS")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_a_new_run_of_the_script_replaces_its_own_reports(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    report_dir = tmp_path / "report"
    ids = [_run(script, report_dir) for _ in range(2)]
    assert sorted(os.listdir(report_dir)) == ["training", "training_2"]  # no third folder
    latest = ids[-1]
    assert open_report(report_dir / "training").header.report_id == latest[0]
    assert open_report(report_dir / "training_2").header.report_id == latest[1]
    assert set(ids[0]).isdisjoint(latest)  # the first run's reports were replaced
    # written atomically: nothing but the report's own files is left in the folders
    for folder in ("training", "training_2"):
        # (autoReport.all writes the serialized graph too, since issue 41)
        own = ["debug.cbor", "profile.pop", "serialized_graph.bundle"]
        assert sorted(os.listdir(report_dir / folder)) == own

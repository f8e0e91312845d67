"""autoReport: the engine writes profile.pop and debug.cbor that read back to what it modelled."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, popops, poputil
from ipu_engine.poplar.report.autoreport import ReportWriteWarning
from profiler_core.errors import ReportError
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.report import open_report


def test_tutorial4_report_reads_back_with_everything_it_modelled(tutorial4_report):
    assert (tutorial4_report / "profile.pop").is_file()
    assert (tutorial4_report / "debug.cbor").is_file()
    report = open_report(tutorial4_report)
    assert report.header.program_name == "tutorial4"
    assert report.target.num_tiles == 1472 and report.target.bytes_per_tile == 638_976
    g = report.graph
    names = g.strings.take(g.var_name)
    for name, shape in (
        ("m1", (900, 600)),
        ("m2", (600, 300)),
        ("m3", (300, 200)),
        ("m4", (900, 300)),
        ("m5", (900, 200)),
    ):
        var = names.index(name)
        assert g.shape_of(var) == shape
        regions = g.region_var == var
        assert g.region_elements[regions].sum() == shape[0] * shape[1]  # every element mapped
    m1 = names.index("m1")
    m1_tiles = g.region_tile[g.region_var == m1]
    assert m1_tiles.min() == 0 and m1_tiles.max() == 1471  # linear over the IPU
    # 540,000 elements in chunks of ceil(540000 / 1472) = 367
    assert g.region_elements[g.region_var == m1][:3].tolist() == [367, 367, 367]
    cs_names = g.strings.take(g.cs_name)
    assert {"m4/Conv_1/Convolve", "m5/Conv_1/Convolve"} <= set(cs_names)
    mem = report.memory.by_category
    assert mem.shape == (len(MemoryCategory), 1472)
    assert (mem >= 0).all() and np.array_equal(mem.sum(axis=0), report.memory.total_including_gaps)
    steps = report.programs.num_steps
    assert report.liveness.step_live_bytes.shape == (steps,)
    (run,) = report.execution.runs
    assert run.step_ids.size == steps and run.total_cycles > 0
    durations = report.programs.step_cycles.max(axis=1)[run.step_ids]
    assert run.total_cycles == durations.sum()
    assert np.array_equal(run.start_cycles, np.concatenate(([0], np.cumsum(durations)[:-1])))
    kinds = {StepKind(k) for k in report.programs.step_kind}
    assert {StepKind.ON_TILE_EXECUTE, StepKind.DO_EXCHANGE, StepKind.SYNC} <= kinds
    debug = report.debug
    # the reduction inside the matmul belongs to the matmul's debug context
    reduce_cs = cs_names.index("m4/Reduce")
    reduce_context = int(g.cs_debug[reduce_cs])
    assert debug.name[debug.parent[reduce_context]] == "m4"
    assert debug.op[reduce_context] == "poplin::matMul"
    m4_context = debug.name.index("m4")
    assert debug.op[m4_context] == "poplin::matMul" and debug.file[m4_context].endswith(
        "tutorial4_matmul.py"
    )


def _small(options, tmp_path):
    device = IPUModel("ipu2", tiles_per_ipu=4).create_device()
    graph = Graph(device.target)
    x = graph.add_variable(FLOAT, [16], "x")
    poputil.map_tensor_linearly(graph, x)
    graph.create_host_write("x", x)
    prog = Sequence(name="small")
    y = popops.exp(graph, x, prog, "y")
    graph.create_host_read("y", y)
    engine = Engine(graph, prog, options=options)
    engine.load(device)
    engine.write_tensor("x", np.linspace(0, 1, 16))
    return engine


def test_only_the_first_runs_are_kept_and_the_report_follows_each(tmp_path):
    options = {
        "autoReport.all": "true",
        "autoReport.directory": str(tmp_path),
        "autoReport.executionProfileProgramRunCount": "2",
    }
    engine = _small(options, tmp_path)
    assert open_report(tmp_path / "small").execution is None  # compiled, not yet run
    for _ in range(3):
        engine.run()
    report = open_report(tmp_path / "small")
    assert len(report.execution.runs) == 2
    assert report.header.options["autoReport.executionProfileProgramRunCount"] == "2"


def test_output_switches_choose_the_files(tmp_path):
    options = {"autoReport.outputGraphProfile": "true", "autoReport.directory": str(tmp_path)}
    engine = _small(options, tmp_path)
    engine.run()
    assert (tmp_path / "small" / "profile.pop").is_file()
    assert not (tmp_path / "small" / "debug.cbor").exists()
    nothing = tmp_path / "none"
    _small({"autoReport.directory": str(nothing)}, tmp_path).run()
    assert not nothing.exists()


def test_a_report_path_blocked_by_a_file_warns_and_results_are_unaffected(tmp_path):
    blocker = tmp_path / "reports"
    blocker.write_text("not a folder")
    options = {"autoReport.all": "true", "autoReport.directory": str(blocker)}
    with pytest.warns(ReportWriteWarning, match="cannot create the report folder .*reports/small"):
        engine = _small(options, tmp_path)
    engine.run()
    np.testing.assert_allclose(
        engine.read_tensor("y"), np.exp(np.linspace(0, 1, 16, dtype=np.float32))
    )
    assert blocker.read_text() == "not a folder"


def test_out_of_memory_with_allow_writes_a_report_showing_tiles_over(tmp_path):
    device = IPUModel("ipu2").create_device()
    graph = Graph(device.target)
    m1 = graph.add_variable(FLOAT, [20000, 12000], "m1")
    poputil.map_tensor_linearly(graph, m1)
    graph.create_host_write("m1", m1)
    options = {
        "autoReport.all": "true",
        "autoReport.directory": str(tmp_path),
        "debug.allowOutOfMemory": "true",
    }
    Engine(graph, Sequence(name="too_big"), options=options)
    report = open_report(tmp_path / "too_big")
    assert report.header.out_of_memory
    total = report.memory.by_category.sum(axis=0)
    over = total - report.target.bytes_per_tile
    assert (over > 0).sum() == 1472
    # the variable alone: ceil(240M / 1472) floats on tile 0
    assert total[0] >= -(-240_000_000 // 1472) * 4 > 638_976
    with pytest.raises(ReportError):
        open_report(tmp_path / "missing")


def test_report_folder_names(tmp_path):
    options = {"autoReport.all": "true", "autoReport.directory": str(tmp_path)}
    device = IPUModel("ipu2", tiles_per_ipu=2).create_device()
    graph = Graph(device.target)
    first = Engine(graph, Sequence(), options=options).report_folder
    second = Engine(graph, Sequence(), options=options).report_folder
    named = Engine(graph, Sequence(name="my train/step"), options=options).report_folder
    assert os.path.basename(named) == "my_train_step"
    assert first != second and {os.path.basename(first), os.path.basename(second)} <= {
        "engine",
        *(f"engine_{i}" for i in range(1, 100)),
    }
    assert sorted(os.listdir(tmp_path)) == sorted(
        os.path.basename(f) for f in (first, second, named)
    )
    for folder in (first, second, named):
        assert (tmp_path / os.path.basename(folder) / "profile.pop").is_file()

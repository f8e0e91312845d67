"""Engine options, Poplar's log variables and debug contexts from name scopes."""

import io
import logging
import re

import numpy as np
import pytest

from ipu_engine import (
    FLOAT,
    Engine,
    Graph,
    IPUModel,
    OptionError,
    Sequence,
    name_scope,
    popops,
    poputil,
)
from ipu_engine.common.log import configure_logging
from ipu_engine.poplar.options import parse_options


def _small_graph():
    device = IPUModel("ipu2", tiles_per_ipu=8).create_device()
    graph = Graph(device.target)
    with name_scope("layer1"):
        x = graph.add_variable(FLOAT, [16], "x")
        poputil.map_tensor_linearly(graph, x)
        prog = Sequence()
        y = popops.relu(graph, x, prog, "act")
    graph.create_host_write("x", x)
    graph.create_host_read("y", y)
    return device, graph, prog


def test_unknown_keys_and_bad_values_name_the_key():
    with pytest.raises(
        OptionError,
        match="unknown engine option 'autoReport.al' in options; did you mean 'autoReport.all'",
    ):
        parse_options({"autoReport.al": "true"}, environ={})
    with pytest.raises(
        OptionError, match="engine option 'autoReport.all': 'maybe' is not a boolean"
    ):
        parse_options({"autoReport.all": "maybe"}, environ={})
    with pytest.raises(
        OptionError, match="'autoReport.executionProfileProgramRunCount': '-2' is not a count"
    ):
        parse_options({"autoReport.executionProfileProgramRunCount": "-2"}, environ={})
    with pytest.raises(OptionError, match="POPLAR_ENGINE_OPTIONS is not valid JSON"):
        parse_options(None, environ={"POPLAR_ENGINE_OPTIONS": "{autoReport.all: true"})
    with pytest.raises(
        OptionError, match="unknown engine option 'debug.nope' in POPLAR_ENGINE_OPTIONS"
    ):
        parse_options(None, environ={"POPLAR_ENGINE_OPTIONS": '{"debug.nope": "1"}'})


def test_options_given_to_the_engine_win_over_the_environment():
    env = {"POPLAR_ENGINE_OPTIONS": '{"autoReport.all": "true", "autoReport.directory": "/env"}'}
    options = parse_options({"autoReport.directory": "/given"}, environ=env)
    assert options.report_directory == "/given"
    assert options.output("GraphProfile") and options.output("ExecutionProfile")
    only_debug = parse_options(
        {"autoReport.all": "true", "autoReport.outputDebugInfo": "false"}, environ={}
    )
    assert only_debug.output("GraphProfile") and not only_debug.output("DebugInfo")


def test_the_environment_variable_reaches_an_engine(monkeypatch):
    device, graph, prog = _small_graph()
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", '{"autoReport.all": "maybe"}')
    with pytest.raises(OptionError, match="'autoReport.all'"):
        Engine(graph, prog)


def test_poplar_log_level_info_shows_compile_phases(monkeypatch, capsys):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "INFO")
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    try:
        device, graph, prog = _small_graph()
        Engine(graph, prog)
        out = capsys.readouterr().out
        assert "INFO PO: cycle model:" in out
        assert "INFO PO: liveness analysis:" in out
        assert "INFO PO: compiled 8 vertices" in out
    finally:
        monkeypatch.delenv("POPLAR_LOG_LEVEL")
        configure_logging()
    assert not logging.getLogger("poplar").isEnabledFor(logging.ERROR)


def test_log_to_a_file_and_bad_levels(monkeypatch, tmp_path):
    log_file = tmp_path / "poplar.log"
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "WARN")
    monkeypatch.setenv("POPLAR_LOG_DEST", str(log_file))
    try:
        configure_logging()
        logging.getLogger("poplar").warning("PO: hello")
        assert "WARNING PO: hello" in log_file.read_text()
        monkeypatch.setenv("POPLAR_LOG_LEVEL", "LOUD")
        with pytest.raises(OptionError, match="POPLAR_LOG_LEVEL='LOUD' is not a log level"):
            configure_logging()
    finally:
        monkeypatch.delenv("POPLAR_LOG_LEVEL")
        monkeypatch.delenv("POPLAR_LOG_DEST")
        configure_logging()


def test_name_scopes_become_debug_contexts_with_layer_and_source_line():
    device, graph, prog = _small_graph()
    x_info = graph.variables[0]
    assert x_info.name == "layer1/x"
    ctx = graph.debug[x_info.debug_id]
    assert ctx.layer == "layer1" and ctx.api == "Graph.add_variable"
    assert ctx.location[0].endswith("test_options_logging.py") and ctx.location[1] > 0
    cs = graph.compute_sets[0]
    assert cs.name == "layer1/act/relu"
    op_ctx = graph.debug[graph.debug[cs.debug_id].parent]
    assert op_ctx.op == "popops::relu" and op_ctx.layer == "layer1"


def test_profile_summary_reports_target_memory_liveness_and_cycles():
    device, graph, prog = _small_graph()
    engine = Engine(graph, prog)
    engine.load(device)
    engine.write_tensor("x", np.linspace(-1, 1, 16))
    engine.run()
    out = io.StringIO()
    engine.print_profile_summary(out, show_execution_steps=True)
    text = out.getvalue()
    total = int(engine.model.memory.total.sum())
    cycles = int(engine.model.step_duration[engine.last_run_steps].sum())
    assert re.search(r"Tiles per IPU:\s+8\n", text)
    assert f"Total, including gaps: {total:,} bytes" in text
    assert f"Run 0 (program 0): {cycles:,} cycles" in text
    assert "OnTileExecute layer1/act/relu" in text


def test_warn_when_allow_out_of_memory_lets_a_graph_through_and_debug_per_graph(
    monkeypatch, capsys
):
    monkeypatch.setenv("POPLAR_LOG_LEVEL", "DEBUG")
    monkeypatch.setenv("POPLAR_LOG_DEST", "stdout")
    try:
        device = IPUModel("ipu2", tiles_per_ipu=2, bytes_per_tile=4096).create_device()
        graph = Graph(device.target)
        big = graph.add_variable(FLOAT, [2048], "big")  # 4 KiB of floats per tile, plus code
        poputil.map_tensor_linearly(graph, big)
        graph.create_host_write("big", big)
        Engine(graph, Sequence(), options={"debug.allowOutOfMemory": "true"})
        out = capsys.readouterr().out
        assert "DEBUG PO: graph for ipu2 (1 IPU, 2 tiles): 1 variables, 0 compute sets" in out
        assert "WARNING PO: Out of memory on tile 0:" in out
        assert (
            "tiles only have 4096 bytes of memory; continuing because debug.allowOutOfMemory" in out
        )
    finally:
        monkeypatch.delenv("POPLAR_LOG_LEVEL")
        configure_logging()


def test_the_import_surface_scripts_rely_on():
    import ipu_engine
    from ipu_engine import poplin, popnn, popops, poputil

    names = [
        "IPUModel",
        "Graph",
        "Engine",
        "Sequence",
        "Execute",
        "Copy",
        "Repeat",
        "RepeatWhileTrue",
        "If",
        "Call",
        "PrintTensor",
        "Vertex",
        "Input",
        "Output",
        "InOut",
        "FLOAT",
        "HALF",
        "INT",
        "UNSIGNED_INT",
        "BOOL",
    ]
    assert all(hasattr(ipu_engine, n) for n in names)
    assert ipu_engine.HALF.numpy_dtype == np.float16
    assert callable(popops.add) and callable(poplin.mat_mul)
    assert callable(popnn.softmax) and callable(poputil.map_tensor_linearly)

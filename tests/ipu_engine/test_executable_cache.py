"""The executable cache (issue 26, point 7): a second engine of the same program loads the
stored executable instead of compiling it, runs to the same results and writes the same
report; framework programs name the folder as PopTorch and TensorFlow do."""

from __future__ import annotations

import numpy as np
import pytest

import ipu_engine
from ipu_engine import Engine
from ipu_engine.common.errors import OptionError
from ipu_engine.frontend.options import Options
from ipu_engine.poplar.compiler import executable_cache, lower
from profiler_core.formats.debug_cbor import read_debug
from profiler_core.formats.profile_pop import read_profile
from tests.ipu_engine.cache_programs import (
    assert_same_record,
    bert_graph,
    bert_reference,
    engine_with_cache,
    poplar_info_log,
    run_bert,
)


def _no_compiling(monkeypatch) -> None:
    """Make the expensive parts of compiling fail: a hit must not need them."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("compiled although the executable was in the cache")

    monkeypatch.setattr(lower, "compute_set_facts", refuse)
    monkeypatch.setattr(executable_cache, "build_compile_model", refuse)


def test_the_second_engine_loads_the_stored_executable_and_runs_to_the_same_results(
    tmp_path, monkeypatch, capsys
):
    with poplar_info_log(monkeypatch, capsys) as first_log:
        first, device, tensors = engine_with_cache(tmp_path)
        first_out = run_bert(first, device, tensors)
    entries = list(tmp_path.glob("*.ipuexe"))
    assert len(entries) == 1
    assert any(f"executable cache: compiled and stored {entries[0]}" in s for s in first_log)

    _no_compiling(monkeypatch)
    with poplar_info_log(monkeypatch, capsys) as second_log:
        second, device, tensors = engine_with_cache(tmp_path)
        second_out = run_bert(second, device, tensors)
    assert any(f"executable cache: loaded {entries[0]}" in s for s in second_log)
    assert not any("compiled and stored" in s for s in second_log)
    expected = bert_reference(tensors)
    assert np.max(np.abs(second_out - expected)) < 1e-4 * np.max(np.abs(expected))
    assert np.array_equal(second_out, first_out)
    assert np.array_equal(second.last_run_steps, first.last_run_steps)
    assert_same_record(second.last_run, first.last_run, "run", skip=("run.started_unix",))


def test_the_report_written_with_a_cache_hit_equals_the_one_written_after_compiling(tmp_path):
    reports = tmp_path / "reports"
    options = {"autoReport.all": "true", "autoReport.directory": str(reports)}
    profiles, debugs = [], []
    for folder_name in ("bert_layer", "bert_layer_2"):  # a miss (compile, store), then a hit
        engine, device, tensors = engine_with_cache(tmp_path / "cache", **options)
        run_bert(engine, device, tensors)
        folder = reports / folder_name  # the second executable of that name in this process
        profiles.append(read_profile(folder / "profile.pop"))
        debugs.append(read_debug(folder / "debug.cbor"))
    assert len(list((tmp_path / "cache").glob("*.ipuexe"))) == 1
    miss, hit = profiles
    assert miss.header.report_id != hit.header.report_id  # two reports, really written
    skip = ("profile.header.report_id", "profile.header.created_unix")
    assert_same_record(miss, hit, skip=skip)
    assert_same_record(debugs[0], debugs[1], "debug", skip=("debug.report_id",))


def test_a_report_from_the_cache_equals_one_from_an_engine_without_a_cache(tmp_path):
    device, graph, prog, tensors = bert_graph()
    plain = Engine(graph, prog)
    run_bert(plain, device, tensors)
    for _ in range(2):
        cached, device, tensors = engine_with_cache(tmp_path)
        run_bert(cached, device, tensors)
    skip = (
        "profile.header.report_id",
        "profile.header.created_unix",
        "profile.header.options",
    )
    assert_same_record(plain.profile(), cached.profile(), skip=skip)
    options = cached.profile().header.options
    assert options.pop("executableCache.directory") == str(tmp_path)
    assert options == plain.profile().header.options


def test_the_option_must_name_a_path():
    device, graph, prog, _ = bert_graph()
    with pytest.raises(OptionError, match="'executableCache.directory'.*non-empty"):
        Engine(graph, prog, options={"executableCache.directory": ""})


# -- framework programs ----------------------------------------------------------------------
def add_twice(a, b, c):
    return (a + b) + (a + c)


INPUTS = [np.array(v, dtype=np.float32) for v in ([1, 1], [0, 1], [1, 5])]


def test_framework_options_name_the_folder_like_poptorch_and_tensorflow(tmp_path, monkeypatch):
    monkeypatch.delenv("POPTORCH_CACHE_DIR", raising=False)
    assert "executableCache.directory" not in Options().engine_options_with_cache()
    by_path = Options(executable_cache_path=str(tmp_path / "tf"))
    assert by_path.engine_options_with_cache()["executableCache.directory"] == str(tmp_path / "tf")
    enabled = Options().enable_executable_caching(str(tmp_path / "pt"))
    assert enabled.engine_options_with_cache()["executableCache.directory"] == str(tmp_path / "pt")
    monkeypatch.setenv("POPTORCH_CACHE_DIR", str(tmp_path / "env"))
    assert Options().engine_options_with_cache()["executableCache.directory"] == str(
        tmp_path / "env"
    )
    explicit = Options(engine_options={"executableCache.directory": "mine"})
    assert explicit.engine_options_with_cache()["executableCache.directory"] == "mine"
    with pytest.raises(OptionError, match="'executable_cache_path' must be a folder path"):
        Options(executable_cache_path="")


def test_a_framework_program_is_compiled_once_then_loaded_with_poptorch_cache_dir(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("POPTORCH_CACHE_DIR", str(tmp_path))
    with poplar_info_log(monkeypatch, capsys) as first_log:
        first = ipu_engine.compile(add_twice, INPUTS, name="basic_add")
    _no_compiling(monkeypatch)
    with poplar_info_log(monkeypatch, capsys) as second_log:
        second = ipu_engine.compile(add_twice, INPUTS, name="basic_add")
    assert first.tolist() == second.tolist() == [3.0, 8.0]
    assert any("executable cache: compiled and stored" in s for s in first_log)
    assert any("executable cache: loaded" in s for s in second_log)

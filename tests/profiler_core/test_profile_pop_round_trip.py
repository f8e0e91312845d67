"""profile.pop round trip: every field and column comes back exactly, sections load lazily."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.profile_pop import (
    ProfileReader,
    read_profile,
    section_arrays,
    write_profile,
)
from profiler_core.formats.profile_pop.writer import build_message, write_message
from profiler_core.model.profile import ExecutionData, RunData
from profiler_core.model.strings import Strings
from tests.profiler_core.checksummed import resealed
from tests.profiler_core.factories import make_profile


def assert_same(expected, actual, where="profile"):
    """Field by field: arrays with equal dtype, shape and values; strings decoded equal."""
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), where
        assert actual.dtype == expected.dtype, f"{where}: {actual.dtype} != {expected.dtype}"
        assert actual.shape == expected.shape, where
        assert np.array_equal(actual, expected), where
    elif isinstance(expected, Strings):
        assert actual.tolist() == expected.tolist(), where
        assert np.array_equal(actual.offsets, expected.offsets), where
    elif dataclasses.is_dataclass(expected):
        assert type(actual) is type(expected), where
        for field in dataclasses.fields(expected):
            assert_same(
                getattr(expected, field.name), getattr(actual, field.name), f"{where}.{field.name}"
            )
    elif isinstance(expected, list):
        assert len(actual) == len(expected), where
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            assert_same(e, a, f"{where}[{index}]")
    else:
        assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
        assert actual == expected, where


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_field_and_column_round_trips_exactly(tmp_path, seed):
    profile = make_profile(seed, num_variables=10 + seed)
    write_profile(tmp_path / "profile.pop", profile)
    assert_same(profile, read_profile(tmp_path / "profile.pop"))


def test_each_section_property_returns_what_was_written(profile_path, report):
    profile = report[0]
    with ProfileReader(profile_path) as reader:
        assert_same(profile.header, reader.header, "header")
        assert_same(profile.target, reader.target, "target")
        assert_same(profile.graph, reader.graph, "graph")
        assert_same(profile.memory, reader.memory, "memory")
        assert_same(profile.programs, reader.programs, "programs")
        assert_same(profile.liveness, reader.liveness, "liveness")
        assert_same(profile.execution, reader.execution, "execution")
        assert reader.graph.strings[1] == "layer1/µ-scale"


def test_a_profile_that_was_never_run_has_no_execution(tmp_path):
    profile = make_profile(2, executed=False)
    write_profile(tmp_path / "profile.pop", profile)
    assert ProfileReader(tmp_path / "profile.pop").execution is None


def test_an_execution_profile_with_no_runs_is_not_none(tmp_path):
    profile = make_profile(2)
    profile.execution = ExecutionData(runs=[])
    write_profile(tmp_path / "profile.pop", profile)
    assert ProfileReader(tmp_path / "profile.pop").execution == ExecutionData(runs=[])


def test_sections_decode_on_first_access_only(profile_path, monkeypatch):
    decoded = []
    real_read_array = section_arrays.read_array

    def counting_read_array(reader, name, *args):
        decoded.append(name)
        return real_read_array(reader, name, *args)

    monkeypatch.setattr(section_arrays, "read_array", counting_read_array)
    reader = ProfileReader(profile_path)
    assert reader.header.program_name == "synthetic-7"
    assert reader.target.num_tiles == 8
    assert decoded == []
    memory = reader.memory
    assert decoded == ["by_category", "interleaved"]
    assert reader.memory is memory
    assert decoded == ["by_category", "interleaved"]


def test_arrays_are_read_only_views_onto_the_file(profile_path):
    by_category = ProfileReader(profile_path).memory.by_category
    assert not by_category.flags.writeable
    with pytest.raises(ValueError):
        by_category[0, 0] = 1


def test_arrays_outlive_a_closed_reader(profile_path, report):
    with ProfileReader(profile_path) as reader:
        memory = reader.memory
    assert np.array_equal(memory.by_category, report[0].memory.by_category)
    with pytest.raises(ReportError, match="closed"):
        _ = reader.graph


def test_integer_columns_of_another_width_are_stored_in_the_schema_dtype(tmp_path):
    profile = make_profile(3)
    names = profile.graph.var_name
    profile.graph.var_name = names.astype(np.int64)
    profile.memory.by_category = profile.memory.by_category.astype(">i8")  # big-endian input
    write_profile(tmp_path / "profile.pop", profile)
    reader = ProfileReader(tmp_path / "profile.pop")
    assert reader.graph.var_name.dtype == np.dtype("<i4")
    assert np.array_equal(reader.graph.var_name, names)
    assert reader.memory.by_category.dtype == np.dtype("<i8")
    assert np.array_equal(reader.memory.by_category, profile.memory.by_category)


def test_a_newer_minor_version_is_read(tmp_path):
    profile = make_profile(1)
    message = build_message(profile)
    message.formatMinor = 9
    write_message(tmp_path / "profile.pop", resealed(message))
    reader = ProfileReader(tmp_path / "profile.pop")
    assert (reader.header.format_major, reader.header.format_minor) == (1, 9)
    assert_same(profile.graph, reader.graph)


def test_large_arrays_and_many_runs_round_trip(tmp_path):
    profile = make_profile(4, num_ipus=4, tiles_per_ipu=1472, num_variables=50, num_runs=5)
    rng = np.random.default_rng(0)
    profile.memory.by_category = rng.integers(0, 2**40, (15, 4 * 1472))
    profile.execution.runs.append(
        RunData(4, "long run", np.zeros(100_000, np.int32), np.arange(100_000), 10**12)
    )
    write_profile(tmp_path / "profile.pop", profile)
    assert_same(profile, read_profile(tmp_path / "profile.pop"))


def test_header_options_keep_their_order_and_text(tmp_path):
    profile = make_profile(0)
    profile.header.options = {"z.last": "1", "autoReport.directory": "./ré port", "": ""}
    profile.header.out_of_memory = True
    write_profile(tmp_path / "profile.pop", profile)
    header = ProfileReader(tmp_path / "profile.pop").header
    assert list(header.options.items()) == list(profile.header.options.items())
    assert header.out_of_memory is True


def test_writer_refuses_columns_of_unequal_length_and_writes_nothing(tmp_path):
    profile = make_profile(0)
    profile.graph.var_bytes = profile.graph.var_bytes[:-1]
    with pytest.raises(ReportError) as caught:
        write_profile(tmp_path / "profile.pop", profile)
    message = str(caught.value)
    assert message.startswith(str(tmp_path / "profile.pop"))
    assert "section 'graph'" in message and "'var_bytes'" in message
    assert list(tmp_path.iterdir()) == []


def test_writer_refuses_values_that_do_not_fit_the_column(tmp_path):
    profile = make_profile(0)
    profile.programs.step_cs = profile.programs.step_cs.astype(np.int64) + 2**40
    with pytest.raises(ReportError, match="section 'programs'.*'step_cs'.*int32"):
        write_profile(tmp_path / "profile.pop", profile)


def test_writer_refuses_references_out_of_range(tmp_path):
    profile = make_profile(0)
    profile.graph.region_var[0] = profile.graph.num_variables
    with pytest.raises(ReportError, match="'region_var' refers to row .* of the variables table"):
        write_profile(tmp_path / "profile.pop", profile)

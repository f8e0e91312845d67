"""profile.pop bad input: truncated, corrupt and hostile files raise only ReportError, naming
the file (and the section when the damage is inside one), while intact sections still load."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.profile_pop import ProfileReader, framing
from profiler_core.formats.profile_pop.arrays import write_array
from profiler_core.formats.profile_pop.writer import build_message, write_message
from tests.fuzzing import DERANDOMIZE, examples
from tests.profiler_core.factories import make_profile

SECTIONS = ("header", "target", "graph", "memory", "programs", "liveness", "execution")


def open_everything(path) -> list[ReportError]:
    """Open ``path`` as the window does, then as popvision-cli does (``on_demand``: pages read
    again per section), and touch every section; return the ReportErrors of the first way
    (anything but a ReportError escapes either way)."""
    found = []
    for on_demand in (False, True):
        try:
            opened = ProfileReader(path, on_demand)
        except ReportError as error:
            found.append([error])
            continue
        errors = []
        for section in SECTIONS:
            try:
                getattr(opened, section)
            except ReportError as error:
                errors.append(error)
        found.append(errors)
    return found[0]


def assert_names_the_file(error: ReportError, path) -> None:
    assert error.path == path
    assert str(error).startswith(f"{path}: ")


def write_patched(tmp_path, patch, seed=0, **sizes):
    """Build the message of a synthetic profile, let ``patch`` damage it, write it."""
    message = build_message(make_profile(seed, **sizes))
    patch(message)
    path = tmp_path / "profile.pop"
    write_message(path, message)
    return path


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"", "is empty"),
        (b"abc", "too short"),
        (b"profile.pop is a text file, not a Cap'n Proto message\n" * 3, "not a profile.pop"),
        (b"\x00" * 8, "not a profile.pop"),
        (b"\xff" * 64, "not a profile.pop"),
    ],
)
def test_files_that_are_not_profiles_are_refused(tmp_path, content, problem):
    path = tmp_path / "profile.pop"
    path.write_bytes(content)
    with pytest.raises(ReportError, match=problem) as caught:
        ProfileReader(path)
    assert_names_the_file(caught.value, path)


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_are_refused(tmp_path, seed):
    path = tmp_path / "profile.pop"
    path.write_bytes(np.random.default_rng(seed).bytes(8 * (1 + seed * 100)))
    errors = open_everything(path)
    assert errors
    for error in errors:
        assert_names_the_file(error, path)


def test_a_file_truncated_anywhere_says_truncated(tmp_path, profile_path):
    data = profile_path.read_bytes()
    cut_path = tmp_path / "cut.pop"
    for cut in sorted({1, 4, 7, 8, 9, 15, 16, *range(17, len(data), 97), len(data) - 8}):
        cut_path.write_bytes(data[:cut])
        with pytest.raises(ReportError, match="truncated|too short") as caught:
            ProfileReader(cut_path)
        assert_names_the_file(caught.value, cut_path)


def test_bytes_after_the_message_are_refused(tmp_path, profile_path):
    profile_path.write_bytes(profile_path.read_bytes() + b"\x00" * 8)
    with pytest.raises(ReportError, match="8 bytes after the end"):
        ProfileReader(profile_path)


def test_flipped_bytes_anywhere_raise_only_report_errors(profile_path):
    data = bytearray(profile_path.read_bytes())
    for position in range(0, len(data), 7):
        damaged = bytearray(data)
        damaged[position] ^= 0xA5
        profile_path.write_bytes(damaged)
        for error in open_everything(profile_path):
            assert_names_the_file(error, profile_path)


def test_a_newer_major_version_is_refused_saying_both_versions(tmp_path):
    def newer(message):
        message.formatMajor, message.formatMinor = 2, 3

    path = write_patched(tmp_path, newer)
    with pytest.raises(FormatVersionError) as caught:
        ProfileReader(path)
    assert_names_the_file(caught.value, path)
    assert "format 2.3" in str(caught.value) and "reads format 1" in str(caught.value)


def test_version_zero_and_a_wrong_magic_are_refused(tmp_path):
    path = write_patched(tmp_path, lambda m: setattr(m, "formatMajor", 0))
    with pytest.raises(ReportError, match="unknown profile format version 0"):
        ProfileReader(path)
    path = write_patched(tmp_path, lambda m: setattr(m, "magic", "someone else's profile"))
    with pytest.raises(ReportError, match="not a popvision-py profile .*someone else's"):
        ProfileReader(path)


def test_a_corrupt_memory_section_names_file_section_and_array_while_graph_loads(tmp_path):
    def wrong_shape(message):
        message.memory.byCategory.shape[1] = 1472

    path = write_patched(tmp_path, wrong_shape, num_ipus=2, tiles_per_ipu=5)
    opened = ProfileReader(path)
    with pytest.raises(ReportError) as caught:
        _ = opened.memory
    assert str(caught.value) == (
        f"{path}: section 'memory': array 'by_category' has 1200 bytes but dtype <i8 and "
        "shape (15, 1472) need 176640"
    )
    assert opened.graph.num_variables == 8
    assert opened.programs.num_steps == 10
    assert opened.execution is not None
    with pytest.raises(ReportError) as again:
        _ = opened.memory
    assert again.value is caught.value  # decoded once, the error too


@pytest.mark.parametrize(
    ("patch", "problem"),
    [
        (lambda m: setattr(m.memory.byCategory, "dtype", ">i8"), "unsupported dtype '>i8'"),
        (lambda m: setattr(m.memory.byCategory, "dtype", "O"), "unsupported dtype 'O'"),
        (lambda m: m.memory.init("interleaved"), "array 'interleaved' is missing"),
        (lambda m: m.memory.interleaved.init("shape", 2), "has 2 dimensions but must have 1"),
    ],
)
def test_bad_array_headers_are_named(tmp_path, patch, problem):
    path = write_patched(tmp_path, patch)
    with pytest.raises(ReportError, match=f"section 'memory': .*{problem}"):
        _ = ProfileReader(path).memory


def test_an_array_of_another_dtype_is_refused(tmp_path):
    def as_int32(message):
        array = message.memory.byCategory
        array.dtype = "<i4"
        array.shape[1] = 2 * array.shape[1]  # same byte count

    path = write_patched(tmp_path, as_int32)
    with pytest.raises(ReportError, match="'by_category' has dtype <i4 but must be <i8"):
        _ = ProfileReader(path).memory


def test_columns_of_one_table_with_different_lengths_are_refused(tmp_path):
    def short_column(message):
        write_array(message.graph.init("varBytes"), np.arange(3, dtype="<i8"))

    path = write_patched(tmp_path, short_column)
    with pytest.raises(ReportError, match="section 'graph': column 'var_bytes' has 3 rows but"):
        _ = ProfileReader(path).graph


def patch_data(array_builder, dtype, values):
    view = np.frombuffer(array_builder.get_data_as_view("data"), dtype=dtype)
    view[: len(values)] = values


@pytest.mark.parametrize(
    ("section", "patch", "problem"),
    [
        ("graph", lambda m: patch_data(m.graph.varIsConstant, "u1", [2]), "bool but holds"),
        ("graph", lambda m: patch_data(m.graph.regionVar, "<i4", [99]), "refers to row 99"),
        ("graph", lambda m: patch_data(m.graph.varName, "<i4", [-1]), "refers to row -1"),
        ("graph", lambda m: patch_data(m.graph.strings.offsets, "<i8", [0, 50, 3]), "decrease"),
        ("graph", lambda m: patch_data(m.graph.varShapeOffsets, "<i8", [1]), "from 1 to"),
        ("programs", lambda m: patch_data(m.programs.nodeParent, "<i4", [0]), "does not precede"),
        ("programs", lambda m: patch_data(m.programs.roots, "<i4", [10**6]), "refers to row"),
        ("target", lambda m: setattr(m.target, "numIpus", 0), "0 IPUs"),
        ("target", lambda m: setattr(m.target, "clockHz", float("nan")), "clock of nan"),
        ("execution", lambda m: patch_run_ids(m), "run 1: column 'start_cycles'"),
    ],
)
def test_inconsistent_values_are_refused_naming_the_section(tmp_path, section, patch, problem):
    path = write_patched(tmp_path, patch)
    with pytest.raises(ReportError, match=f"section '{section}': .*{problem}"):
        getattr(ProfileReader(path), section)


def patch_run_ids(message):
    write_array(message.execution.profile.runs[1].init("stepIds"), np.zeros(3, "<i4"))


def test_a_missing_file_or_a_directory_is_refused(tmp_path):
    with pytest.raises(ReportError, match="No such file"):
        ProfileReader(tmp_path / "nothing.pop")
    with pytest.raises(ReportError, match="cannot read"):
        ProfileReader(tmp_path)


def test_a_file_over_the_size_limit_is_refused_before_reading(profile_path, monkeypatch):
    monkeypatch.setattr(framing, "MAX_PROFILE_BYTES", 1000)
    with pytest.raises(ReportError, match="over the 1000 a profile.pop may have"):
        ProfileReader(profile_path)


def test_a_list_of_a_billion_empty_runs_hits_the_traversal_limit(tmp_path):
    """A hostile 'amplified' list: many zero-sized elements cost no bytes on disk."""
    path = write_patched(tmp_path, lambda m: None)
    data = bytearray(path.read_bytes())
    list_at = _runs_list_pointer_offset(data)
    pointer = struct.unpack_from("<Q", data, list_at)[0]
    offset = (pointer & 0xFFFFFFFF) >> 2
    tag_at = list_at + 8 + 8 * offset
    struct.pack_into("<Q", data, list_at, (pointer & 0xFFFFFFFF) | (7 << 32))  # 0 words
    struct.pack_into("<Q", data, tag_at, (2**29 - 1) << 2)  # elements of 0 data, 0 pointers
    path.write_bytes(bytes(data))
    opened = ProfileReader(path)
    with pytest.raises(ReportError, match="section 'execution': .*traversal limit"):
        _ = opened.execution
    assert opened.graph.num_variables == 8


def _runs_list_pointer_offset(data: bytes) -> int:
    """Byte offset of Execution.runs's pointer, found by following the message's pointers."""
    segment = 8  # one segment: its table is 8 bytes

    def target_of_struct_pointer(at: int) -> tuple[int, int]:
        word = struct.unpack_from("<Q", data, at)[0]
        assert word & 3 == 0, "a struct pointer"
        offset = ((word & 0xFFFFFFFF) >> 2) - ((word & 0x80000000) >> 1)
        return at + 8 + 8 * offset, (word >> 32) & 0xFFFF  # where, data words

    root, root_data_words = target_of_struct_pointer(segment)
    execution_pointer = root + 8 * root_data_words + 8 * 7  # Profile's 8th pointer
    execution, execution_data_words = target_of_struct_pointer(execution_pointer)
    return execution + 8 * execution_data_words


FUZZ = settings(
    max_examples=examples(200),
    derandomize=DERANDOMIZE,
    deadline=1000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(
    mutations=st.lists(
        st.tuples(st.sampled_from(["flip", "cut", "overwrite", "insert"]), st.integers(0, 2**31)),
        min_size=1,
        max_size=6,
    ),
    noise=st.binary(min_size=1, max_size=24),
)
def test_fuzzed_profiles_raise_only_report_errors(profile_path, mutations, noise):
    data = bytearray(profile_path.read_bytes())
    for kind, where in mutations:
        at = where % max(len(data), 1)
        if kind == "flip" and data:
            data[at] ^= noise[0] or 0xFF
        elif kind == "cut":
            del data[at:]
        elif kind == "overwrite":
            data[at : at + len(noise)] = noise
        else:
            data[at:at] = noise
    path = profile_path.with_name("fuzzed.pop")
    path.write_bytes(bytes(data))
    for error in open_everything(path):
        assert_names_the_file(error, path)


@FUZZ
@given(
    overwrites=st.lists(
        st.tuples(st.integers(0, 2**31), st.binary(min_size=1, max_size=16)), min_size=1, max_size=4
    )
)
def test_profiles_fuzzed_in_place_raise_only_report_errors(profile_path, overwrites):
    """Same-length damage passes the framing check, so it reaches capnp and the sections."""
    data = bytearray(profile_path.read_bytes())
    for where, noise in overwrites:
        at = 8 + where % (len(data) - 8)
        data[at : at + len(noise)] = noise[: len(data) - at]
    path = profile_path.with_name("fuzzed.pop")
    path.write_bytes(bytes(data))
    for error in open_everything(path):
        assert_names_the_file(error, path)

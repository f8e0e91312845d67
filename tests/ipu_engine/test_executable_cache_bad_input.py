"""A damaged, stale or hostile cache entry is ignored with a warning naming it and why,
never used; a cache folder that cannot be made, written or filled is a warning naming the
engine option. Whatever the cache's trouble, the program compiles and runs to the same
results, and the next engine stores or loads a good entry."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys

import numpy as np
import pytest

from ipu_engine import Engine, Sequence
from ipu_engine.poplar.compiler.executable_cache import FORMAT, KIND, MAX_ENTRY_BYTES
from ipu_engine.poplar.compiler.executable_cache import ExecutableCacheWarning as Warned
from profiler_core.formats.array_bundle import read_bundle, write_bundle
from tests.conftest import EXAMPLES
from tests.ipu_engine.cache_programs import (
    bert_graph,
    bert_reference,
    engine_with_cache,
    poplar_info_log,
    run_bert,
)


def _stored_entry(folder) -> tuple:
    """Compile the small BERT layer once into ``folder``: (entry path, its output)."""
    engine, device, tensors = engine_with_cache(folder)
    out = run_bert(engine, device, tensors)
    (entry,) = folder.glob("*.ipuexe")
    return entry, out


def _runs_correctly_and_heals(folder, expected, monkeypatch, capsys) -> None:
    """The engine warned about (outside) then compiled; the entry it stored loads next."""
    engine, device, tensors = engine_with_cache(folder)
    assert np.array_equal(run_bert(engine, device, tensors), expected)
    with poplar_info_log(monkeypatch, capsys) as lines:
        engine_with_cache(folder)
    assert any("executable cache: loaded" in s for s in lines), lines


def _rewrite(entry, change) -> None:
    """Write ``entry`` again with its description changed, as a valid bundle (checksum
    right): what only someone crafting a file would make."""
    bundle = read_bundle(entry, KIND, FORMAT[0], MAX_ENTRY_BYTES)
    meta = dict(bundle.meta)
    change(meta)
    write_bundle(entry, KIND, FORMAT, meta, bundle.arrays)


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda b: b[:1000] + bytes([b[1000] ^ 0x40]) + b[1001:], "checksum mismatch"),
        (lambda b: b[: len(b) // 2], "checksum mismatch"),
        (lambda b: b[:20], "truncated"),
        (lambda b: b"", "truncated"),
        (lambda b: os.urandom(5000), "not a bundle file"),
    ],
    ids=["one bit flipped", "cut in half", "cut to 20 bytes", "empty", "garbage"],
)
def test_a_damaged_entry_is_ignored_with_a_warning(tmp_path, monkeypatch, capsys, damage, reason):
    entry, out = _stored_entry(tmp_path)
    entry.write_bytes(damage(entry.read_bytes()))
    with pytest.warns(Warned, match=rf"executable cache: ignored {entry}: .*{reason}"):
        _runs_correctly_and_heals(tmp_path, out, monkeypatch, capsys)


def test_an_entry_stored_under_another_key_is_ignored(tmp_path, monkeypatch, capsys):
    entry, out = _stored_entry(tmp_path)
    _rewrite(entry, lambda m: m.update(key="0" * 64))  # as if renamed from another program's
    with pytest.warns(Warned, match="ignored .*: it was stored for another program"):
        _runs_correctly_and_heals(tmp_path, out, monkeypatch, capsys)


def test_an_entry_whose_content_does_not_fit_the_program_is_ignored(tmp_path, monkeypatch, capsys):
    """The key and checksum are right but the facts are another program's (the same layer
    on 32 tiles instead of 16): lowering with them would misplan, so the engine compiles."""
    wider = tmp_path / "wider"
    _, graph, prog, _ = bert_graph(tiles=32)
    Engine(graph, prog, options={"executableCache.directory": str(wider)})
    (foreign,) = wider.glob("*.ipuexe")
    entry, out = _stored_entry(tmp_path / "two")
    shutil.copyfile(foreign, entry)
    _rewrite(entry, lambda m: m.update(key=entry.name.removesuffix(".ipuexe")))
    with pytest.warns(Warned, match=r"ignored .*: its compute sets differ"):
        _runs_correctly_and_heals(tmp_path / "two", out, monkeypatch, capsys)


def test_an_entry_made_by_another_engine_version_is_ignored(tmp_path, monkeypatch, capsys):
    entry, out = _stored_entry(tmp_path)
    _rewrite(entry, lambda m: m.update(engine="0.0.1+old"))
    with pytest.warns(Warned, match="ignored .*: it was made by another engine version"):
        _runs_correctly_and_heals(tmp_path, out, monkeypatch, capsys)


def test_an_entry_of_a_newer_format_is_ignored(tmp_path, monkeypatch, capsys):
    entry, out = _stored_entry(tmp_path)
    bundle = read_bundle(entry, KIND, FORMAT[0], MAX_ENTRY_BYTES)
    write_bundle(entry, KIND, (FORMAT[0] + 1, 0), bundle.meta, bundle.arrays)
    with pytest.warns(Warned, match=r"ignored .*: format version 2\.0; this reader knows"):
        _runs_correctly_and_heals(tmp_path, out, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("hostile", "reason"),
    [
        ({"@": "posix.system", "command": "touch pwned"}, "record kind 'posix.system' is not"),
        ({"@": "CachedCompile", "known": 1, "model": 2}, "CachedCompile.known holds a int"),
        ({"@": "CachedCompile"}, "a CachedCompile record has fields"),
        ({"@": "array", "name": "/nowhere"}, "array '/nowhere' is missing"),
        ([[[[[[[[[[[[[[[1]]]]]]]]]]]]]]], "the header is not valid CBOR: maximum container"),
        ([[[[[[[[[[[[[1]]]]]]]]]]]]], "the entry is nested too deeply"),
    ],
    ids=["unknown class", "wrong field type", "missing fields", "missing array", "deep", "deep2"],
)
def test_a_crafted_entry_builds_nothing_but_the_engine_records(
    tmp_path, monkeypatch, capsys, hostile, reason
):
    entry, out = _stored_entry(tmp_path)
    _rewrite(entry, lambda m: m.update(entry=hostile))
    monkeypatch.chdir(tmp_path)
    with pytest.warns(Warned, match=f"ignored .*: {reason}"):
        _runs_correctly_and_heals(tmp_path, out, monkeypatch, capsys)
    assert not (tmp_path / "pwned").exists()


def test_a_cache_folder_that_cannot_be_made_is_a_warning_naming_the_option(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for folder in (blocker, blocker / "cache"):
        with pytest.warns(Warned, match=r"engine option executableCache\.directory=.*cannot be"):
            engine, device, tensors = engine_with_cache(folder)
        out = run_bert(engine, device, tensors)
        expected = bert_reference(tensors)
        assert np.max(np.abs(out - expected)) < 1e-4 * np.max(np.abs(expected))
    assert blocker.read_text() == "not a folder"


def test_an_entry_that_cannot_be_written_is_a_warning_naming_the_option(tmp_path):
    entry, out = _stored_entry(tmp_path)
    entry.unlink()
    entry.mkdir()  # garbage where the entry goes: a folder of that name
    (tmp_path / "notes.txt").write_text("someone else's file")
    with pytest.warns(Warned) as caught:
        engine, device, tensors = engine_with_cache(tmp_path)
    messages = [str(w.message) for w in caught]
    assert any(f"ignored {entry}: cannot read: it is a folder" in m for m in messages)
    assert any(
        f"cannot store {entry}" in m and "engine option executableCache.directory" in m
        for m in messages
    )
    assert np.array_equal(run_bert(engine, device, tensors), out)
    assert (tmp_path / "notes.txt").read_text() == "someone else's file"


def test_a_temporary_file_of_a_killed_writer_is_never_loaded(tmp_path, monkeypatch, capsys):
    entry, out = _stored_entry(tmp_path)
    half = entry.read_bytes()[: entry.stat().st_size // 2]
    entry.unlink()
    left = tmp_path / f".{entry.name}.0123456789ab.tmp"  # as atomic_write names them
    left.write_bytes(half)
    with poplar_info_log(monkeypatch, capsys) as lines:
        engine, device, tensors = engine_with_cache(tmp_path)
    assert any(f"compiled and stored {entry}" in s for s in lines)
    assert np.array_equal(run_bert(engine, device, tensors), out)
    assert not left.exists()  # its writer is gone (no lock): removed


def _run_bert_example(cache, limit: int | None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps({"executableCache.directory": str(cache)})

    def limit_file_size() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    sizes = ["--seq", "8", "--hidden", "16", "--heads", "2", "--ffn", "32"]
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "bert_encoder_layer.py"), *sizes],
        env=env, capture_output=True, text=True, timeout=600, preexec_fn=limit_file_size,
    )  # fmt: skip


def test_a_full_disk_is_a_warning_and_the_program_runs_to_the_same_output(tmp_path):
    full, roomy = tmp_path / "full", tmp_path / "roomy"
    reference = _run_bert_example(roomy, None)
    assert reference.returncode == 0, reference.stderr
    assert len(list(roomy.glob("*.ipuexe"))) == 1
    result = _run_bert_example(full, 64 * 1024)  # the entry needs more than 64 KiB
    assert result.returncode == 0, result.stderr
    assert result.stdout == reference.stdout  # the error vs numpy and the summary
    assert "ExecutableCacheWarning: executable cache: cannot store" in result.stderr
    assert "File too large" in result.stderr
    assert "engine option executableCache.directory" in result.stderr
    assert list(full.iterdir()) == []  # no entry, no temporary file


class _TaggedSequence(Sequence):
    """A user's program subclass carrying an object the key cannot describe."""

    def __init__(self, *programs, note: object) -> None:
        super().__init__(*programs, name="tagged")
        self.note = note


def test_a_program_the_key_cannot_describe_compiles_without_the_cache(tmp_path):
    device, graph, prog, tensors = bert_graph()
    tagged = _TaggedSequence(prog, note=object())
    with pytest.warns(Warned, match="not used for this program: the executable cache cannot"):
        engine = Engine(graph, tagged, options={"executableCache.directory": str(tmp_path)})
    expected = bert_reference(tensors)
    out = run_bert(engine, device, tensors)
    assert np.max(np.abs(out - expected)) < 1e-4 * np.max(np.abs(expected))
    assert list(tmp_path.iterdir()) == []

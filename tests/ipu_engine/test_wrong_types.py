"""The wrong-type sweep (issue 31, extended by issue 30): every public function of the
engine -- Graph, Engine and Tensor methods, popops / poplin / popnn / poputil functions,
program constructors, the front end's nn layers, the pvti API and its metrics -- called
with a wrong-typed value (None, a str, a float, a list, a dict, an object(), a negative
int, an int beyond 64 bits, NaN) in each argument in turn, the others well-formed. Every failure
is an EngineError with a message; never a raw TypeError, AttributeError, KeyError...
(350 of 1,562 such calls escaped before the argument checker covered every entry point)."""

from __future__ import annotations

import pytest

import ipu_engine.pvti as pvti
from ipu_engine import EngineError
from tests.ipu_engine.wrong_type_values import WRONG, make_context
from tests.ipu_engine.wrong_types import Target, arguments, call_with, public_targets

TARGETS = public_targets()


@pytest.fixture(autouse=True)
def _traces_in_tmp(tmp_path, monkeypatch):
    """pvti.enable("traces") writes under the test's folder, and tracing stops after."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PVTI_OPTIONS", raising=False)
    yield
    pvti.disable()


def test_the_sweep_covers_the_public_surface() -> None:
    names = {t.name for t in TARGETS}
    for expected in (
        "Graph", "Graph.add_variable", "Graph.add_constant", "Graph.add_vertex", "Graph.connect",
        "Graph.set_tile_mapping", "Graph.create_host_read", "Engine", "Engine.run",
        "Engine.write_tensor", "ipu_engine.popops.add", "ipu_engine.popops.reduce",
        "ipu_engine.poplin.mat_mul", "ipu_engine.poplin.convolution",
        "ipu_engine.popnn.softmax", "ipu_engine.poputil.map_tensor_linearly", "Repeat",
        "If", "Copy", "pvti.enable", "pvti.Tracepoint", "pvti.HeatmapDouble",
        "Tensor.slice", "Tensor.__getitem__", "Tensor.broadcast", "nn.Linear",
        "nn.Layer.load_parameters", "pvti.Series.add", "pvti.HeatmapInt64.add",
    ):  # fmt: skip
        assert expected in names
    assert len(TARGETS) >= 150


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_a_well_formed_call_succeeds(target: Target) -> None:
    # The sweep's base calls are valid, so each wrong value is what the function meets.
    ctx = make_context()
    args, kwargs, _names = arguments(target, ctx)
    target.get(ctx)(*args, **kwargs)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_wrong_typed_arguments_are_engine_errors_with_a_message(target: Target) -> None:
    escaped = []
    _args, _kwargs, names = arguments(target, make_context())
    for name in names:
        for label, wrong in WRONG.items():
            try:
                call_with(target, make_context(), name, wrong)
            except EngineError as error:
                assert str(error), f"{target.name}({name}={label}): an empty message"
            except Exception as error:
                escaped.append(f"{target.name}({name}={label}): {type(error).__name__}: {error}")
            finally:
                pvti.disable()
    assert escaped == []

"""``poptorch.Options`` by PopTorch's names: what each honoured option does to the program
(reports, executable cache, memory proportion, partials type), bad values as errors naming
the option, and PopTorch options the shim lacks as "not supported yet" by name."""

from __future__ import annotations

import json

import pytest

from tests.ipu_engine.poptorch_helpers import require_torch

require_torch()

import torch  # noqa: E402

from ipu_engine import poptorch  # noqa: E402
from ipu_engine.common.errors import OptionError  # noqa: E402

torch.manual_seed(391)


def conv_net() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()


def debug_args(wrapped, api: str) -> list[dict]:
    return [c.args for c in wrapped.session.last.graph.debug.items if c.api == api]


def test_enable_profiling_writes_the_report_named_after_the_model(tmp_path, monkeypatch):
    monkeypatch.delenv("POPLAR_ENGINE_OPTIONS", raising=False)
    opts = poptorch.Options().enableProfiling(str(tmp_path))
    poptorch.inferenceModel(conv_net(), opts)(torch.randn(1, 3, 6, 6))
    assert (tmp_path / "inference" / "profile.pop").is_file()
    poptorch.inferenceModel(conv_net(), opts.modelName("tiny_cnn"))(torch.randn(1, 3, 6, 6))
    assert (tmp_path / "tiny_cnn" / "profile.pop").is_file()


def test_poplar_engine_options_write_reports_as_for_poptorch(tmp_path, monkeypatch):
    env = {"autoReport.all": "true", "autoReport.directory": str(tmp_path / "env")}
    monkeypatch.setenv("POPLAR_ENGINE_OPTIONS", json.dumps(env))
    opts = poptorch.Options().enableProfiling(str(tmp_path / "ignored"))  # the variable wins
    poptorch.inferenceModel(conv_net(), opts)(torch.randn(1, 3, 6, 6))
    assert (tmp_path / "env" / "inference" / "profile.pop").is_file()
    assert not (tmp_path / "ignored").exists()


def test_executable_caching_stores_then_loads_the_program(tmp_path, monkeypatch):
    monkeypatch.delenv("POPTORCH_CACHE_DIR", raising=False)
    x = torch.randn(1, 3, 6, 6)
    first = poptorch.inferenceModel(
        conv_net(), poptorch.Options().enableExecutableCaching(str(tmp_path))
    )
    first(x)
    assert len(list(tmp_path.glob("*.ipuexe"))) == 1
    monkeypatch.setenv("POPTORCH_CACHE_DIR", str(tmp_path))
    assert poptorch.Options().executable_cache_path == str(tmp_path)


def test_available_memory_proportion_per_ipu_plans_the_convolutions():
    opts = poptorch.Options().setAvailableMemoryProportion({"IPU0": 0.1})
    wrapped = poptorch.inferenceModel(conv_net(), opts)
    wrapped(torch.randn(1, 3, 6, 6))
    planned = debug_args(wrapped, "poplin::convolution")
    assert planned and all(a["availableMemoryProportion"] == pytest.approx(0.1) for a in planned)


def test_half_partials_for_a_half_model():
    model = torch.nn.Linear(16, 8).half().eval()
    opts = poptorch.Options()
    opts.Precision.setPartialsType(torch.half)
    wrapped = poptorch.inferenceModel(model, opts)
    x = torch.randn(4, 16).half()
    out = wrapped(x)
    assert out.dtype == torch.half
    torch.testing.assert_close(out.float(), model.float()(x.float()).detach(), rtol=2e-2, atol=2e-2)
    kinds = {
        a.get("partialsType")
        for c in ("poplin::matMul", "poplin::matMulGrouped")
        for a in debug_args(wrapped, c)
    }
    assert kinds == {"half"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda o: o.Training.gradientAccumulation(4),
            "Training.gradientAccumulation is not supported yet",
        ),
        (
            lambda o: o.Training.setAutomaticLossScaling(True),
            "Training.setAutomaticLossScaling is not supported yet",
        ),
        (lambda o: o.TensorLocations, "TensorLocations is not supported yet"),
        (lambda o: o.anchorTensor("x", "y"), "anchorTensor is not supported yet"),
        (
            lambda o: o.Precision.enableStochasticRounding(True),
            "Precision.enableStochasticRounding is not supported yet",
        ),
        (
            lambda o: o.setExecutionStrategy(object()),
            r"setExecutionStrategy\(object\) is not supported yet",
        ),
        (
            lambda o: poptorch.PipelinedExecution("A", "B"),
            "explicit stages and AutoStage are not supported yet",
        ),
    ],
)
def test_poptorch_options_the_shim_lacks_say_so_by_name(call, message):
    with pytest.raises(OptionError, match=message):
        call(poptorch.Options())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda o: o.deviceIterations(0), r"deviceIterations\(0\): needs a whole number >= 1"),
        (lambda o: o.replicationFactor(2.5), r"replicationFactor\(2.5\)"),
        (lambda o: o.outputMode("All"), "needs a poptorch.OutputMode"),
        (lambda o: o.outputMode(poptorch.OutputMode.EveryN), r"outputMode\(EveryN, N\)"),
        (lambda o: o.setAvailableMemoryProportion({"ipu0": 0.5}), "key 'ipu0' must name an IPU"),
        (
            lambda o: o.setAvailableMemoryProportion({"IPU0": 2}),
            r"must be a proportion in \(0, 1\]",
        ),
        (lambda o: o.setAvailableMemoryProportion(0.5), "needs a dict"),
        (lambda o: o.Precision.setPartialsType(torch.int32), "needs torch.float or torch.half"),
        (lambda o: o.modelName(""), "needs a name"),
    ],
)
def test_bad_option_values_are_errors_naming_the_option(call, message):
    with pytest.raises(OptionError, match=message):
        call(poptorch.Options())


def test_a_misspelt_option_suggests_the_right_one():
    with pytest.raises(AttributeError, match="did you mean deviceIterations"):
        poptorch.Options().deviceIteration(4)


def test_options_that_change_nothing_here_are_accepted():
    opts = poptorch.Options().useIpuModel(True).autoRoundNumIPUs(True).randomSeed(1)
    opts.Precision.halfFloatCasting(poptorch.HalfFloatCastingBehavior.HalfUpcastToFloat)
    assert not poptorch.ipuHardwareIsAvailable()
    with pytest.raises(poptorch.Error, match="options must be a poptorch.Options"):
        poptorch.inferenceModel(conv_net(), {"deviceIterations": 2})


def test_poptorch_names_the_shim_lacks_say_so():
    with pytest.raises(
        AttributeError, match="poptorch.DataLoader is not supported yet.*micro-batches"
    ):
        poptorch.DataLoader  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        poptorch.nonsense  # noqa: B018

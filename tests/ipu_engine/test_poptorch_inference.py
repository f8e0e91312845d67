"""``poptorch.inferenceModel`` on the embedded engine against torch running the same model:
inputs and outputs in the model's own structure, device iterations, replicas and output
modes, half, one export per input signature, ``set_available_memory`` and
``ipu_print_tensor``, and the errors a user meets (an export that fails, an operator the
importer lacks, a bad batch, training)."""

from __future__ import annotations

import pytest

from tests.ipu_engine.poptorch_helpers import attributes, exported, ipus_of, require_torch

require_torch()

import torch  # noqa: E402

from ipu_engine import poptorch  # noqa: E402
from ipu_engine.common.errors import EngineError, OnnxError  # noqa: E402
from ipu_engine.poptorch import export as export_module  # noqa: E402

torch.manual_seed(390)


class TwoHeads(torch.nn.Module):
    """Two inputs (one by keyword), a nested output structure."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(6, 4)
        self.conv = torch.nn.Conv2d(2, 3, 3)

    def forward(self, x, image=None):
        y = self.fc(x)
        return {"logits": y, "extra": (self.conv(image), y.sum(dim=1))}


def test_outputs_come_back_as_torch_tensors_in_the_models_structure():
    model = TwoHeads().eval()
    wrapped = poptorch.inferenceModel(model)
    x, image = torch.randn(2, 6), torch.randn(2, 2, 5, 5)
    got, want = wrapped(x, image=image), model(x, image=image)
    assert set(got) == {"logits", "extra"} and isinstance(got["extra"], tuple)
    torch.testing.assert_close(got["logits"], want["logits"].detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got["extra"][0], want["extra"][0].detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got["extra"][1], want["extra"][1].detach(), rtol=1e-5, atol=1e-5)


def test_one_export_per_input_signature(monkeypatch):
    calls = []
    real = export_module.export_model

    def counting(*args, **kwargs):
        calls.append(args[1][0].shape)
        return real(*args, **kwargs)

    monkeypatch.setattr("ipu_engine.poptorch.executor.export_model", counting)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2)).eval()
    wrapped = poptorch.inferenceModel(model)
    for rows in (4, 4, 5, 4):
        x = torch.randn(rows, 3)
        torch.testing.assert_close(wrapped(x), model(x).detach())
    assert [tuple(s) for s in calls] == [(4, 3), (5, 3)]
    with torch.no_grad():  # new weights on the host: copied when asked, as in PopTorch
        model[0].weight.mul_(2)
    wrapped.copyWeightsToDevice()
    x = torch.randn(4, 3)
    torch.testing.assert_close(wrapped(x), model(x).detach())
    assert len(calls) == 3


@pytest.mark.parametrize(
    ("mode", "period"),
    [("All", None), ("Default", None), ("Final", None), ("Sum", None), ("EveryN", 2)],
)
def test_device_iterations_and_replicas_return_what_output_mode_asks(mode, period):
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()).eval()
    opts = poptorch.Options().deviceIterations(4).replicationFactor(2)
    opts.outputMode(getattr(poptorch.OutputMode, mode), period)
    x = torch.randn(4 * 2 * 3, 3)  # 4 iterations x 2 replicas x a micro-batch of 3
    got = poptorch.inferenceModel(model, opts)(x)
    per_iteration = model(x).detach().reshape(4, 6, 2)  # iteration slowest, replica fastest
    want = {
        "All": per_iteration.reshape(24, 2),
        "Default": per_iteration.reshape(24, 2),
        "Final": per_iteration[-1],
        "Sum": per_iteration.sum(dim=0),
        "EveryN": per_iteration[1::2].reshape(12, 2),
    }[mode]
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_a_batch_that_does_not_split_into_micro_batches_is_an_error():
    wrapped = poptorch.inferenceModel(
        torch.nn.Linear(3, 2).eval(), poptorch.Options().deviceIterations(4)
    )
    with pytest.raises(EngineError, match=r"input 0 has shape \[6, 3\].*multiple of 4"):
        wrapped(torch.randn(6, 3))


def test_half_models_return_half_as_in_poptorchs_guide():
    model = torch.nn.Linear(1, 10).half()
    out = poptorch.inferenceModel(model, poptorch.Options())(torch.tensor([1.0]).half())
    assert out.dtype == torch.half
    torch.testing.assert_close(
        out, model.float()(torch.tensor([1.0])).half().detach(), rtol=2e-3, atol=2e-3
    )


class Cast(torch.nn.Module):
    def forward(self, x, y):  # PopTorch's "casting resolves to the correct type" model
        return x.to(y.dtype) + y


@pytest.mark.parametrize(
    ("a", "b", "result"),
    [
        (torch.float16, torch.float16, torch.float16),
        (torch.float16, torch.float32, torch.float32),
        (torch.float32, torch.float16, torch.float16),
        (torch.float32, torch.float32, torch.float32),
    ],
)
def test_half_and_float_inputs_resolve_as_torch_resolves_them(a, b, result):
    x, y = torch.tensor([1.5], dtype=a), torch.tensor([0.25], dtype=b)
    got = poptorch.inferenceModel(Cast())(x, y)
    assert got.dtype == result and float(got) == 1.75


class Marked(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 3)

    def forward(self, x):
        y = poptorch.set_available_memory(self.conv(x), 0.2)
        y = poptorch.ipu_print_tensor(y.mean(dim=(2, 3)), "pooled")
        return poptorch.set_available_memory(self.fc(y), 0.4)


def test_set_available_memory_plans_the_op_that_made_the_tensor():
    model = Marked().eval()
    wrapped = poptorch.inferenceModel(model)
    x = torch.randn(2, 4, 6, 6)
    torch.testing.assert_close(wrapped(x), model(x).detach(), rtol=1e-4, atol=1e-5)
    proto = exported(wrapped)
    assert ipus_of(proto, "Conv", "__available_memory_proportion") == [pytest.approx(0.2)]
    assert ipus_of(proto, "Gemm", "__available_memory_proportion") == [pytest.approx(0.4)]
    planned = [
        c.args for c in wrapped.session.last.graph.debug.items if c.api == "poplin::convolution"
    ]
    assert planned and all(a["availableMemoryProportion"] == pytest.approx(0.2) for a in planned)


def test_ipu_print_tensor_prints_each_micro_batch_after_the_run(capsys):
    model = Marked().eval()
    wrapped = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(2))
    x = torch.randn(2, 4, 6, 6)
    out = wrapped(x)
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in printed if ":" in line][:2] == ["pooled", "pooled"]
    assert out.shape == (2, 3)  # the print is not an output of the model
    assert len(exported(wrapped).graph.output) == 2  # it is the exported program's


def test_set_available_memory_checks_its_proportion():
    with pytest.raises(EngineError, match=r"proportion 1.5 is not in \(0, 1\]"):
        poptorch.set_available_memory(torch.ones(2), 1.5)
    with pytest.raises(EngineError, match="needs a torch.Tensor"):
        poptorch.set_available_memory([1.0], 0.5)
    with pytest.raises(EngineError, match="title 3 is not a str"):
        poptorch.ipu_print_tensor(torch.ones(2), 3)


def test_a_model_torch_cannot_export_is_an_error_naming_it_and_why():
    class DataDependent(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # a Python branch on a value: torch.export cannot trace it
                return x * 2
            return x

    with pytest.raises(
        poptorch.ExportError, match=r"torch.export could not trace DataDependent: \w+"
    ):
        poptorch.inferenceModel(DataDependent())(torch.ones(3))


def test_an_operator_the_importer_lacks_names_the_node():
    class Fourier(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()

    with pytest.raises(OnnxError, match=r"(?i)DFT|not supported|no lowering"):
        poptorch.inferenceModel(Fourier())(torch.randn(8))


def test_training_models_are_refused_with_the_way_out():
    with pytest.raises(
        EngineError, match="trainingModel is not supported: export the model for inference"
    ):
        poptorch.trainingModel(torch.nn.Linear(2, 2))


def test_a_model_in_training_mode_with_dropout_is_warned_about():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout(0.5))
    with pytest.warns(UserWarning, match=r"training mode.*model.eval\(\)"):
        poptorch.inferenceModel(model)
    assert attributes is not None


def test_compile_builds_the_program_before_the_first_call():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2)).eval()
    wrapped = poptorch.inferenceModel(model)
    assert not wrapped.isCompiled()
    x = torch.randn(2, 3)
    wrapped.compile(x)
    assert wrapped.isCompiled() and wrapped.session.last is not None
    torch.testing.assert_close(wrapped(x), model(x).detach())

"""PopTorch's annotations through the export: ``Block``, ``BlockFunction`` and ``BeginBlock``
place each exported node on its IPU (PopART's ``__ipu_number``, and ``__pipeline_stage``
when pipelined); the pipelined and sharded programs give torch's own results."""

from __future__ import annotations

import pytest

from tests.ipu_engine.poptorch_helpers import attributes, exported, ipus_of, require_torch

require_torch()

import torch  # noqa: E402

from ipu_engine import poptorch  # noqa: E402
from ipu_engine.common.errors import EngineError  # noqa: E402

torch.manual_seed(39)


class Inline(torch.nn.Module):
    """PopTorch's "annotating a model directly" example (pipeline_simple.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.layer1 = torch.nn.Linear(5, 10)
        self.layer2 = torch.nn.Linear(10, 5)
        self.layer3 = torch.nn.Linear(5, 5)
        self.layer4 = torch.nn.Linear(5, 5)
        self.act = torch.nn.ReLU()
        self.softmax = torch.nn.Softmax(dim=1)

    def forward(self, x):
        poptorch.Block.useAutoId()
        with poptorch.Block(ipu_id=0):
            x = self.act(self.layer1(x))
        with poptorch.Block(ipu_id=1):
            x = self.act(self.layer2(x))
        with poptorch.Block(ipu_id=2):
            x = self.act(self.layer3(x))
            x = self.act(self.layer4(x))
        with poptorch.Block(ipu_id=3):
            x = self.softmax(x)
        return x


class Decorated(Inline):
    """PopTorch's "annotating functions" example: two blocks, IPUs 0 and 1."""

    def forward(self, x):
        poptorch.Block.useAutoId()
        x = self.block_one(x)
        x = self.block_two(x)
        return self.final_activation(x)

    @poptorch.BlockFunction(ipu_id=0)
    def block_one(self, x):
        return self.act(self.layer2(self.act(self.layer1(x))))

    @poptorch.BlockFunction(ipu_id=1)
    def block_two(self, x):
        return self.act(self.layer4(self.act(self.layer3(x))))

    @poptorch.BlockFunction(ipu_id=1)
    def final_activation(self, x):
        return self.softmax(x)


def small_cnn() -> torch.nn.Sequential:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, padding=1, groups=8),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 4),
    ).eval()


def test_blocks_inline_run_as_a_four_stage_pipeline_equal_to_torch():
    model = Inline()
    opts = poptorch.Options().deviceIterations(4)
    wrapped = poptorch.inferenceModel(model, options=opts)
    x = torch.rand((4, 5))
    out = wrapped(x)
    torch.testing.assert_close(out, model(x).detach(), rtol=1e-5, atol=1e-6)
    proto = exported(wrapped)
    ipus = attributes(proto, "__ipu_number")
    assert ipus == sorted(ipus) and set(ipus) == {0, 1, 2, 3}
    assert attributes(proto, "__pipeline_stage") == ipus
    assert wrapped.session.ipus == 4
    assert ipus_of(proto, "Softmax") == [3] and ipus_of(proto, "Gemm") == [0, 1, 2, 2]


def test_block_functions_place_their_layers():
    model = Decorated()
    wrapped = poptorch.inferenceModel(model, poptorch.Options().deviceIterations(2))
    x = torch.rand((6, 5))
    torch.testing.assert_close(wrapped(x), model(x).detach(), rtol=1e-5, atol=1e-6)
    assert ipus_of(exported(wrapped), "Gemm") == [0, 0, 1, 1]


def test_begin_block_shards_the_layers_after_it():
    model = small_cnn()
    model[2] = poptorch.BeginBlock(model[2], ipu_id=1)
    model[6] = poptorch.BeginBlock(model[6], ipu_id=2)
    opts = poptorch.Options().setExecutionStrategy(poptorch.ShardedExecution())
    wrapped = poptorch.inferenceModel(model, opts)
    x = torch.randn(2, 3, 8, 8)
    torch.testing.assert_close(wrapped(x), model(x).detach(), rtol=1e-4, atol=1e-5)
    proto = exported(wrapped)
    assert ipus_of(proto, "Conv") == [0, 1] and ipus_of(proto, "Gemm") == [2]
    assert set(attributes(proto, "__pipeline_stage")) == {None}  # sharded: no stages
    assert wrapped.session.ipus == 3


def test_a_model_without_blocks_gets_no_placement():
    model = small_cnn()
    wrapped = poptorch.inferenceModel(model)
    x = torch.randn(1, 3, 8, 8)
    torch.testing.assert_close(wrapped(x), model(x).detach(), rtol=1e-4, atol=1e-5)
    assert set(attributes(exported(wrapped), "__ipu_number")) == {None}


def test_blocks_do_nothing_when_the_model_runs_in_torch():
    model = Inline()
    x = torch.rand((3, 5))
    first = model(x)
    poptorch.inferenceModel(model, poptorch.Options().deviceIterations(4))(torch.rand(4, 5))
    torch.testing.assert_close(model(x), first)
    import torch.fx.traceback as fx_traceback

    assert "custom" not in fx_traceback.current_meta  # the exporter's metadata put back


def test_a_pipeline_needs_as_many_device_iterations_as_stages():
    wrapped = poptorch.inferenceModel(Inline(), poptorch.Options().deviceIterations(2))
    with pytest.raises(EngineError, match=r"deviceIterations >= 4.*opts.deviceIterations\(4\)"):
        wrapped(torch.rand((2, 5)))


def test_pipeline_stages_that_go_back_are_refused_naming_the_node():
    class Back(Inline):
        def forward(self, x):
            with poptorch.Block(ipu_id=1):
                x = self.act(self.layer1(x))
            with poptorch.Block(ipu_id=0):
                return self.layer2(x)

    wrapped = poptorch.inferenceModel(Back(), poptorch.Options().deviceIterations(2))
    with pytest.raises(EngineError, match=r"Gemm node .* runs on IPU 0 after IPU 1.*Sharded"):
        wrapped(torch.rand((2, 5)))


def test_bad_block_arguments_are_errors_naming_them():
    with pytest.raises(EngineError, match="ipu_id must be a whole number"):
        poptorch.Block(ipu_id=-1)
    with pytest.raises(EngineError, match="user_id must be a str"):
        poptorch.BlockFunction(user_id=3)
    layer = torch.nn.Linear(2, 2)
    poptorch.BeginBlock(layer, ipu_id=1)
    with pytest.raises(EngineError, match="already been assigned to a block"):
        poptorch.BeginBlock(layer, ipu_id=2)
    with pytest.raises(EngineError, match="neither a torch.nn.Module nor a function"):
        poptorch.BeginBlock(42, ipu_id=1)

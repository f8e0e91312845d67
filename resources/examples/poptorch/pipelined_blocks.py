"""PopTorch's model-partitioning examples from its user guide, run on the embedded engine
with `import poptorch` replaced by `from ipu_engine import poptorch`:

- ``BeginBlock`` on existing layers: a torchvision ResNet-18 (random weights) split over
  four IPUs at layer2, layer3 and layer4, pipelined over ``deviceIterations(4)``
  micro-batches (the guide annotates a BERT from the Hugging Face hub the same way);
- ``Block`` scopes inside ``forward`` and ``BlockFunction``-decorated methods, on a small
  network of four Linear layers.

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \
        python resources/examples/poptorch/pipelined_blocks.py
    popvision report/resnet18_pipelined
"""

import torch
import torchvision

from ipu_engine import poptorch

# -- BeginBlock: layers before layer2 on IPU 0, then one IPU per block -----------------
model = torchvision.models.resnet18(weights=None)
model.eval()
model.layer2 = poptorch.BeginBlock(model.layer2, ipu_id=1)
model.layer3 = poptorch.BeginBlock(model.layer3, ipu_id=2)
model.layer4 = poptorch.BeginBlock(model.layer4, ipu_id=3)

# a pipeline over 4 IPUs needs at least 4 micro-batches per call
data_batch_size = 4
opts = poptorch.Options()
opts.deviceIterations(data_batch_size)
opts.modelName("resnet18_pipelined")

inference_model = poptorch.inferenceModel(model, opts)
images = torch.randn(data_batch_size, 3, 224, 224)
out = inference_model(images)
print(
    f"ResNet-18 over 4 IPUs: {tuple(out.shape)}, largest difference from torch "
    f"{(out - model(images)).abs().max():.2e}"
)


# -- Block scopes and BlockFunction ---------------------------------------------------
class Network(torch.nn.Module):
    def __init__(self):
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


class DecoratedNetwork(Network):
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


for network in (Network(), DecoratedNetwork()):
    opts = poptorch.Options()
    opts.deviceIterations(4)
    opts.modelName(type(network).__name__)
    poptorch_model = poptorch.inferenceModel(network, options=opts)
    x = torch.rand((4, 5))
    out = poptorch_model(x)
    torch.testing.assert_close(out, network(x).detach(), rtol=1e-5, atol=1e-6)
    print(f"{type(network).__name__}: {tuple(out.shape)} equal to torch's")

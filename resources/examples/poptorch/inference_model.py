"""PopTorch's inferenceModel example from its user guide (a torchvision MobileNet v2 on an
ImageNet-sized picture, then a half Linear layer), run on the embedded engine: the script
PopTorch documents, with `import poptorch` replaced by `from ipu_engine import poptorch` and
`weights=None` for the pretrained weights (nothing downloads here).

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \
        python resources/examples/poptorch/inference_model.py
    popvision report/inference
"""

import torch
import torchvision

from ipu_engine import poptorch

# an ImageNet-sized picture
picture = torch.randn([1, 3, 224, 224])

model = torchvision.models.mobilenet_v2(weights=None)
model.train(False)

# wrapped for the IPU; the first call exports and compiles it
inference_model = poptorch.inferenceModel(model)
out_tensor = inference_model(picture)

top_five = torch.topk(torch.softmax(out_tensor, 1), 5)
print(top_five)

# the same on the CPU
native_out = model(picture)
native_top_five = torch.topk(torch.softmax(native_out, 1), 5)
assert any(top_five[1][0] == native_top_five[1][0])
print(f"largest difference from torch: {(out_tensor - native_out).abs().max():.2e}")

# half: the layer's weights and its input cast to float16, the result comes back in half
layer = torch.nn.Linear(1, 10)
layer.half()
t1 = torch.tensor([1.0]).half()
opts = poptorch.Options()
half_model = poptorch.inferenceModel(layer, opts)
out = half_model(t1)
assert out.dtype == torch.half
print(f"half output: {out}")

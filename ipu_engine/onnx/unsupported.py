"""The ONE list of ONNX backend tests the importer does not pass, each with its reason: the
patterns ``onnx.backend.test.BackendTest.exclude`` takes (``tests/ipu_engine/
test_onnx_backend.py``). A test matching none of them must pass.
"""

from __future__ import annotations

#: The operators of ONNX's per-operator (node) suite the runner runs: issue 39's, whose node
#: tests came with them (the rest of the node suite is not part of the runner's run).
NODE_TESTS = r"^test_(scatter|resize|upsample|convtranspose|lstm|gru)"

_DOUBLE = (
    "float64 (double) tensors: the IPU computes in float32, and these tests' inputs are "
    "uninitialised memory whose values lie beyond float32's range"
)
_3D = "3-D convolution and pooling: poplin and popnn build 1-D and 2-D ones only"

#: pattern -> why the tests it matches are excluded
EXCLUDED: dict[str, str] = {
    r"_cuda$": "the IPU Model runs on the host's CPU; CUDA is not a device of this backend",
    r"^test_expand_shape_model\d_cpu$": (
        "the target shape is a model input: the graph must be static when it is compiled "
        "(PopART's rule too)"
    ),
    r"^test_gradient_of_": "the ai.onnx.preview.training domain (Gradient): inference only",
    r"^test_sequence_model\d_cpu$": "sequence types (SequenceConstruct, ...): tensors only",
    r"^test_strnorm_model_": "string tensors (StringNormalizer): the IPU holds numbers only",
    r"^test_(Conv|AvgPool|MaxPool)3d": _3D,
    r"^test_convtranspose_3d_cpu$": _3D,
    r"^test_MaxPool[12]d_stride_padding_dilation_cpu$": "MaxPool with dilations > 1: popnn's "
    "pools have no dilation",
    r"^test_operator_add(_size1_right|_size1_singleton)?_broadcast_cpu$": _DOUBLE,
    r"^test_operator_addconstant_cpu$": _DOUBLE,
    r"^test_(bvlc_alexnet|densenet121|inception_v[12]|resnet50|shufflenet|squeezenet|vgg19|zfnet512)"
    r"_cpu$": (
        "the light models' weights are constants, so every logit is one number (1e9..1e21) and "
        "the runner's probabilities are decided by float32 rounding in the summation order "
        "(squeezenet: 1e-7 relative in the logits, 0.00245 for 0.001 in the output); they also "
        "take 15 s to minutes and up to 10+ GB each. tests/ipu_engine/test_onnx_light.py "
        "compares squeezenet's, shufflenet's and inception_v1's logits with onnxruntime instead"
    ),
}

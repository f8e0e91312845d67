"""PopLibs' poplin: matrix multiplication and convolution planned over tiles."""

from ipu_engine.poplar.journal import record_api
from ipu_engine.poplin.conv import convolution
from ipu_engine.poplin.conv_plan import ConvPlan, ConvShape, plan_convolution
from ipu_engine.poplin.matmul import (
    create_mat_mul_input_rhs,
    mat_mul,
    mat_mul_grouped,
    mat_mul_plan,
)
from ipu_engine.poplin.planner import MatMulPlan, plan_matmul
from ipu_engine.poplin.transposed_conv import conv_transpose

__all__ = [
    "ConvPlan",
    "ConvShape",
    "MatMulPlan",
    "conv_transpose",
    "convolution",
    "create_mat_mul_input_rhs",
    "mat_mul",
    "mat_mul_grouped",
    "mat_mul_plan",
    "plan_convolution",
    "plan_matmul",
]

record_api(globals(), "poplin", __all__)

"""PopLibs' poplin: matrix multiplication planned over tiles."""

from ipu_engine.poplin.matmul import mat_mul, mat_mul_plan
from ipu_engine.poplin.planner import MatMulPlan, plan_matmul

__all__ = ["MatMulPlan", "mat_mul", "mat_mul_plan", "plan_matmul"]

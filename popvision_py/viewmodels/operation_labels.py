"""How Operations names its groupings and the rows without a label."""

from __future__ import annotations

GROUP_BY_LABELS = {
    "op": "Library op (PopLibs call)",
    "layer": "Layer (outermost name scope)",
    "name": "Operation (debug name of the call)",
    "framework": "Framework op (ONNX node, outermost call)",
    "framework_op": "Framework op type (onnx::Conv)",
    "context": "Debug context (full name)",
    "phase": "Phase (pipeline ramp-up / steady state / ramp-down, feeds, all-reduce)",
}
NONE_LABEL = "(none)"
NO_PHASE_LABEL = "(no phase)"


def operation_label(label: str, group_by: str = "op") -> str:
    """A row's label as shown: "" is (none), or (no phase) by phase."""
    if label:
        return label
    return NO_PHASE_LABEL if group_by == "phase" else NONE_LABEL

"""The ways to group a report's debug contexts (``debug_groups``) and its operations
(``operation_index``: those and the pipeline phase), by name only: the command line's
choices are made from these without importing what computes them."""

from __future__ import annotations

GROUPINGS = ("op", "layer", "name", "framework", "framework_op", "context")
PHASE = "phase"
OPERATION_GROUPINGS = (*GROUPINGS, PHASE)

"""The availableMemoryProportion advice in words, from hand figures against a 638,976-byte
tile: a proportion advised lower rules the current plan out, and with headroom the advice
is the other way, more memory for fewer cycles, never "or lower"."""

from __future__ import annotations

import pytest

from profiler_core.insights.planned_ops import PlannedOp, more_memory_advice
from profiler_core.insights.planned_ops import advice as planned_advice

TILE_BYTES = 638_976


@pytest.mark.parametrize(
    ("temp_bytes", "proportion", "expected"),
    [
        (28_036, 0.6, "to 0.02 or lower"),  # half of 4.39% of a tile, to a hundredth
        (636_600, 1.0, "to 0.49 or lower"),  # half of 99.6%
        (5_000, 0.6, "to 0.003 or lower"),  # half of 0.78%: below 0.01, one digit
        (11_956, 0.01, "already needs more than its availableMemoryProportion"),
        (None, None, "below the share of a tile the plans' temporaries use"),
    ],
)
def test_the_advised_proportion_rules_the_current_plan_out(temp_bytes, proportion, expected):
    """Hand figures against a 638,976-byte tile: a plan over its own budget (11,956 bytes
    is more than 1% of a tile) is already the smallest, so no proportion is advised; a
    report without the plan's figures gets no number."""
    op = PlannedOp("m4", "poplin::matMul", proportion, temp_bytes)
    text = planned_advice([op], 638_976, "fewer partials")
    assert expected in text
    advised = op.advised_proportion(638_976)
    if advised is not None and proportion is not None and temp_bytes <= proportion * 638_976:
        assert advised * 638_976 < temp_bytes


@pytest.mark.parametrize(
    ("temp_bytes", "proportion", "headroom", "expected"),
    [
        # (28,036 + 602,108) / 638,976 = 0.986: up to 0.98; the plan is within 0.6
        (28_036, 0.6, 602_108, "raise its availableMemoryProportion, up to 0.98"),
        (28_036, 0.6, 602_108, "fastest plan within 0.6"),
        # 11,956 bytes is over 1% of a tile: no plan fitted, so raising surely helps
        (11_956, 0.01, 300_000, "No plan of m4 fitted its proportion"),
        # (100,000 + 200,000) / 638,976 = 0.47, below the 0.6 it already has
        (100_000, 0.6, 200_000, "Its proportion already allows what the headroom does"),
        (None, None, 300_000, "raise its availableMemoryProportion (what the headroom"),
    ],
)
def test_with_headroom_the_advice_is_more_memory_for_fewer_cycles(
    temp_bytes, proportion, headroom, expected
):
    """Hand figures against a 638,976-byte tile whose fullest tile has ``headroom`` free."""
    op = PlannedOp("m4", "poplin::matMul", proportion, temp_bytes)
    text = planned_advice([op], TILE_BYTES, "fewer partials", headroom)
    assert text == more_memory_advice([op], TILE_BYTES, headroom)
    assert expected in text
    assert "or lower" not in text and "only cost cycles" in text
    assert f"the fullest tile has {headroom:,} bytes free" in text

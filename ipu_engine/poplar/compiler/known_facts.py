"""Facts lowering can be given instead of working them out: what an executable cache
entry brings back (see ``executable_cache``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ipu_engine.poplar.compiler.access_sets import ComputeSetFacts
from ipu_engine.poplar.cost_model.exchange import ExchangePlan


@dataclass
class KnownFacts:
    """Each compute set's variables and exchanges by compute set id, and each Copy's
    exchange plan in the order lowering meets the copies."""

    cs_facts: dict[int, ComputeSetFacts] = field(default_factory=dict)
    copy_plans: list[ExchangePlan] = field(default_factory=list)

"""Choosing what to suggest from the predictions of a trial's values: the best value for
the trial's goal, kept only when it helps. ``fit``: the value that fits with the fewest
cycles (none fits: the one leaving the least on the fullest tile, if less than now);
``memory``: the least on the fullest tile; ``speed``: the fewest cycles among those that
fit. A best value that does nothing (within ``NIL``) or harms the goal is dropped, saying
why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from profiler_core.insights.whatif.trials import Trial

NIL = 0.005  # changes smaller than half a percent of the figure are no effect


@dataclass(frozen=True)
class Figures:
    """What the report shows now, or what a change is predicted to give."""

    fits: bool
    fullest_bytes: int
    tiles_over: int
    peak_live_bytes: int
    total_cycles: int | None
    bytes_per_tile: int

    @classmethod
    def from_child(cls, raw: dict[str, Any]) -> Figures:
        cycles = raw.get("total_cycles")
        return cls(
            bool(raw["fits"]),
            int(raw["fullest_bytes"]),
            int(raw["tiles_over"]),
            int(raw["peak_live_bytes"]),
            None if cycles is None else int(cycles),
            int(raw["bytes_per_tile"]),
        )

    def to_dict(self, cycles: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fits": self.fits,
            "fullest_bytes": self.fullest_bytes,
            "tiles_over": self.tiles_over,
            "peak_live_bytes": self.peak_live_bytes,
        }
        if cycles and self.total_cycles is not None:
            out["total_cycles"] = self.total_cycles
        return out


@dataclass(frozen=True)
class Tried:
    value: Any
    figures: Figures | None
    error: str | None = None


@dataclass(frozen=True)
class Choice:
    """A trial's outcome: the value chosen (None when it is dropped) and why."""

    trial: Trial
    tried: tuple[Tried, ...]
    best: Tried | None
    kept: bool
    reason: str = ""
    notes: list[str] = field(default_factory=list)


def _better(a: int, b: int) -> bool:
    return a < b * (1 - NIL)


def _pick(trial: Trial, ok: list[Tried], now: Figures) -> Tried:
    def cycles(t: Tried) -> float:
        c = t.figures.total_cycles
        return float("inf") if c is None else float(c)

    def fullest(t: Tried) -> int:
        return t.figures.fullest_bytes

    if trial.goal == "fit":
        fitting = [t for t in ok if t.figures.fits]
        return (
            min(fitting, key=lambda t: (cycles(t), fullest(t))) if fitting else min(ok, key=fullest)
        )
    if trial.goal == "memory":
        return min(ok, key=lambda t: (fullest(t), cycles(t)))
    fitting = [t for t in ok if t.figures.fits or not now.fits] or ok
    return min(fitting, key=lambda t: (cycles(t), fullest(t)))


def _verdict(trial: Trial, best: Figures, now: Figures) -> str:
    """Why ``best`` is dropped ("" when it is kept)."""
    if now.fits and not best.fits:
        return "it would no longer fit"
    if trial.goal == "fit":
        if best.fits or _better(best.fullest_bytes, now.fullest_bytes):
            return ""
        return "it leaves the fullest tile as full as now"
    if trial.goal == "memory":
        return (
            ""
            if _better(best.fullest_bytes, now.fullest_bytes)
            else "it saves no memory on the fullest tile"
        )
    if best.total_cycles is None or now.total_cycles is None:
        if trial.option == "type" and _better(best.fullest_bytes, now.fullest_bytes):
            return ""
        return "the report has no execution profile, so a gain in cycles cannot be shown"
    if _better(best.total_cycles, now.total_cycles):
        return ""
    if best.total_cycles > now.total_cycles * (1 + NIL):
        return f"it would take more cycles ({best.total_cycles:,}, now {now.total_cycles:,})"
    return "it changes no cycles"


def choose(trial: Trial, tried: list[Tried], now: Figures) -> Choice:
    ok = [t for t in tried if t.figures is not None]
    if not ok:
        errors = [t.error for t in tried if t.error]
        reason = errors[0] if errors else "no value could be planned"
        return Choice(trial, tuple(tried), None, False, f"cannot be planned: {reason}")
    best = _pick(trial, ok, now)
    assert best.figures is not None
    reason = _verdict(trial, best.figures, now)
    return Choice(trial, tuple(tried), best, not reason, reason)

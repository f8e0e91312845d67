"""What the Insights page shows of a what-if, without Qt: for the finding tried, the
predicted sentence (or why nothing is suggested) and one row per value tried, with its
predicted figures next to what the report shows now."""

from __future__ import annotations

from dataclasses import dataclass

from profiler_core.insights.whatif import Choice, Figures, WhatIf


@dataclass(frozen=True)
class TriedRow:
    """One value tried: its text and its figures (or why it could not be planned)."""

    value: str
    figures: str
    chosen: bool


def _value(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def figures_line(figures: Figures) -> str:
    cycles = "" if figures.total_cycles is None else f", {figures.total_cycles:,} cycles"
    fit = "fits" if figures.fits else f"{figures.tiles_over:,} tiles over"
    percent = 100 * figures.fullest_bytes / figures.bytes_per_tile if figures.bytes_per_tile else 0
    return (
        f"{fit}; fullest tile {figures.fullest_bytes:,} bytes ({percent:.1f}%); "
        f"peak {figures.peak_live_bytes:,} bytes{cycles}"
    )


class WhatIfViewModel:
    """One what-if (usually of one finding) as the findings list shows it."""

    def __init__(self, found: WhatIf) -> None:
        self.found = found

    @property
    def available(self) -> bool:
        return self.found.available

    def headline(self) -> str:
        """The line under the finding: the first kept choice's sentence, or why none."""
        found = self.found
        if not found.available:
            return f"What-if not available: {found.reason}"
        if found.kept:
            return found.sentence(found.kept[0])
        moves = [c for c in found.dropped if c.trial.option == "pipelineStage" and c.best]
        if moves:
            best = min(moves, key=lambda c: c.best.figures.total_cycles or 0)
            extra = found.extra.get(id(best), {})
            rate = extra.get("samples_per_second")
            said = (
                f" ({rate:,.0f} samples/s, now {extra['now_samples_per_second']:,.0f})"
                if rate
                else ""
            )
            return (
                f"No layer moved to a neighbouring stage speeds the pipeline up: the best, "
                f"{best.trial.operation} to stage {best.best.value}, {best.reason}{said}."
            )
        if found.dropped:
            return f"Not suggested: {found.dropped[0].reason}."
        return (
            "Nothing to re-plan here: no option a what-if can change addresses this finding "
            "(a Poplar program maps its tensors itself; try the other findings' suggestions)."
        )

    def now_line(self) -> str:
        now = self.found.now
        return "" if now is None else f"Now: {figures_line(now)}"

    def choices(self) -> list[Choice]:
        return list(self.found.choices)

    def sentence(self, choice: Choice) -> str:
        return self.found.sentence(choice)

    def tried_rows(self, choice: Choice) -> list[TriedRow]:
        trial = choice.trial
        extra = self.found.extra.get(id(choice), {})
        rows = []
        for tried in choice.tried:
            chosen = choice.kept and choice.best is tried
            if tried.figures is None:
                text = f"cannot be planned: {tried.error}"
            else:
                text = figures_line(tried.figures)
            if tried is choice.best and extra.get("samples_per_second"):
                text += (
                    f"; {extra['samples_per_second']:,.0f} samples/s "
                    f"(now {extra['now_samples_per_second']:,.0f})"
                )
            what = f"{trial.option} = {_value(tried.value)}"
            if trial.option == "pipelineStage":  # each trial moves its own layer
                what = f"{trial.operation} to stage {_value(tried.value)}"
            rows.append(TriedRow(what, text, chosen))
        return rows

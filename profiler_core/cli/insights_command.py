"""``popvision-cli insights``: does it fit, why not and what to change, as text or JSON; exits
1 when a finding at or above ``--fail-on`` is present (for CI)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table
from profiler_core.insights import Insights, Severity, insights
from profiler_core.insights.whatif import WhatIf, what_if
from profiler_core.report import Report


def insights_command(report: Report, args: argparse.Namespace) -> Output:
    fail_on = Severity.parse(args.fail_on) if args.fail_on else None
    found = insights(report)
    predicted = what_if(report, found, _progress()) if getattr(args, "what_if", False) else None
    findings = Table(
        "findings",
        {
            "severity": [f.severity.label for f in found.findings],
            "rule": [f.rule for f in found.findings],
            "finding": [f.title for f in found.findings],
            "operation": [f.source.label for f in found.findings],
        },
        notes=_finding_notes(found),
    )
    document = found.to_dict()
    tables = [findings] if found.findings else []
    if predicted is not None:
        document["what_if"] = predicted.to_dict()
        tables.append(what_if_table(predicted))
    out = Output(tables, header=_header(found), document=document, csv_table=findings)
    # A section that could not be read makes the answer partial: exit 5 with a warning, as
    # every command says it (a damaged section is not the same as one never written).
    errors = (report.section_error(section) for section in found.missing)
    out.warnings = list(dict.fromkeys(str(error) for error in errors if error is not None))
    if predicted is not None and not predicted.available:
        out.warnings.append(f"what-if: {predicted.reason}")
    hits = [f for f in found.findings if fail_on is not None and f.severity >= fail_on]
    if hits:
        out.exit_code = 1
        out.message = f"{len(hits)} finding(s) at or above {fail_on.label}: {hits[0].title}" + (
            f" ({hits[0].source.label})" if hits[0].source.label else ""
        )
    return out


def _header(found: Insights) -> list[tuple[str, str]]:
    lines = [("Fit", found.fit.sentence())]
    top = found.top_tiles
    lines.append(
        (
            "Fullest tiles",
            ", ".join(
                f"{t} ({b:,} bytes)"
                for t, b in zip(top.tiles.tolist(), top.total.tolist(), strict=True)
            ),
        )
    )
    if found.peak is not None:
        peak = found.peak
        lines.append(
            ("Liveness peak", f"step {peak.step} ({peak.step_name}), {peak.live_bytes:,} bytes")
        )
        for label, group in (
            ("always-live", peak.always_live),
            ("not-always-live", peak.not_always_live),
        ):
            if len(group):
                s = group.sources[0]
                lines.append(
                    (
                        f"Largest {label}",
                        f"{group.names[0]}, {int(group.bytes[0]):,} bytes"
                        + (f", {s.label}" if s.label else ""),
                    )
                )
    for section, why in found.missing.items():
        lines.append((f"Missing {section}", why))
    if not found.findings:
        lines.append(("Findings", "none"))
    return lines


def _finding_notes(found: Insights) -> list[str]:
    notes = []
    for f in found.findings:
        notes.append(f"[{f.severity.label}] {f.title}")
        notes += [f"    {e.text()}" for e in f.evidence]
        notes.append(f"    Try: {f.suggestion}")
    return notes


def what_if_table(predicted: WhatIf) -> Table:
    """One row per kept suggestion: the change and its predicted figures; the sentences
    and the dropped suggestions as notes."""
    kept = predicted.kept
    rows: dict[str, list] = {"rule": [], "operation": [], "option": [], "value": []}
    figures: dict[str, list] = {
        "fits": [],
        "fullest_bytes": [],
        "tiles_over": [],
        "peak_live_bytes": [],
        "total_cycles": [],
    }
    for choice in kept:
        best = choice.best
        assert best is not None and best.figures is not None
        rows["rule"].append(choice.trial.rule)
        rows["operation"].append(choice.trial.operation or "(the program)")
        rows["option"].append(choice.trial.option)
        rows["value"].append(best.value)
        for key, value in best.figures.to_dict().items():
            figures[key].append(value)
        if best.figures.total_cycles is None:
            figures["total_cycles"].append("")
    notes = []
    if not predicted.available:
        notes.append(f"What-if not available: {predicted.reason}")
    else:
        now = predicted.now
        notes.append(
            f"What-if ({predicted.seconds:.1f} s; cycles of {predicted.cycles_basis}): now "
            + (
                ", ".join(
                    f"{k} {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k} {v}"
                    for k, v in now.to_dict().items()
                )
                if now
                else ""
            )
        )
        notes += [f"[what-if] {predicted.sentence(c)}" for c in kept]
        for c in predicted.dropped:
            what = f"{c.trial.option} of {c.trial.operation or 'the program'} ({c.trial.rule})"
            extra = predicted.extra.get(id(c), {})
            if extra.get("samples_per_second"):
                what += (
                    f", {extra['samples_per_second']:,.0f} samples/s predicted "
                    f"(now {extra['now_samples_per_second']:,.0f})"
                )
            notes.append(f"[dropped] {what}: {c.reason}")
    return Table("what-if", rows | figures, notes=notes)


def _progress() -> Callable[[int, int, str], None] | None:
    """Progress lines on stderr while the engine re-plans, when someone is watching."""
    import sys

    if not sys.stderr.isatty():
        return None

    def say(done: int, total: int, what: str) -> None:
        sys.stderr.write(f"popvision-cli: what-if {done + 1}/{total}: {what}\n")
        sys.stderr.flush()

    return say

"""``popvision-cli insights``: does it fit, why not and what to change, as text or JSON; exits
1 when a finding at or above ``--fail-on`` is present (for CI)."""

from __future__ import annotations

import argparse

from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table
from profiler_core.insights import Insights, Severity, insights
from profiler_core.report import Report


def insights_command(report: Report, args: argparse.Namespace) -> Output:
    fail_on = Severity.parse(args.fail_on) if args.fail_on else None
    found = insights(report)
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
    out = Output(
        [findings] if found.findings else [],
        header=_header(found),
        document=found.to_dict(),
        csv_table=findings,
    )
    # A section that could not be read makes the answer partial: exit 5 with a warning, as
    # every command says it (a damaged section is not the same as one never written).
    errors = (report.section_error(section) for section in found.missing)
    out.warnings = list(dict.fromkeys(str(error) for error in errors if error is not None))
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

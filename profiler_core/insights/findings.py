"""What an Insights rule hands back: a finding with its severity, the numbers behind it, the
operation and the line of the user's program that caused it, and what to try."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Severity(enum.IntEnum):
    """How much a finding matters; ordered, so ``--fail-on warning`` means warning or worse."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.upper()]
        except KeyError:
            names = ", ".join(s.label for s in cls)
            raise ValueError(f"severity {text!r}: use one of {names}") from None


@dataclass(frozen=True)
class Evidence:
    """One number behind a finding: ``label`` and ``value`` in ``unit`` ("bytes", "%",
    "cycles", "tiles" or "" for a plain count or text)."""

    label: str
    value: int | float | str
    unit: str = ""

    def text(self) -> str:
        value = self.value
        if isinstance(value, float):
            shown = f"{value:,.1f}" if self.unit == "%" or abs(value) < 1e6 else f"{value:,.0f}"
        elif isinstance(value, int):
            shown = f"{value:,}"
        else:
            shown = str(value)
        unit = "%" if self.unit == "%" else (f" {self.unit}" if self.unit else "")
        return f"{self.label}: {shown}{unit}"


@dataclass(frozen=True)
class SourceRef:
    """Where a finding comes from in the user's program: the operation (the op call's debug
    name and library op, e.g. ``m4`` / ``poplin::matMul``) and its file and line."""

    operation: str = ""
    op: str = ""
    file: str = ""
    line: int = 0

    @property
    def location(self) -> str:
        """``tutorial4_matmul.py:46`` ("" without a file)."""
        if not self.file:
            return ""
        return f"{Path(self.file).name}:{self.line}" if self.line > 0 else Path(self.file).name

    @property
    def label(self) -> str:
        """``m4 (poplin::matMul) at tutorial4_matmul.py:46``, leaving out what is unknown."""
        text = self.operation or self.op
        if self.operation and self.op and self.op != self.operation:
            text = f"{self.operation} ({self.op})"
        if self.location:
            text = f"{text} at {self.location}" if text else self.location
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"operation": self.operation, "op": self.op, "file": self.file, "line": self.line}


@dataclass(frozen=True)
class Finding:
    """One Insights finding. ``weight`` (0..1) is the share of the problem it explains and
    orders findings of one severity (the largest cause first)."""

    rule: str
    severity: Severity
    title: str
    evidence: tuple[Evidence, ...]
    suggestion: str
    source: SourceRef = field(default_factory=SourceRef)
    weight: float = 0.0
    tiles: tuple[int, ...] = ()  # tiles the finding is about (for selecting them in a view)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.label,
            "title": self.title,
            "evidence": [
                {"label": e.label, "value": e.value, "unit": e.unit} for e in self.evidence
            ],
            "operation": self.source.to_dict(),
            "suggestion": self.suggestion,
            "weight": round(self.weight, 4),
            "tiles": list(self.tiles),
        }


def ordered(findings: list[Finding]) -> list[Finding]:
    """Worst severity first, then the largest share of the problem, then by rule id."""
    return sorted(findings, key=lambda f: (-int(f.severity), -f.weight, f.rule, f.title))

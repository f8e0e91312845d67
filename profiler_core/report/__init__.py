"""Opening a report folder: lazily loaded sections, progress and cancellation."""

from profiler_core.report.open import SECTIONS, Report, open_report

__all__ = ["SECTIONS", "Report", "open_report"]

"""Opening a report folder: lazily loaded sections, progress and cancellation, the summary."""

from profiler_core.report.open import SECTIONS, Report, open_report
from profiler_core.report.summary import ReportSummary, report_summary

__all__ = ["SECTIONS", "Report", "ReportSummary", "open_report", "report_summary"]

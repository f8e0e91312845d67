"""Analyses: pure functions from a report's columns to the answers views and scripts need.

Each takes anything with the report sections as attributes (an open ``Report`` or a
``ProfileData``) and returns numpy-backed results; none reads files or knows about Qt.
``memory``, ``tiles``, ``liveness``, ``program_tree``, ``operations``, ``execution``,
``trace_window`` and ``compare`` answer one question each; ``checks`` refuses a report
whose sections contradict each other with a ``ReportError`` naming the section.
"""

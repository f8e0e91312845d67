"""Analyses: pure functions from a report's columns to the answers views and scripts need.

Each takes anything with the report sections as attributes (an open ``Report`` or a
``ProfileData``) and returns numpy-backed results; none reads files or knows about Qt.
"""

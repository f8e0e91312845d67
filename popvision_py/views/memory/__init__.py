"""The Memory report: per-tile chart, selection, category breakdown and variables."""

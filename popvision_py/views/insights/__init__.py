"""The Insights report: does it fit, why not, and what to change."""

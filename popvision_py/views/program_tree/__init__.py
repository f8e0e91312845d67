"""The Program Tree report: lazy tree of program nodes and steps, search, details."""

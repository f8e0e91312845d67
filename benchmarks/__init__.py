"""Benchmarks: measured side by side in one run and printed with their targets (not tests)."""

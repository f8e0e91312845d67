"""Benchmarks: each prints what it measured beside its target, as ratios from one run."""

"""Compiling a graph and its programs: checks, lowering to program steps, vertex plans."""

"""Timelines of spans in lanes, shared by the Execution Trace and the System Trace."""

"""The Execution Trace report: program steps of a run on a timeline per IPU."""

"""autoReport: turning a compiled engine and its runs into report files, via profiler_core."""

"""The Trace model (host + IPU-track timelines as numpy columns), how to open, follow (as
sorted pieces, while it is written) and export one. Readers build columns once; views ask
``events_in_range`` what to draw.
"""

from profiler_core.trace.build import build_trace, trace_from_pvti
from profiler_core.trace.chrome import export_chrome, import_chrome_file, trace_to_chrome
from profiler_core.trace.from_report import execution_trace
from profiler_core.trace.model import Heatmap, Process, Thread, Trace
from profiler_core.trace.open import open_trace
from profiler_core.trace.pieces import PiecedTrace, TracePieces
from profiler_core.trace.tail import TailUpdate, TraceTail

__all__ = [
    "Heatmap",
    "PiecedTrace",
    "Process",
    "TailUpdate",
    "Thread",
    "Trace",
    "TracePieces",
    "TraceTail",
    "build_trace",
    "execution_trace",
    "export_chrome",
    "import_chrome_file",
    "open_trace",
    "trace_from_pvti",
    "trace_to_chrome",
]

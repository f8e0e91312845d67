"""The C modules of issue 42: the tracepoints' hot path and the Chrome JSON import's
kernel; everything else about the package is in pyproject.toml. ``pip install -e .`` builds
them in place.

``profiler_core.formats.pvti._ring`` is the record ring the .pvti writer owns;
``ipu_engine.pvti._tracepoint`` is the Tracepoint type that appends to it through the ring's
header (``_ring.h``), so the engine depends on profiler_core and never the reverse."""

from setuptools import Extension, setup

RING = "profiler_core/formats/pvti"
HEADER = [f"{RING}/_ring.h"]
TRACEPOINT = ("_tracepoint", "_thread_stack", "_channel", "_traced_call")
CHROME_SCAN = ("_chrome_scan", "_chrome_event", "_chrome_intern", "_json_text", "_json_number")
setup(
    ext_modules=[
        Extension("profiler_core.formats.pvti._ring", [f"{RING}/_ring.c"], depends=HEADER),
        Extension(
            "profiler_core.trace._chrome_scan",
            [f"profiler_core/trace/{name}.c" for name in CHROME_SCAN],
            depends=["profiler_core/trace/_chrome_scan.h"],
        ),
        Extension("profiler_core.trace._walk", ["profiler_core/trace/_walk.c"]),
        Extension(
            "ipu_engine.pvti._tracepoint",
            [f"ipu_engine/pvti/{name}.c" for name in TRACEPOINT],
            include_dirs=[RING],
            depends=[*HEADER, "ipu_engine/pvti/_tracepoint.h"],
        ),
    ]
)

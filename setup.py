"""The C modules: the tracepoints' hot path and the Chrome JSON import's kernel (issue
42), the built-in codelets' native kernels (issue 39); everything else about the package is
in pyproject.toml. ``pip install -e .`` builds them in place.

``profiler_core.formats.pvti._ring`` is the record ring the .pvti writer owns;
``ipu_engine.pvti._tracepoint`` is the Tracepoint type that appends to it through the ring's
header (``_ring.h``), so the engine depends on profiler_core and never the reverse.
``ipu_engine.poplar._strided`` copies engine memory between strided views (transposes in
tiles); ``ipu_engine.codelets._kernels`` computes convolution sums and partials in float32
exactly as the vertices round them: both built without fused multiply-adds
(-ffp-contract=off), on the strided arrays of ``ipu_engine/poplar/_strided.h``."""

from setuptools import Extension, setup

RING = "profiler_core/formats/pvti"
HEADER = [f"{RING}/_ring.h"]
TRACEPOINT = ("_tracepoint", "_thread_stack", "_channel", "_traced_call")
CHROME_SCAN = ("_chrome_scan", "_chrome_event", "_chrome_intern", "_json_text", "_json_number")
STRIDED = ("ipu_engine/poplar/_strided.c", "ipu_engine/poplar/_strided_copy.c")
STRIDED_ARRAY = "ipu_engine/poplar/_strided_array.c"
KERNELS = ("_kernels", "_depthwise", "_partials", "_bounds", "_add", "_team", "_team_steps")
NATIVE_ARGS = ["-O3", "-ffp-contract=off"]
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
        Extension(
            "ipu_engine.poplar._strided",
            [*STRIDED, STRIDED_ARRAY],
            depends=["ipu_engine/poplar/_strided.h"],
            extra_compile_args=NATIVE_ARGS,
        ),
        Extension(
            "ipu_engine.codelets._kernels",
            [
                *(f"ipu_engine/codelets/{name}.c" for name in KERNELS),
                "ipu_engine/poplar/_strided_copy.c",
                STRIDED_ARRAY,
            ],
            include_dirs=["ipu_engine/poplar"],
            depends=[
                "ipu_engine/codelets/_kernels.h",
                "ipu_engine/codelets/_team.h",
                "ipu_engine/poplar/_strided.h",
            ],
            extra_compile_args=NATIVE_ARGS,
        ),
    ]
)

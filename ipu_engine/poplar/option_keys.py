"""Every engine option key the engine knows: its value type, default, and whether the engine
honours it or accepts it without effect (so scripts written for Poplar run unchanged).

The keys are ``poplar::Engine`` options of the autoReport, debug and profiler families (the
Poplar and PopLibs API Reference documents them under Engine,
https://docs.graphcore.ai/projects/poplar-api/en/latest/poplar/execution/Engine.html; its
options list could not be read here, so the table holds the keys seen in use in Graphcore's
own material, and a documented key missing from it is still refused):
``profiler.programs.filter``, ``profiler.blocks.filter``, ``profiler.blocks.implicitFlush``,
``profiler.blocks.tile`` and ``profiler.blocks.bufferSize`` in the PopVision
lightweight-profiling tutorial (graphcore/examples,
tutorials/tutorials/popvision/lightweight_profiling); ``autoReport.outputSerializedGraph``
(here a record of ours, ``serialized_graph.bundle``), ``autoReport.outputLoweredVars``,
``debug.retainDebugInformation``, ``debug.loweredVarDumpFile``, ``debug.trace``,
``debug.traceFile``, ``debug.verify`` and ``debug.runtimeVerify`` in Poplar programs' engine
options; ``profiler.format`` ("v3"), ``profiler.includeFlopEstimates``,
``profiler.includeCycleEstimates``, ``profiler.perExecutionStreamCopyCycles`` and
``profiler.replicaToProfile`` in the ``POPLAR_ENGINE_OPTIONS`` of Graphcore's examples and
PopART. The table is data: ``parse_options`` and the README's list read it; nothing else
decides what a key does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ipu_engine.poplar import option_values as v


@dataclass(frozen=True)
class OptionKey:
    """One engine option: how its value is read, its default (None: not set), and what the
    engine does with it (``honoured``) or why it has no effect here."""

    parse: v.Parser
    default: Any
    honoured: bool
    effect: str
    value_type: str


def _honoured(parse: v.Parser, default: Any, value_type: str, effect: str) -> OptionKey:
    return OptionKey(parse, default, True, effect, value_type)


def _no_effect(parse: v.Parser, value_type: str, why: str, default: Any = None) -> OptionKey:
    return OptionKey(parse, default, False, why, value_type)


_BOOL, _COUNT, _PATH, _TEXT, _REGEX = "true/false", "integer >= 0", "path", "text", "regex"
_NO_MODEL = "the IPU Model's cycle estimates are the only cycles it has"
_LEVEL = "tile/vertex/device/ipu"
_LEVEL_EFFECT = "recorded for pva's instrumentationSettings (cycles are per tile at any level)"
_KEEPS_BLOCKS = "the engine keeps every timed block in the host's memory"

ENGINE_OPTION_KEYS: dict[str, OptionKey] = {
    # -- autoReport ----------------------------------------------------------------------
    "autoReport.all": _honoured(
        v.boolean, False, _BOOL, "writes profile.pop (graph and execution) and debug.cbor"
    ),
    "autoReport.directory": _honoured(
        v.path, ".", _PATH, "where each executable's report folder is made"
    ),
    "autoReport.outputGraphProfile": _honoured(
        v.boolean, None, _BOOL, "writes profile.pop at compile time"
    ),
    "autoReport.outputExecutionProfile": _honoured(
        v.boolean, None, _BOOL, "instruments the program and adds its runs to profile.pop"
    ),
    "autoReport.outputDebugInfo": _honoured(v.boolean, None, _BOOL, "writes debug.cbor"),
    "autoReport.executionProfileProgramRunCount": _honoured(
        v.count, 2, _COUNT, "how many runs of each program the report keeps"
    ),
    "autoReport.outputLoweredVars": _no_effect(v.boolean, _BOOL, "no lowered-vars file is made"),
    "autoReport.outputArchive": _no_effect(
        v.boolean, _BOOL, "no archive.a is made (the engine builds no IPU binary)"
    ),
    "autoReport.outputSerializedGraph": _honoured(
        v.boolean,
        None,
        _BOOL,
        "writes serialized_graph.bundle: the graph's record, which what-ifs re-plan",
    ),
    "autoReport.streamAtEachRun": _no_effect(
        v.boolean, _BOOL, "profile.pop is always rewritten after each kept run", default=True
    ),
    # -- debug ---------------------------------------------------------------------------
    "debug.allowOutOfMemory": _honoured(
        v.boolean, False, _BOOL, "a graph over tile memory compiles and reports, but cannot run"
    ),
    "debug.instrument": _honoured(v.boolean, False, _BOOL, "records each run's cycles"),
    "debug.instrumentCompute": _honoured(
        v.boolean, None, _BOOL, "named in the report's instrumentation line"
    ),
    "debug.instrumentExternalExchange": _honoured(
        v.boolean, None, _BOOL, "named in the report's instrumentation line"
    ),
    "debug.instrumentControlFlow": _honoured(
        v.boolean, None, _BOOL, "named in the report's instrumentation line"
    ),
    "debug.computeInstrumentationLevel": _honoured(
        v.choice("tile", "vertex", "device", "ipu"), "tile", _LEVEL, _LEVEL_EFFECT
    ),
    "debug.externalExchangeInstrumentationLevel": _honoured(
        v.choice("tile", "vertex", "device", "ipu"), None, _LEVEL, _LEVEL_EFFECT
    ),
    "debug.outputAllSymbols": _no_effect(
        v.boolean, _BOOL, "the engine links no symbols", default=False
    ),
    "debug.retainDebugInformation": _no_effect(
        v.boolean, _BOOL, "debug contexts are always kept; debug.cbor follows autoReport"
    ),
    "debug.loweredVarDumpFile": _no_effect(v.path, _PATH, "no lowered variables are dumped"),
    "debug.trace": _no_effect(v.boolean, _BOOL, "there is no device-side trace"),
    "debug.traceFile": _no_effect(v.path, _PATH, "there is no device-side trace"),
    "debug.verify": _no_effect(v.boolean, _BOOL, "programs are always checked at compile"),
    "debug.runtimeVerify": _no_effect(v.boolean, _BOOL, "no device code to verify at run time"),
    # -- the executable cache (ours: Poplar's is a framework option) ------------------------
    "executableCache.directory": _honoured(
        v.path, None, _PATH, "stores compiled executables there and loads them unchanged"
    ),
    # -- profiler ------------------------------------------------------------------------
    "profiler.format": _no_effect(v.text, _TEXT, "profile.pop has one format (see its schema)"),
    "profiler.includeFlopEstimates": _no_effect(
        v.boolean, _BOOL, "flop estimates are always in the report"
    ),
    "profiler.includeCycleEstimates": _no_effect(v.boolean, _BOOL, _NO_MODEL),
    "profiler.perExecutionStreamCopyCycles": _no_effect(v.boolean, _BOOL, _NO_MODEL),
    "profiler.replicaToProfile": _no_effect(
        v.count, _COUNT, "every replica runs the same modelled program"
    ),
    # lightweight profiling (compiler/block_marks.py, report/blocks.py)
    "profiler.blocks.filter": _honoured(
        v.regex, None, _REGEX, "times every execution of the Block programs whose name it matches"
    ),
    "profiler.programs.filter": _honoured(
        v.regex, None, _REGEX, "times every execution of the programs whose name it matches"
    ),
    "profiler.blocks.tile": _honoured(
        v.count, 0, _COUNT, "the tile of each IPU that times blocks (recorded with them)"
    ),
    "profiler.blocks.implicitFlush": _no_effect(
        v.boolean, _BOOL, _KEEPS_BLOCKS + ": no BlockFlush stream copy is added"
    ),
    "profiler.blocks.bufferSize": _no_effect(
        v.count, _COUNT, _KEEPS_BLOCKS + ": no block buffer fills or overflows"
    ),
    # -- target --------------------------------------------------------------------------
    "target.deterministicWorkers": _no_effect(
        v.boolean, _BOOL, "the engine is always deterministic", default=True
    ),
}

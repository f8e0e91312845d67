"""The Operations graph of an opened report, or the words the page shows instead: a report
written without its serialized graph says which option writes it; a Poplar program's
report (calls, not a framework graph) says what the page draws; a damaged file is named."""

from __future__ import annotations

from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.operations_graph import OperationsGraphModel
from popvision_py.viewmodels.report_runs import counted_runs
from profiler_core.analysis.framework_graph import FrameworkGraph, framework_graph
from profiler_core.analysis.graph_operations import NodeFigures, node_figures
from profiler_core.errors import ReportError
from profiler_core.formats.serialized_graph import GRAPH_FILE, read_serialized_graph

NO_GRAPH = (
    "This report has no serialized graph, which the Operations graph draws.\n\n"
    "Write the report again with autoReport.outputSerializedGraph (or autoReport.all) on, "
    "as Poplar users do:\n"
    'POPLAR_ENGINE_OPTIONS=\'{"autoReport.all":"true","autoReport.directory":"./report"}\' '
    "python model.py\n\n"
    "The graph is written for models built with the front-end (ipu_engine.compile, "
    "training_model, inference_model) or read from ONNX (InferenceSession)."
)
POPLAR_RECORD = (
    "This report's program was written against the Poplar API: its serialized graph holds "
    "the program's calls, not a framework graph, so there is no model graph to draw.\n\n"
    "The Operations graph draws models built with the front-end (ipu_engine.compile, "
    "training_model) or read from ONNX (InferenceSession); this program's operations are "
    "on the Operations and Program Tree pages."
)
DAMAGED = "The serialized graph of this report cannot be read.\n\n{error}"


def open_operations_graph(opened: OpenedReport) -> OperationsGraphModel | str:
    """The page's model for ``opened`` (laid out), or the message to show instead."""
    report = opened.report
    path = report.folder / GRAPH_FILE
    if not path.exists():
        return NO_GRAPH
    try:
        serialized = read_serialized_graph(path, report.header.report_id)
    except ReportError as error:
        return DAMAGED.format(error=error)
    if serialized.kind != "framework":
        return POPLAR_RECORD
    try:
        graph = framework_graph(serialized)
    except ReportError as error:
        return DAMAGED.format(error=error)
    figures, problem = figures_of(opened, graph)
    debug = report.debug_or_none() if figures is not None else None
    return OperationsGraphModel(graph, figures, figures_problem=problem, debug=debug)


def figures_of(opened: OpenedReport, graph: FrameworkGraph) -> tuple[NodeFigures | None, str]:
    """The nodes' figures over the selection's run, or None and why (the graph is still
    drawn: a report whose debug.cbor is damaged shows its model uncoloured)."""
    missing = opened.missing("graph", "programs", "debug")
    if missing is not None:
        return None, f"the report's operations cannot be read ({missing})"
    counted = counted_runs(opened)
    try:
        return node_figures(counted.report, graph, counted.run), ""
    except ReportError as error:
        return None, f"the report's operations cannot be read ({error})"

"""The text columns of ``variables_on_tiles`` read whole (as the CLI prints them: slices,
shapes cut from one list, names through the string table) equal them read row by row and
the names, shapes and debug columns of the report itself."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.debug_groups import debug_column
from profiler_core.analysis.memory import variables_on_tiles
from profiler_core.report import open_report


def test_slices_equal_rows_and_the_report(tutorial4_report):
    report = open_report(tutorial4_report)
    graph = report.graph
    found = variables_on_tiles(report, np.arange(report.target.num_tiles))
    n = len(found)
    assert n == len(graph.var_bytes)
    names = [graph.strings[i] for i in graph.var_name[found.var].tolist()]
    assert found.names[:] == names == [found.names[i] for i in range(n)]
    offsets, dims = graph.var_shape_offsets, graph.var_shape_dims.tolist()
    shapes = [
        "[" + ",".join(str(d) for d in dims[offsets[v] : offsets[v + 1]]) + "]"
        for v in found.var.tolist()
    ]
    assert found.shapes[:] == shapes == [found.shapes[i] for i in range(n)]
    assert found.shapes[2:5] == shapes[2:5] and found.shapes[5:2] == []
    assert found.shapes[::2] == shapes[::2]
    for column, values in (("name", found.debug_names), ("op", found.ops)):
        expected = debug_column(report.debug, column, graph.var_debug[found.var])
        assert values[:] == expected == [values[i] for i in range(n)]

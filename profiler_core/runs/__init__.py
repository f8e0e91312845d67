"""Sweeps: a command whose arguments hold ``{a,b,c}`` sets, run once per combination as its
own process with autoReport into a folder of its own, on a Dask cluster (a LocalCluster, or a
``dask scheduler`` by address), with ``sweep.json`` recording what ran.

``make_plan`` expands the command (``plan.py``, sets in ``sets.py``), ``run_sweep`` runs it
(``sweep.py``: a worker runs ``execute.run_one``; ``cluster.py`` opens the cluster) and
``record.py`` reads and writes ``sweep.json``.
"""

from profiler_core.runs.errors import SweepError
from profiler_core.runs.plan import RunSpec, SweepPlan, make_plan
from profiler_core.runs.record import SWEEP_FILE, SweepRecord, is_sweep_folder, read_record
from profiler_core.runs.sweep import SweepOutcome, run_sweep

__all__ = [
    "SWEEP_FILE",
    "RunSpec",
    "SweepError",
    "SweepOutcome",
    "SweepPlan",
    "SweepRecord",
    "is_sweep_folder",
    "make_plan",
    "read_record",
    "run_sweep",
]

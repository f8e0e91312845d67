"""The figures of a compile/execution report that the engine's internal representation must
not change: memory per tile per category, cycles per step and IPU, exchange bytes,
liveness, tile-mapping regions and vertex counts, read back from ``profile.pop``.

``python -m tests.ipu_engine.report_figures`` saves them for the bundled examples into
``tests/ipu_engine/data/*_figures.npz``; ``test_report_figures.py`` compares fresh reports
against them. Saved first with the engine before issue 18's interval representation, and
saved again on purpose when issue 20 calibrated the cycle model (whole-vertex worker
scheduling, the calibrated sync, host link and stream rearrangement change cycles, steps
and exchange code); regenerate only for a deliberate change of the model.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from profiler_core.formats.profile_pop.reader import ProfileReader

DATA = Path(__file__).resolve().parent / "data"

# name -> example script and its arguments; every report folder it writes is kept
EXAMPLES = {
    "tutorial4": ("tutorial4_matmul.py", ()),
    "tutorial4_variant": ("tutorial4_matmul.py", ("--m1", "1600x700", "--m2", "700x300")),
    "mlp_training": ("mlp_training.py", ()),
    "four_shards": ("four_shards.py", ()),
}


def report_figures(report: Path) -> dict[str, np.ndarray]:
    """Every modelled number of ``report/profile.pop`` as named int64 arrays."""
    with ProfileReader(report / "profile.pop") as r:
        g, m, p, lv, ex = r.graph, r.memory, r.programs, r.liveness, r.execution
        figures = {
            "memory_by_category": m.by_category,
            "memory_interleaved": m.interleaved,
            "step_kind": p.step_kind,
            "step_cycles": p.step_cycles,
            "step_global_bytes": p.step_global_bytes,
            "exch_step": p.exch_step,
            "exch_tile": p.exch_tile,
            "exch_bytes_in": p.exch_bytes_in,
            "exch_bytes_out": p.exch_bytes_out,
            "cst_cs": p.cst_cs,
            "cst_tile": p.cst_tile,
            "cst_cycles": p.cst_cycles,
            "cs_busy_cycles": p.cs_busy_cycles,
            "always_live_bytes": np.array([lv.always_live_bytes]),
            "step_live_bytes": lv.step_live_bytes,
            "interval_var": lv.interval_var,
            "interval_first": lv.interval_first,
            "interval_last": lv.interval_last,
            "var_bytes": g.var_bytes,
            "var_always_live": g.var_always_live,
            "region_var": g.region_var,
            "region_tile": g.region_tile,
            # successive differences: equal iff the starts are, and they compress to little
            "region_start_steps": np.diff(g.region_start, prepend=0),
            "region_elements": g.region_elements,
            "vc_cs": g.vc_cs,
            "vc_type": g.vc_type,
            "vc_tile": g.vc_tile,
            "vc_count": g.vc_count,
            "vc_flops": g.vc_flops,
        }
        for i, run in enumerate(ex.runs if ex is not None else []):
            figures[f"run{i}_steps"] = run.step_ids
            figures[f"run{i}_starts"] = run.start_cycles
    return {k: np.asarray(v).astype(np.int64) for k, v in figures.items()}


def all_figures(directory: Path) -> dict[str, np.ndarray]:
    """The figures of every report folder under ``directory``, keys prefixed by folder."""
    figures = {}
    for pop in sorted(directory.rglob("profile.pop")):
        folder = pop.parent.relative_to(directory).as_posix()
        for key, value in report_figures(pop.parent).items():
            figures[f"{folder}/{key}"] = value
    return figures


def save(names: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.conftest import run_example_with_reports

    for name in names:
        script, args = EXAMPLES[name]
        with tempfile.TemporaryDirectory() as tmp:
            run_example_with_reports(script, Path(tmp), *args)
            figures = all_figures(Path(tmp))
        np.savez_compressed(DATA / f"{name}_figures.npz", **figures)
        print(name, len(figures), sorted({k.split("/")[0] for k in figures}))


if __name__ == "__main__":
    save(sys.argv[1:] or list(EXAMPLES))

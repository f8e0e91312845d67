"""Many reports at once (issue 40), over 200 small synthetic reports made here (a sweep
folder of 8 x 25 runs, each a factory report): ``popvision-cli export --parquet`` end to end,
a GROUP BY over all of them with ``popvision-cli sql`` (on the Parquet, and on the reports
themselves) and in process, and the Runs page's first rows drawn after File > Open (and all of
them), with the longest stall of the window's event loop meanwhile.

    python -m benchmarks.bench_many_reports [--reports N]

Targets: export <= 20 s; the GROUP BY <= 1 s; the first rows drawn <= 1 s after opening.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import STALL_PROBE, report

ROOT = Path(__file__).resolve().parents[1]
GROUP_BY = (
    "SELECT batch, count(*) AS reports, avg(total_cycles) AS cycles, max(peak_live_bytes) AS "
    "peak, sum(CASE WHEN fits THEN 1 ELSE 0 END) AS fitting FROM reports GROUP BY batch "
    "ORDER BY batch"
)
GROUP_BY_TILES = (
    "SELECT batch, sum(total)::BIGINT AS bytes, max(total) AS fullest FROM tile_memory "
    "GROUP BY batch ORDER BY batch"
)

_WINDOW_CHILD = (
    r"""
import json, os, sys, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings

folder, settings_file = Path(sys.argv[1]), sys.argv[2]
app = QApplication([])
window = MainWindow(AppSettings(make_settings(settings_file)))
window.resize(1400, 900)
window.show()
app.processEvents()
"""
    + STALL_PROBE
    + r"""
started = time.perf_counter()
window.open_paths([folder])
first = None
view = window.runs.view
while window.runs.loader.busy or first is None:
    app.processEvents()
    if first is None and view.table is not None and len(view.table) > 0:
        view.panel.table.viewport().repaint()  # the rows drawn
        first = time.perf_counter() - started
        rows_first = len(view.table)
    time.sleep(0.001)
app.processEvents()
window.grab()
every = time.perf_counter() - started
worst = max(range(1, len(gaps)), key=gaps.__getitem__) if len(gaps) > 1 else 0
print(json.dumps({"first": first, "rows_first": rows_first, "all": every,
                  "rows": len(view.table), "stall": gaps[worst] if gaps else 0.0,
                  "stall_cpu": cpu_gaps[worst] if gaps else 0.0,
                  "most_cpu": max(cpu_gaps[1:] or [0.0])}))
window.close()
"""
)


def make_sweep(folder: Path, reports: int) -> None:
    """A sweep folder of ``reports`` factory reports (batch x seed), every tenth over."""
    sys.path.insert(0, str(ROOT))
    from tests.profiler_core.many_reports import write_fake_sweep

    batches = [str(b) for b in (1, 2, 4, 8, 16, 32, 64, 128)][: max(1, reports // 25)]
    seeds = [str(s) for s in range(reports // len(batches))]
    over = {f"batch={b},seed={s}" for b in batches for s in seeds if int(s) % 10 == 9}
    write_fake_sweep(folder, {"batch": batches, "seed": seeds}, over=over)


def cli(*argv: object) -> tuple[float, subprocess.CompletedProcess]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", *map(str, argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    seconds = time.perf_counter() - started
    if result.returncode not in (0, 5):
        raise RuntimeError(result.stderr)
    return seconds, result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        sweep, parquet = Path(tmp) / "sweep", Path(tmp) / "parquet"
        started = time.perf_counter()
        make_sweep(sweep, args.reports)
        count = sum(1 for _ in sweep.rglob("profile.pop"))
        size = sum(p.stat().st_size for p in sweep.rglob("*") if p.is_file())
        print(f"{count} synthetic reports ({size / 1e6:.1f} MB) made in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        measure_cli(sweep, parquet)
        measure_in_process(sweep, parquet)
        measure_window(sweep, Path(tmp) / "settings.ini")


def measure_cli(sweep: Path, parquet: Path) -> None:
    seconds, _ = cli("export", "--parquet", parquet, sweep)
    report("export --parquet of every table (CLI, end to end)", seconds, "s", "<= 20",
           seconds <= 20)  # fmt: skip
    counted = cli("sql", "SELECT (SELECT count(*) FROM tile_memory) + (SELECT count(*) FROM "
                  "operations) AS n", parquet, "--json")[1].stdout  # fmt: skip
    rows = json.loads(counted)["query"][0]["n"]
    print(f"  {rows:,} rows of tile_memory and operations written")
    seconds, _ = cli("sql", GROUP_BY, parquet)
    report("sql GROUP BY over the Parquet (CLI, end to end)", seconds, "s", "<= 1 (*)",
           seconds <= 1)  # fmt: skip
    seconds, _ = cli("sql", GROUP_BY, sweep)
    print(f"  sql GROUP BY over the reports themselves (CLI): {seconds:.2f} s")
    seconds, _ = cli("sql", "SELECT 1 AS one", parquet)
    print(f"  (*) of which starting popvision-cli, pyarrow and DuckDB: {seconds:.2f} s")


def measure_in_process(sweep: Path, parquet: Path) -> None:
    from benchmarks._timing import median_seconds
    from profiler_core.tables import query

    for name, sql in (("reports", GROUP_BY), ("tile_memory", GROUP_BY_TILES)):
        seconds = median_seconds(lambda sql=sql: query(sql, [parquet]), repeat=5)
        report(f"GROUP BY over {name} of every report (in process)", seconds, "s", "<= 1",
               seconds <= 1)  # fmt: skip


def measure_window(sweep: Path, settings: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), QT_QPA_PLATFORM="offscreen")
    result = subprocess.run(
        [sys.executable, "-c", _WINDOW_CHILD, str(sweep), str(settings)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    report("Runs page: first rows drawn after opening", figures["first"], "s", "<= 1",
           figures["first"] <= 1)  # fmt: skip
    print(
        f"  {figures['rows_first']} rows at first; all {figures['rows']} rows in "
        f"{figures['all']:.2f} s; longest event-loop stall {figures['stall'] * 1000:.0f} ms, "
        f"the window's own CPU in it {figures['stall_cpu'] * 1000:.0f} ms (the most in any "
        f"stall {figures['most_cpu'] * 1000:.0f} ms; the rest is waiting for a core)"
    )


if __name__ == "__main__":
    main()

"""Issue 21's item 9 at scale: every popvision-cli command on the 16-IPU scale report
(<= 2 s and <= 2x the report's files in peak RSS each, run as a user runs them: a fresh
process) and ``export_chrome`` of a 10M-event trace (<= 30 s, bounded memory).

``python -m benchmarks.bench_hardening [--report DIR] [--events N]``; without ``--report``
the scale report is made first with ``benchmarks.scale_report`` (a few minutes).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import report

#: Every command, as a user types it (text output: the tables are the slow path).
COMMANDS: list[list[str]] = [
    ["summary"],
    ["memory"],
    ["memory", "--by-ipu"],
    ["memory", "--variables"],
    ["liveness"],
    ["liveness", "--step", "{step}"],
    ["program-tree"],
    ["operations"],
    ["operations", "--group-by", "layer"],
    ["operations", "--group-by", "name"],
    ["operations", "--group-by", "context"],
    ["execution"],
    ["execution", "--step", "{compute_step}"],
    ["insights"],
    ["compare", "{other}"],
    ["compare", "{other}", "--variables", "--steps"],
    # JSON of the biggest table (400k operations): the output itself is 150 MB
    ["operations", "--group-by", "name", "--json"],
]

# Peak RSS of the export alone: the loading peak is forgotten (clear_refs 5 resets VmHWM)
# and the export's peak (VmHWM after) is compared with the RSS before it (VmRSS).
EXPORT_SCRIPT = """
import sys, time
from pathlib import Path
from profiler_core.trace import export_chrome, open_trace
def status(key):
    text = Path("/proc/self/status").read_text()
    return int(text.split(key + ":")[1].split()[0])
trace = open_trace(sys.argv[1])
Path("/proc/self/clear_refs").write_text("5")
before = status("VmRSS")
start = time.perf_counter()
export_chrome(trace, sys.argv[2])
seconds = time.perf_counter() - start
print(seconds, before, status("VmHWM"), len(trace))
"""


def _files_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def _interpreter_peak() -> int:
    """Peak RSS in bytes of a process that imports popvision-cli and reads nothing: Python,
    numpy, pycapnp and cbor2 (~42 MB, half of the scale report's files), paid by every
    command whatever the report."""
    script = (
        "import profiler_core.cli\n"
        "print(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    return int(done.stdout) * 1024


def _run(args: list[str]) -> tuple[float, float, int, int]:
    """Wall seconds, CPU seconds (user + system), peak RSS in bytes and exit code of one
    CLI process. On a shared machine the CPU time is the figure to read: the wall time
    grows with everyone else's load."""
    # VmHWM, not ru_maxrss: ru_maxrss keeps the high-water mark of the process image
    # before exec (the forking parent's pages), VmHWM is this program's own peak.
    script = (
        "import sys, runpy\n"
        "sys.argv = ['popvision-cli', *sys.argv[1:]]\n"
        "try:\n"
        "    runpy.run_module('profiler_core.cli', run_name='__main__')\n"
        "finally:\n"
        "    import os\n"
        "    status = open('/proc/self/status').read()\n"
        "    cpu = sum(os.times()[:2])\n"
        "    print(status.split('VmHWM:')[1].split()[0], cpu, file=sys.stderr)\n"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=900
    )
    seconds = time.perf_counter() - start
    peak_kib, cpu = done.stderr.strip().splitlines()[-1].split()
    return seconds, float(cpu), int(peak_kib) * 1024, done.returncode


def _steps_of(folder: Path) -> dict[str, str]:
    """The liveness peak step and the first compute step of the report, for --step."""
    from profiler_core.analysis.liveness import liveness_table
    from profiler_core.model.kinds import StepKind
    from profiler_core.report import open_report

    report = open_report(folder)
    compute = report.programs.step_kind == StepKind.ON_TILE_EXECUTE
    step = liveness_table(report).peak_step
    return {"step": str(step), "compute_step": str(int(compute.argmax()))}


def bench_cli(folder: Path, other: Path) -> None:
    files = _files_bytes(folder)
    both = files + _files_bytes(other)
    print(f"(a) popvision-cli on {folder} ({files / 2**20:.0f} MiB of files), a process each;")
    print(f"    compare's B is {other}, its RSS is against both reports' files")
    names = {"other": str(other), **_steps_of(folder)}
    interpreter = _interpreter_peak()
    print(f"    the interpreter with the CLI imported peaks at {interpreter / 2**20:.0f} MiB; "
          "'over the interpreter' is the RSS a command adds to it")  # fmt: skip
    for command in COMMANDS:
        args = [a.format(**names) for a in command]
        seconds, cpu, peak, code = _run([args[0], str(folder), *args[1:]])
        name = "popvision-cli " + " ".join(args).replace(str(other), "B")
        size = both if command[0] == "compare" else files
        report(f"{name} time", seconds, "s", "<= 2 s", seconds <= 2 and code == 0)
        report(f"{name} CPU time", cpu, "s", "<= 2 s", cpu <= 2 and code == 0)
        report(f"{name} peak RSS / files", peak / size, "x", "<= 2x", peak <= 2 * size)
        added = peak - interpreter
        report(f"{name} RSS over the interpreter / files", added / size, "x", "<= 2x",
               added <= 2 * size)  # fmt: skip


def bench_export(events: int) -> None:
    from benchmarks.bench_pvti import write_big_trace

    print(f"(b) export_chrome of a {events:,}-event trace (a fresh process)")
    with tempfile.TemporaryDirectory() as tmp:
        pvti = write_big_trace(Path(tmp), events)
        out = Path(tmp) / "trace.json"
        done = subprocess.run(
            [sys.executable, "-c", EXPORT_SCRIPT, str(pvti), str(out)],
            capture_output=True, text=True, timeout=1800, check=True,
        )  # fmt: skip
        seconds, before, after, n = done.stdout.split()
        grown = (int(after) - int(before)) * 1024
        report(f"export_chrome {int(n):,} events", float(seconds), "s", "<= 30 s",
               float(seconds) <= 30)  # fmt: skip
        report("export_chrome peak RSS growth", grown / 2**20, "MiB", "<= 256 MiB",
               grown <= 256 * 2**20)  # fmt: skip
        print(f"    wrote {out.stat().st_size / 2**30:.2f} GiB of JSON")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="the scale report folder (else made)")
    parser.add_argument("--other", type=Path, help="compare's B: a copy of --report (default)")
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-export", action="store_true")
    args = parser.parse_args(argv)
    print(f"resource limits: {resource.getrlimit(resource.RLIMIT_AS)}; cpus {os.cpu_count()}")
    if not args.skip_cli:
        folder = args.report
        if folder is None:
            folder = Path(tempfile.mkdtemp()) / "scale"
            subprocess.run(
                [sys.executable, "-m", "benchmarks.scale_report", "--out", str(folder)],
                check=True,
            )
        other = args.other
        if other is None:
            other = folder.parent / (folder.name + "-copy")
            if not other.exists():
                shutil.copytree(folder, other)
        bench_cli(folder, other)
    if not args.skip_export:
        bench_export(args.events)


if __name__ == "__main__":
    main()

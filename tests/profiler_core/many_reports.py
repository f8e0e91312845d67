"""Folders of many small reports for the tables' tests and benchmarks: synthetic reports
written by the factories (no engine run: a report takes milliseconds), and a sweep folder of
them with its ``sweep.json`` as a sweep would have written it."""

from __future__ import annotations

import itertools
from pathlib import Path

from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from profiler_core.runs.record import SweepRecord
from tests.profiler_core.factories import make_report


def write_report(folder: Path, seed: int, over: bool = False, **sizes: int | bool) -> Path:
    """A synthetic report (profile.pop and debug.cbor) in ``folder``; ``over``: its tile 3
    holds 700,000 bytes more than a tile has, as the engine writes with allowOutOfMemory."""
    profile, debug = make_report(seed, **sizes)
    if over:
        profile.memory.by_category[0, 3] += 700_000
        profile.header.out_of_memory = True
    folder.mkdir(parents=True, exist_ok=True)
    write_profile(folder / "profile.pop", profile)
    write_debug(folder / "debug.cbor", debug)
    return folder


def write_fake_sweep(
    out: Path,
    parameters: dict[str, list[str]],
    failed: set[str] = frozenset(),
    over: set[str] = frozenset(),
) -> list[dict]:
    """A sweep folder over every combination of ``parameters``, each run a synthetic report
    in ``<run>/report``, except the runs named in ``failed``: those failed and wrote none.
    The runs named in ``over`` do not fit (and failed, as the engine refuses to run them)."""
    record = SweepRecord(out, {"command": ["fake"], "engine_options": []}, parameters)
    names = list(parameters)
    rows = []
    for seed, values in enumerate(itertools.product(*parameters.values())):
        name = ",".join(f"{k}={v}" for k, v in zip(names, values, strict=True))
        ok = name not in failed and name not in over
        if name not in failed:
            write_report(out / name / "report", seed, over=name in over)
        row = {
            "name": name,
            "values": dict(zip(names, values, strict=True)),
            "key": f"k{seed}",
            "command": ["fake", *values],
            "status": "ok" if ok else "failed",
            "exit_code": 0 if ok else 1,
            "error": "" if ok else "Out of memory on tile 3: 700,000 bytes used",
            "wall_seconds": 1.0,
            "run_folder": str(out / name),
            "reports": [] if name in failed else ["report"],
            "host": "here",
            "worker": "w",
        }
        record.add(row)
        rows.append(row)
    record.save()
    return rows

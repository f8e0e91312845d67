"""What checking checksums costs (issue 30): opening the 16-IPU scale report in the window,
File > Open to the first paint of the Summary, with the section checksums checked and
without, in child processes taken in turn; and the decoding alone (what the loader's workers
do before and after the first paint: every profile.pop section, the summary, debug.cbor) in
this process, interleaved.
Target: checking costs at most 10% more. Each is given as process CPU time, which other
programs on a busy machine do not inflate, and as wall time beside it.

    python -m benchmarks.bench_checksums [--report DIR]   (default: build one, ~20 s)
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks._timing import report
from benchmarks.bench_open_window import _CHILD, _child
from benchmarks.scale_report import measure_scale_report
from popvision_py.app.loader import AFTER_PAINT_SECTIONS, FIRST_SECTIONS
from profiler_core.report import open_report

MODES = ("checked", "unchecked")


def decode_like_the_loader(folder: Path, verify: bool) -> None:
    """What the window decodes before its first paint, then what its worker decodes after."""
    with open_report(folder, verify=verify) as opened:
        errors = opened.load(FIRST_SECTIONS)
        assert not errors, errors
        opened.summary()
        errors = opened.load(AFTER_PAINT_SECTIONS)
        assert not errors, errors


def window_opens(folder: Path, rounds: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds from File > Open to the first paint, per mode."""
    found: dict[str, dict[str, list[float]]] = {m: {"wall": [], "cpu": []} for m in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        settings = str(Path(tmp) / "settings.ini")
        for _ in range(rounds):  # in turn, so both see the same machine
            for mode in MODES:
                child_mode = "open" if mode == "checked" else mode
                opened = _child(_CHILD, str(folder), child_mode, settings)
                found[mode]["wall"].append(opened["open_s"])
                found[mode]["cpu"].append(opened["open_cpu_s"])
    return {m: {k: statistics.median(v) for k, v in t.items()} for m, t in found.items()}


def decodes(folder: Path, repeat: int) -> dict[str, dict[str, float]]:
    """Median wall and CPU seconds of decoding every file as the loader does, per mode."""
    found: dict[str, dict[str, list[float]]] = {m: {"wall": [], "cpu": []} for m in MODES}
    for index in range(repeat + 1):
        for mode in MODES:
            wall, cpu = time.perf_counter(), time.process_time()
            decode_like_the_loader(folder, mode == "checked")
            if index:  # the first round warms the page cache
                found[mode]["wall"].append(time.perf_counter() - wall)
                found[mode]["cpu"].append(time.process_time() - cpu)
    return {m: {k: statistics.median(v) for k, v in t.items()} for m, t in found.items()}


def _print(what: str, figures: dict[str, dict[str, float]]) -> None:
    for kind in ("cpu", "wall"):
        checked, unchecked = figures["checked"][kind], figures["unchecked"][kind]
        print(f"{what}, {kind}: checked {checked * 1e3:.0f} ms, unchecked {unchecked * 1e3:.0f} ms")


def measure(folder: Path, rounds: int = 9) -> None:
    sizes = {name: (folder / name).stat().st_size / 1e6 for name in ("profile.pop", "debug.cbor")}
    print(
        f"profile.pop {sizes['profile.pop']:.1f} MB, debug.cbor {sizes['debug.cbor']:.1f} MB; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    window = window_opens(folder, rounds)
    _print(f"window, open to first paint (medians of {rounds})", window)
    alone = decodes(folder, 2 * rounds + 1)
    _print(f"decoding alone (medians of {2 * rounds + 1})", alone)
    # The target is the user's: opening in the window. Decoding alone has no window, Qt or
    # summary page around it, so the same few ms of hashing are a larger share of it.
    ratio = window["checked"]["cpu"] / window["unchecked"]["cpu"]
    report("window open to first paint, CPU, checked / unchecked", ratio, "x", "<= 1.10x",
           ratio <= 1.10)  # fmt: skip
    ratio = window["checked"]["wall"] / window["unchecked"]["wall"]
    report("window open to first paint, wall, checked / unchecked", ratio, "x", "", True)
    for kind in ("cpu", "wall"):
        ratio = alone["checked"][kind] / alone["unchecked"][kind]
        report(f"decoding alone, {kind}, checked / unchecked", ratio, "x", "", True)


def main(argv: list[str] | None = None) -> None:
    measure_scale_report(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()

"""What checking checksums costs (issue 30): opening the 16-IPU scale report the way the
window's loader does -- every profile.pop section it decodes before the first paint, plus
the summary -- and then its debug.cbor, with the section checksums checked and without,
measured alternately in one run. Target: checking costs at most 10% more.

    python -m benchmarks.bench_checksums [--report DIR]   (default: build one, ~20 s)
"""

from __future__ import annotations

from pathlib import Path

from benchmarks._timing import report
from benchmarks.bench_profile_pop import interleaved_medians
from benchmarks.scale_report import measure_scale_report
from profiler_core.report import open_report
from profiler_core.report.summary import SECTIONS

FIRST_SECTIONS = tuple(s for s in SECTIONS if s != "debug")  # as popvision_py's loader


def open_like_the_window(folder: Path, verify: bool, debug: bool) -> None:
    with open_report(folder, verify=verify) as opened:
        errors = opened.load(FIRST_SECTIONS)
        assert not errors, errors
        opened.summary()
        if debug:
            assert opened.debug is not None


def measure(folder: Path) -> None:
    sizes = {name: (folder / name).stat().st_size / 1e6 for name in ("profile.pop", "debug.cbor")}
    t = interleaved_medians(
        {
            "checked": lambda: open_like_the_window(folder, True, False),
            "unchecked": lambda: open_like_the_window(folder, False, False),
            "checked + debug": lambda: open_like_the_window(folder, True, True),
            "unchecked + debug": lambda: open_like_the_window(folder, False, True),
        },
        repeat=9,
    )
    print(
        f"profile.pop {sizes['profile.pop']:.1f} MB, debug.cbor {sizes['debug.cbor']:.1f} MB: "
        + ", ".join(f"{name} {seconds * 1e3:.0f} ms" for name, seconds in t.items())
    )
    ratio = t["checked"] / t["unchecked"]
    report("open to first paint, checked / unchecked", ratio, "x", "<= 1.10x", ratio <= 1.10)
    ratio = t["checked + debug"] / t["unchecked + debug"]
    report("every file (+ debug.cbor), checked / unchecked", ratio, "x", "<= 1.10x", ratio <= 1.1)


def main(argv: list[str] | None = None) -> None:
    measure_scale_report(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()

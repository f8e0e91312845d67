"""A what-if's choice in words and as JSON: the change, what it is predicted to give next
to what the report shows now, and the values tried."""

from __future__ import annotations

from typing import Any

from profiler_core.insights.whatif.choose import Choice, Figures

NAMES_SHOWN = 3


def change_text(choice: Choice) -> str:
    trial, value = choice.trial, None if choice.best is None else choice.best.value
    if trial.option == "type":
        names = ", ".join(trial.tensors[:NAMES_SHOWN]) + (
            ", …" if len(trial.tensors) > NAMES_SHOWN else ""
        )
        count = len(trial.tensors)
        weights = f"{count} weight{'s' if count != 1 else ''}"
        return f"storing {weights} in half ({names}) and running their readers in half"
    if trial.option == "ipus":
        return f"splitting the program over {value} IPUs"
    if trial.option == "pipelineStage":
        return f"moving {trial.operation} to pipeline stage {value}"
    return f"setting the {trial.option} of {trial.operation} to {value:g}"


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "?"


def _delta(new: int, old: int) -> str:
    return f"{100 * (new - old) / old:+.1f}%" if old else "new"


def figures_text(best: Figures, now: Figures) -> str:
    fit = (
        "fits"
        if best.fits
        else f"still does not fit ({best.tiles_over:,} tiles over, now {now.tiles_over:,})"
    )
    parts = [
        f"the program {fit}",
        f"its fullest tile would hold {best.fullest_bytes:,} of {best.bytes_per_tile:,} bytes "
        f"({_percent(best.fullest_bytes, best.bytes_per_tile)}; now {now.fullest_bytes:,}, "
        f"{_percent(now.fullest_bytes, now.bytes_per_tile)})",
        f"the liveness peak {best.peak_live_bytes:,} bytes (now {now.peak_live_bytes:,})",
    ]
    if best.total_cycles is not None:
        if now.total_cycles is not None:
            parts.append(
                f"its runs {best.total_cycles:,} cycles (now {now.total_cycles:,}, "
                f"{_delta(best.total_cycles, now.total_cycles)})"
            )
        else:
            parts.append(f"a run {best.total_cycles:,} cycles")
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _tried_text(choice: Choice) -> str:
    trial = choice.trial
    if len(trial.values) < 2 or choice.best is None:
        return ""
    values = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in trial.values)
    why = {
        "fit": "the value that fits with the fewest cycles",
        "memory": "the value leaving the least on the fullest tile",
        "speed": "the value with the fewest cycles that fits",
    }[trial.goal]
    if trial.goal == "fit" and choice.best.figures is not None and not choice.best.figures.fits:
        why = "none fits; the value leaving the least on the fullest tile"
    value = choice.best.value
    return (
        f" Tried {values}: {value:g} is {why}."
        if isinstance(value, float)
        else f" Tried {values}: {value} is {why}."
    )


def sentence(choice: Choice, now: Figures, extra: dict[str, Any]) -> str:
    if not choice.kept or choice.best is None or choice.best.figures is None:
        return f"Not suggested: {choice.reason}."
    text = f"Predicted for {change_text(choice)}: {figures_text(choice.best.figures, now)}."
    if extra.get("samples_per_second"):
        text += (
            f" Throughput {extra['samples_per_second']:,.0f} samples/s "
            f"(now {extra['now_samples_per_second']:,.0f})."
        )
    return text + _tried_text(choice)


def choice_dict(choice: Choice, now: Figures, words: str, extra: dict[str, Any]) -> dict[str, Any]:
    assert choice.best is not None and choice.best.figures is not None
    trial = choice.trial
    return {
        "rule": trial.rule,
        "finding": trial.title,
        "goal": trial.goal,
        "operation": trial.source.to_dict(),
        "change": trial.change(choice.best.value),
        "predicted": choice.best.figures.to_dict(),
        "now": now.to_dict(),
        "tried": [
            {"value": t.value, **(t.figures.to_dict() if t.figures else {"error": t.error})}
            for t in choice.tried
        ],
        **extra,
        "sentence": words,
    }


def throughput(record: dict[str, Any], report: Any, choice: Choice, now: Figures) -> dict[str, Any]:
    """Samples per second of the report's runs now and with the change: the micro-batches
    a run pushes through (accumulation and device iterations, over the replicas) times the
    micro-batch size, over the runs' time at the target's clock."""
    options = record.get("options", {})
    inputs = record["trace"].get("inputs", [])
    nodes = record["trace"]["nodes"]
    batch = int(nodes[inputs[0]][3][0]) if inputs and nodes[inputs[0]][3] else 1
    micro = int(options.get("device_iterations") or 1) * int(options.get("replication_factor") or 1)
    if record.get("training") is not None:
        micro *= int(options.get("gradient_accumulation") or 1)
    runs = len(report.execution.runs) if report.execution is not None else 0
    samples = micro * batch * runs
    clock = float(report.target.clock_hz)
    best = choice.best.figures if choice.best is not None else None
    if not samples or best is None or not best.total_cycles or not now.total_cycles:
        return {}
    return {
        "samples_per_second": samples * clock / best.total_cycles,
        "now_samples_per_second": samples * clock / now.total_cycles,
    }

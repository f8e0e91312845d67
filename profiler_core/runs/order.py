"""Which run a sweep starts next: the one predicted to take longest.

Runs go to the workers one at a time as workers free up, longest first, so the sweep does
not end with one long run on one worker while the others have nothing left (the classic
longest-processing-time order). A run's time is not known before it runs, so it is
predicted from its numeric values: log(seconds) as a linear function of the log of each
numeric parameter, fitted to the runs of this sweep that have ended. Before any has ended,
and along any direction the ended runs do not tell apart, the fit keeps its prior: time in
proportion to the product of the values (sizes and counts usually cost as they grow). A
parameter that is not a positive number everywhere does not order the runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

PRIOR_WEIGHT = 0.1  # how strongly the fit keeps an exponent of 1 where the runs say little


class LongestFirst:
    """The runs not started yet, handed out longest-predicted first."""

    def __init__(self, runs: Sequence[Any]) -> None:
        self._runs = list(runs)
        self._position = {id(run): i for i, run in enumerate(self._runs)}
        self._features = _log_values([run.values for run in self._runs])
        self._left = list(range(len(self._runs)))  # plan order, for ties
        self._seen: list[int] = []
        self._seconds: list[float] = []
        self._exponents = np.ones(self._features.shape[1])

    def __len__(self) -> int:
        return len(self._left)

    def pop(self) -> Any:
        """The run to start next (the plan's first among equal predictions)."""
        predicted = self._features[self._left] @ self._exponents
        index = self._left.pop(int(np.argmax(predicted)))
        return self._runs[index]

    def ended(self, run: Any, seconds: float | None) -> None:
        """A run's wall time, to predict the rest by."""
        if seconds is None or not seconds > 0 or not self._features.shape[1]:
            return
        self._seen.append(self._position[id(run)])
        self._seconds.append(math.log(seconds))
        self._exponents = self._fit()

    def _fit(self) -> np.ndarray:
        """Least squares of log(seconds) on [1, log values], pulled towards exponents of 1
        (a ridge around the prior): the intercept is free, it does not order runs."""
        x = self._features[self._seen]
        p = x.shape[1]
        design = np.vstack(
            (
                np.hstack((np.ones((len(x), 1)), x)),
                np.hstack((np.zeros((p, 1)), math.sqrt(PRIOR_WEIGHT) * np.eye(p))),
            )
        )
        target = np.concatenate((self._seconds, np.full(p, math.sqrt(PRIOR_WEIGHT))))
        solution = np.linalg.lstsq(design, target, rcond=None)[0]
        return solution[1:]


def _log_values(values: list[dict[str, str]]) -> np.ndarray:
    """(runs, numeric parameters): the log of each value of the parameters that are a
    positive number in every run."""
    names = list(values[0]) if values else []
    columns = []
    for name in names:
        numbers = [_number(v.get(name)) for v in values]
        if all(n is not None and n > 0 for n in numbers):
            columns.append(np.log(np.array(numbers, dtype=np.float64)))
    if not columns:
        return np.zeros((len(values), 0))
    return np.column_stack(columns)


def _number(text: str | None) -> float | None:
    try:
        number = float(text) if text is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None

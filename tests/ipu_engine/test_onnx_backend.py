"""ONNX's own backend test runner over the suites shipped in the onnx package, driving
``ipu_engine.onnx.backend``; tests of operators we do not lower are excluded by the runner's
own mechanism from the one list in ``ipu_engine/onnx/unsupported.py``. Of the per-operator
node suite, the tests of issue 39's operators run (``NODE_TESTS``)."""

from __future__ import annotations

import re

import onnx.backend.test

from ipu_engine.onnx import backend
from ipu_engine.onnx.unsupported import EXCLUDED, NODE_TESTS

backend_test = onnx.backend.test.BackendTest(backend.IpuBackend, __name__)
for pattern in EXCLUDED:
    backend_test.exclude(pattern)

# The suites of the issue: simple, pytorch-converted, pytorch-operator, and the light models
# (the "real" category); of ONNX's per-operator node suite, the operators of NODE_TESTS.
SUITES = ("Simple", "PyTorchConverted", "PyTorchOperator", "Real")
globals().update(
    {
        name: case
        for name, case in backend_test.test_cases.items()
        if name.removeprefix("OnnxBackend").removesuffix("ModelTest") in SUITES
    }
)
OnnxBackendNodeModelTest = backend_test.test_cases["OnnxBackendNodeModelTest"]
for name in [n for n in vars(OnnxBackendNodeModelTest) if n.startswith("test_")]:
    if not re.match(NODE_TESTS, name):
        delattr(OnnxBackendNodeModelTest, name)

"""Imported first by ``ipu_engine.poptorch``: without torch (or the onnxscript its ONNX
exporter needs), a clear ImportError saying how to install them, not a bare
``No module named 'torch'`` from deep inside the package."""

from __future__ import annotations

import importlib

#: What the [torch] extra installs that the package imports.
REQUIRED = ("torch", "onnxscript")

for _name in REQUIRED:
    try:
        importlib.import_module(_name)
    except ImportError as exc:
        raise ImportError(
            f"ipu_engine.poptorch needs PyTorch and its ONNX exporter, and {_name} is not "
            f"installed ({exc}): pip install 'popvision-py[torch]' (or `make torch` in a "
            "checkout of popvision-py)"
        ) from exc

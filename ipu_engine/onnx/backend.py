"""An ``onnx.backend.base.Backend`` over ``InferenceSession``, so ONNX's own conformance runner
(``onnx.backend.test.BackendTest``) can drive the engine: ``prepare`` builds a session and
``BackendRep.run`` feeds the inputs in the model's order. The IPU Model runs on the host's
CPU, which is the one device it supports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from ipu_engine.onnx.session import InferenceSession


class IpuBackendRep(BackendRep):
    """A prepared model: ``run(inputs)`` with a list in the model's input order, or a dict."""

    def __init__(self, session: InferenceSession) -> None:
        self.session = session

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        names = [i.name for i in self.session.get_inputs()]
        if isinstance(inputs, Mapping):
            feeds = dict(inputs)
        else:
            values = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            feeds = dict(zip(names, values, strict=False))
        return tuple(self.session.run(None, feeds))


class IpuBackend(Backend):
    """``ipu_engine.onnx.backend.prepare(model)`` -> a rep whose ``run`` gives the outputs."""

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> IpuBackendRep:
        super().prepare(model, device, **kwargs)
        options = kwargs.pop("options", None)
        return IpuBackendRep(InferenceSession(model, options=options, **kwargs))

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[np.ndarray, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return Device(device).type == DeviceType.CPU


prepare = IpuBackend.prepare
run_model = IpuBackend.run_model
supports_device = IpuBackend.supports_device

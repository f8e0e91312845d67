"""ONNX models on the IPU engine, PopART-style: ``InferenceSession`` (onnxruntime's calling
convention), an ``onnx.backend`` Backend, and ``python -m ipu_engine.onnx MODEL.onnx``.

Importing this package imports the ``onnx`` package; ``import ipu_engine`` does not.
"""

from ipu_engine.common.errors import OnnxError
from ipu_engine.onnx.model import OnnxModel, ValueSpec, load_model
from ipu_engine.onnx.session import InferenceSession

__all__ = ["InferenceSession", "OnnxError", "OnnxModel", "ValueSpec", "load_model"]

"""PopLibs' popnn: non-linearities, softmax and losses (``non_linearity``), pooling
(``pooling``), local response normalization (``response_norm``) and recurrent layers
(``lstm``, ``gru``) for neural networks."""

from ipu_engine.poplar.journal import record_api
from ipu_engine.popnn.gru import gru
from ipu_engine.popnn.lstm import lstm
from ipu_engine.popnn.non_linearity import (
    calc_loss,
    cross_entropy,
    non_linearity,
    non_linearity_input_gradient,
    relu,
    sigmoid,
    softmax,
    tanh,
)
from ipu_engine.popnn.pooling import avg_pool, global_avg_pool, max_pool
from ipu_engine.popnn.response_norm import lrn

__all__ = [
    "avg_pool",
    "calc_loss",
    "cross_entropy",
    "global_avg_pool",
    "gru",
    "lrn",
    "lstm",
    "max_pool",
    "non_linearity",
    "non_linearity_input_gradient",
    "relu",
    "sigmoid",
    "softmax",
    "tanh",
]

record_api(globals(), "popnn", __all__)

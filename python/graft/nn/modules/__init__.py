"""The layer classes of graft.nn."""
from .module import Module, RemovableHandle, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from .linear import Identity, Linear, Bilinear, NonDynamicallyQuantizableLinear  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose2d  # noqa: F401
from .pooling import MaxPool2d, AvgPool2d, AdaptiveAvgPool2d  # noqa: F401
from .activation import (  # noqa: F401
    ReLU, Threshold, GELU, Tanh, Sigmoid, SiLU, LeakyReLU, Softplus, ELU, SELU, Hardsigmoid, Hardswish, Mish,
    LogSigmoid, Hardshrink, Softshrink, Softmax, LogSoftmax, MultiheadAttention,
)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .normalization import LayerNorm, GroupNorm  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .transformer import TransformerEncoderLayer  # noqa: F401
from .loss import (  # noqa: F401
    MSELoss, L1Loss, SmoothL1Loss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss,
)

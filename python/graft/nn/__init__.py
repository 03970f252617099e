"""graft.nn: torch.nn for graft. Module and the layers are Python classes over graft's C++
tensors; graft.nn.functional binds the C++ ops (include/graft/ops/nn_ops.h); graft.nn.init
and graft.nn.utils bind graft::nn::init and graft::nn::utils."""
from .parameter import Parameter, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import (  # noqa: F401
    Module, Identity, Linear, Bilinear, Conv1d, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d,
    ReLU, Threshold, GELU, Tanh, Sigmoid, SiLU, LeakyReLU, Softplus, ELU, SELU, Hardsigmoid, Hardswish, Mish,
    LogSigmoid, Hardshrink, Softshrink, Softmax, LogSoftmax, MultiheadAttention, Dropout,
    Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout,
    LayerNorm, GroupNorm, BatchNorm1d, BatchNorm2d, Embedding, Flatten, Unflatten, Sequential, ModuleList,
    ModuleDict, ParameterList, ParameterDict, RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell,
    TransformerEncoderLayer, MSELoss, L1Loss, SmoothL1Loss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss,
)
from .modules import (  # noqa: F401
    Transformer, TransformerEncoder, TransformerDecoder, TransformerDecoderLayer,
    Hardtanh, ReLU6, PReLU, CELU, GLU, Softsign, Tanhshrink, Softmin, Softmax2d, RReLU,
    CosineSimilarity, PairwiseDistance,
    KLDivLoss, HuberLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss,
    TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
    MultiLabelMarginLoss,
    ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d, ReflectionPad2d,
    ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
    MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, LPPool1d, LPPool2d,
    PixelShuffle, PixelUnshuffle, ChannelShuffle, Fold, Unfold, Upsample, UpsamplingNearest2d, UpsamplingBilinear2d,
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LocalResponseNorm, CrossMapLRN2d, EmbeddingBag,
)
from .modules import (  # noqa: F401
    LazyLinear, LazyConv1d, LazyConv2d, LazyConvTranspose2d, LazyBatchNorm1d, LazyBatchNorm2d, LazyInstanceNorm1d,
    LazyInstanceNorm2d, LazyInstanceNorm3d, SyncBatchNorm, Container, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
    TripletMarginWithDistanceLoss, NLLLoss2d, AdaptiveLogSoftmaxWithLoss,
)
from . import functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401

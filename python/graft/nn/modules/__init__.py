"""The layer classes of graft.nn."""
from .module import Module, RemovableHandle, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from .linear import Identity, Linear, LazyLinear, Bilinear, NonDynamicallyQuantizableLinear  # noqa: F401
from .conv import Conv1d, Conv2d, ConvTranspose2d, LazyConv1d, LazyConv2d, LazyConvTranspose2d  # noqa: F401
from .pooling import (  # noqa: F401
    MaxPool1d, MaxPool2d, AvgPool1d, AvgPool2d, AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d,
    AdaptiveMaxPool2d, LPPool1d, LPPool2d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
)
from .activation import (  # noqa: F401
    ReLU, Threshold, GELU, Tanh, Sigmoid, SiLU, LeakyReLU, Softplus, ELU, SELU, Hardsigmoid, Hardswish, Mish,
    LogSigmoid, Hardshrink, Softshrink, Softmax, LogSoftmax, MultiheadAttention,
    Hardtanh, ReLU6, PReLU, CELU, GLU, Softsign, Tanhshrink, Softmin, Softmax2d, RReLU,
)
from .distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from .pixelshuffle import PixelShuffle, PixelUnshuffle, ChannelShuffle  # noqa: F401
from .fold import Fold, Unfold  # noqa: F401
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d  # noqa: F401
from .padding import (  # noqa: F401
    ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d, ReflectionPad2d,
    ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, CircularPad1d, CircularPad2d, CircularPad3d,
)
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout  # noqa: F401
from .normalization import LayerNorm, GroupNorm, LocalResponseNorm, CrossMapLRN2d  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d, LazyBatchNorm1d, LazyBatchNorm2d, SyncBatchNorm  # noqa: F401
from .instancenorm import (  # noqa: F401
    InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d,
)
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401
from .transformer import (  # noqa: F401
    Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer, TransformerDecoderLayer,
)
from .loss import (  # noqa: F401
    MSELoss, L1Loss, SmoothL1Loss, NLLLoss, CrossEntropyLoss, BCELoss, BCEWithLogitsLoss,
    KLDivLoss, HuberLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss,
    TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
    MultiLabelMarginLoss, TripletMarginWithDistanceLoss, NLLLoss2d,
)
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: F401

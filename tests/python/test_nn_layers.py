"""graft.nn layers with fixed weights: output shapes and values, and the gradient of the
first input, against numbers computed once with torch 1.13 (same layers, same weights and
inputs) and written below. Plus the containers' list/dict behaviour and layer errors."""
import collections
import math
import re

import pytest

import graft
import graft.nn as nn


def det(L, shape, phase=0.0, dtype=None):
    """Deterministic values sin(0.7 i + phase) of ``shape`` (the same in torch and graft)."""
    n = math.prod(shape)
    t = L.tensor([math.sin(0.7 * i + phase) for i in range(n)], dtype=dtype or L.float32)
    return t.reshape(shape)


def fix_params(L, layer):
    """Overwrites every parameter with det() values (phase = its index + 1)."""
    with L.no_grad():
        for k, (_, p) in enumerate(layer.named_parameters()):
            p.copy_(det(L, tuple(p.shape), phase=k + 1.0))
    return layer


def ints(L, values):
    return L.tensor(values, dtype=L.int64)


# name -> builder(L) returning (layer, inputs, forward kwargs); L is the graft (or torch) module
CASES = {
    "linear": lambda L: (L.nn.Linear(3, 2), [det(L, (2, 3))], {}),
    "bilinear": lambda L: (L.nn.Bilinear(2, 3, 2), [det(L, (2, 2)), det(L, (2, 3), 0.5)], {}),
    "conv1d": lambda L: (L.nn.Conv1d(2, 2, 3, stride=2, padding=1), [det(L, (1, 2, 5))], {}),
    "conv2d": lambda L: (L.nn.Conv2d(2, 2, 2), [det(L, (1, 2, 3, 3))], {}),
    "conv2d_same_groups": lambda L: (L.nn.Conv2d(2, 2, 2, padding="same", groups=2, bias=False),
                                     [det(L, (1, 2, 3, 3))], {}),
    "conv_transpose2d": lambda L: (L.nn.ConvTranspose2d(1, 2, 2), [det(L, (1, 1, 2, 2))], {}),
    "conv_transpose2d_stride": lambda L: (L.nn.ConvTranspose2d(1, 1, 2, stride=2, padding=1, output_padding=1),
                                          [det(L, (1, 1, 2, 2))], {}),
    "max_pool2d": lambda L: (L.nn.MaxPool2d(2), [det(L, (1, 1, 4, 4))], {}),
    "max_pool2d_pad": lambda L: (L.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), [det(L, (1, 1, 4, 4))], {}),
    "avg_pool2d": lambda L: (L.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                             [det(L, (1, 1, 4, 4))], {}),
    "adaptive_avg_pool2d": lambda L: (L.nn.AdaptiveAvgPool2d((2, 3)), [det(L, (1, 1, 3, 4))], {}),
    "relu": lambda L: (L.nn.ReLU(), [det(L, (2, 3))], {}),
    "gelu": lambda L: (L.nn.GELU(), [det(L, (2, 3))], {}),
    "gelu_tanh": lambda L: (L.nn.GELU(approximate="tanh"), [det(L, (2, 3))], {}),
    "tanh": lambda L: (L.nn.Tanh(), [det(L, (2, 3))], {}),
    "sigmoid": lambda L: (L.nn.Sigmoid(), [det(L, (2, 3))], {}),
    "silu": lambda L: (L.nn.SiLU(), [det(L, (2, 3))], {}),
    "softmax": lambda L: (L.nn.Softmax(dim=1), [det(L, (2, 3))], {}),
    "log_softmax": lambda L: (L.nn.LogSoftmax(dim=0), [det(L, (2, 3))], {}),
    "leaky_relu": lambda L: (L.nn.LeakyReLU(0.1), [det(L, (2, 3))], {}),
    "softplus": lambda L: (L.nn.Softplus(beta=2.0, threshold=1.0), [det(L, (2, 3))], {}),
    "dropout_eval": lambda L: (L.nn.Dropout(0.5).eval(), [det(L, (2, 3))], {}),
    "layer_norm": lambda L: (L.nn.LayerNorm(3), [det(L, (2, 3))], {}),
    "group_norm": lambda L: (L.nn.GroupNorm(2, 4), [det(L, (1, 4, 2))], {}),
    "batch_norm1d": lambda L: (L.nn.BatchNorm1d(3), [det(L, (4, 3))], {}),
    "batch_norm2d_eval": lambda L: (L.nn.BatchNorm2d(2).eval(), [det(L, (1, 2, 2, 2))], {}),
    "embedding": lambda L: (L.nn.Embedding(4, 2, padding_idx=1), [ints(L, [[0, 1], [3, 1]])], {}),
    "flatten": lambda L: (L.nn.Flatten(), [det(L, (2, 1, 2))], {}),
    "unflatten": lambda L: (L.nn.Unflatten(1, (2, 1)), [det(L, (1, 2))], {}),
    "identity": lambda L: (L.nn.Identity(3, unused=True), [det(L, (2,))], {}),
    "multihead_attention": lambda L: (L.nn.MultiheadAttention(4, 2), [det(L, (2, 1, 4)), det(L, (3, 1, 4), 0.3),
                                                                      det(L, (3, 1, 4), 0.6)], {}),
    "multihead_attention_batch_first_mask": lambda L: (
        L.nn.MultiheadAttention(4, 2, batch_first=True, bias=False),
        [det(L, (1, 2, 4)), det(L, (1, 3, 4), 0.3), det(L, (1, 3, 4), 0.6)],
        {"attn_mask": L.tensor([[False, True, False], [False, False, True]]), "average_attn_weights": False}),
    "transformer_encoder_layer": lambda L: (L.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0),
                                            [det(L, (2, 1, 4))], {}),
    "transformer_encoder_layer_norm_first": lambda L: (
        L.nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, norm_first=True, activation="gelu",
                                     batch_first=True), [det(L, (1, 2, 4))], {}),
    "rnn": lambda L: (L.nn.RNN(2, 3), [det(L, (3, 1, 2))], {}),
    "lstm": lambda L: (L.nn.LSTM(2, 3), [det(L, (3, 1, 2))], {}),
    "gru_bidirectional": lambda L: (L.nn.GRU(2, 2, bidirectional=True, batch_first=True), [det(L, (1, 3, 2))], {}),
    "lstm_two_layers": lambda L: (L.nn.LSTM(2, 2, num_layers=2), [det(L, (2, 1, 2))], {}),
    "rnn_cell": lambda L: (L.nn.RNNCell(2, 3, nonlinearity="relu"), [det(L, (1, 2))], {}),
    "lstm_cell": lambda L: (L.nn.LSTMCell(2, 2), [det(L, (1, 2))], {}),
    "gru_cell": lambda L: (L.nn.GRUCell(2, 2), [det(L, (2,))], {}),
    "mse_loss": lambda L: (L.nn.MSELoss(), [det(L, (2, 3)), det(L, (2, 3), 1.0)], {}),
    "l1_loss": lambda L: (L.nn.L1Loss(reduction="sum"), [det(L, (2, 3)), det(L, (2, 3), 1.0)], {}),
    "smooth_l1_loss": lambda L: (L.nn.SmoothL1Loss(beta=0.5, reduction="none"), [det(L, (2, 3)),
                                                                               det(L, (2, 3), 1.0)], {}),
    "nll_loss": lambda L: (L.nn.NLLLoss(weight=L.tensor([1.0, 2.0, 0.5])), [det(L, (3, 3)),
                                                                           ints(L, [0, 2, 1])], {}),
    "cross_entropy": lambda L: (L.nn.CrossEntropyLoss(), [det(L, (3, 3)), ints(L, [0, 2, 1])], {}),
    "cross_entropy_smoothing_ignore": lambda L: (L.nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=2),
                                                 [det(L, (3, 3)), ints(L, [0, 2, 1])], {}),
    "cross_entropy_probs": lambda L: (L.nn.CrossEntropyLoss(reduction="sum"),
                                      [det(L, (2, 3)), L.softmax(det(L, (2, 3), 2.0), dim=1)], {}),
    "bce_loss": lambda L: (L.nn.BCELoss(), [L.sigmoid(det(L, (2, 3))), L.tensor([[1.0, 0, 1], [0, 0, 1]])], {}),
    "bce_with_logits_pos_weight": lambda L: (L.nn.BCEWithLogitsLoss(pos_weight=L.tensor([1.0, 2.0, 3.0])),
                                             [det(L, (2, 3)), L.tensor([[1.0, 0, 1], [0, 0, 1]])], {}),
}


def run_case(L, name):
    """Output tensors (flattened list of tensors) and the first input's gradient of
    sum(output * det), for the case ``name`` built with library ``L``."""
    layer, inputs, kwargs = CASES[name](L)
    fix_params(L, layer)
    if inputs[0].is_floating_point():
        inputs[0].requires_grad_(True)
    out = layer(*inputs, **kwargs)
    outs = [o for o in (out if isinstance(out, tuple) else (out,)) for o in (o if isinstance(o, tuple) else (o,))]
    outs = [o for o in outs if o is not None]
    loss = sum((o * det(L, tuple(o.shape), 0.25)).sum() for o in outs if o.requires_grad)
    grad = None
    if inputs[0].requires_grad:
        loss.backward()
        grad = inputs[0].grad
    return layer, outs, grad


# Computed with torch 1.13 by run_case(torch, name): per case, the output shapes, the
# flattened outputs and the flattened gradient of the first input (None: integer input).
EXPECTED = {'adaptive_avg_pool2d': ([(1, 1, 2, 3)], [[0.1571057, 0.1018271, -0.001342341, -0.157562, -0.1371396, -0.05221841]],
                         [0.06185099, 0.2652049, 0.4525701, 0.2492163, 0.2397193, 0.4659394, 0.332546, 0.1063259,
                          0.1778683, 0.2007345, -0.1200242, -0.1428903]),
 'avg_pool2d': ([(1, 1, 2, 2)], [[0.1571057, 0.04801087, 0.0905749, -0.1633244]],
                [0.06185099, 0.1974203, 0.1355693, 0.1355693, 0.2279952, 0.442617, 0.2146219, 0.2146219, 0.1661442,
                 0.2451968, 0.0790526, 0.0790526, 0.1661442, 0.2451968, 0.0790526, 0.0790526]),
 'batch_norm1d': ([(4, 3)],
                  [[0.9064003, 1.134728, 0.4126822, 2.090547, 0.6797764, -0.7979377, -0.2892234, -1.2585, -1.052054,
                    0.9294655, 1.153515, 0.4151451]],
                  [0.2541404, 0.1738808, 0.02025525, -0.2577623, -0.4249131, -0.2119132, -0.2504478, 0.08206537,
                   0.1751543, 0.2540695, 0.1689671, 0.01650368]),
 'batch_norm2d_eval': ([(1, 2, 2, 2)],
                       [[0.9092974, 1.451385, 1.738521, 1.635659, 0.7595742, 0.07952222, -0.4369268, -0.546879]],
                       [0.2081822, 0.6844621, 0.8388287, 0.5986812, 0.09070181, -0.5667945, -0.9577184, -0.8982124]),
 'bce_loss': ([()], [[0.8416975]], [-0.08246799, 0.119764, -0.05662547, 0.1389898, 0.09887598, -0.09979367]),
 'bce_with_logits_pos_weight': ([()], [[1.242043]],
                                [-0.020617, 0.02703739, -0.03362366, 0.02900114, 0.02403829, -0.07258925]),
 'bilinear': ([(2, 2)], [[-0.04116684, 1.688249, 1.419274, -0.3850314]], [0.09844744, 1.22701, -0.6829182, 0.698962]),
 'conv1d': ([(1, 2, 3)], [[2.411064, 4.193653, 1.931323, -0.2967979, -2.372996, -0.9806881]],
            [-0.02066147, 0.9924263, 0.7724391, 1.921709, 1.202249, 0.5525259, 0.3414474, -0.4072034, -1.179126,
             -1.175419]),
 'conv2d': ([(1, 2, 2, 2)], [[0.6183258, 1.127472, 1.646732, 1.412629, 0.5234474, 0.9714297, 1.009418, 0.5815572]],
            [0.2366783, 0.8295272, 0.3205589, 0.7955583, 0.5386064, -0.4098593, -0.2821499, -1.014381, -0.5709119,
             -0.14911, -0.8108721, -0.437872, -0.9421583, -1.159073, 0.06693906, 0.06667668, 0.7327284, 0.5269521]),
 'conv2d_same_groups': ([(1, 2, 3, 3)],
                        [[1.235843, 1.731013, 0.5922862, 0.4289932, -0.7558357, -0.7215713, -1.707669, -1.45271,
                          -0.5311925, -1.526815, -1.512838, -0.2808509, 0.3084417, 1.259168, 0.7703293, 1.495425,
                          1.203365, 0.3782121]],
                        [0.2081832, 0.9298074, 1.645469, 0.7657964, 1.342227, 0.316918, -0.3320959, -1.628535,
                         -1.633702, -0.1613226, -0.7613443, -1.413626, -0.6609616, -1.55528, -0.9020391, -0.02452643,
                         1.170415, 1.61492]),
 'conv_transpose2d': ([(1, 2, 3, 3)],
                      [[0.9092974, 1.451388, 1.548145, 1.738525, 3.048044, 1.792099, 1.574932, 1.533339, 0.9451903,
                        0.4273799, 0.03321022, -0.2023623, -0.1755753, -1.633225, -0.6572913, -0.4432203, -0.7036632,
                        0.104646]],
                      [-0.112672, 0.3872209, 0.6912028, 0.3523247]),
 'conv_transpose2d_stride': ([(1, 1, 3, 3)],
                             [[0.9092974, 1.344443, 0.9360844, 1.886533, 1.635663, 1.765312, 0.950273, 1.492364,
                               0.9451903]],
                             [0.01028722, 0.5908826, 0.6653856, -1.119099]),
 'cross_entropy': ([()], [[1.610728]],
                   [-0.06769808, 0.02812925, 0.03956884, 0.04371106, 0.02577435, -0.0694854, 0.02604232, -0.05915884,
                    0.03311652]),
 'cross_entropy_probs': ([()], [[2.5983]],
                         [-0.08390734, 0.005201123, 0.07870623, 0.04744823, 0.007275698, -0.05472393]),
 'cross_entropy_smoothing_ignore': ([()], [[1.456829]],
                                    [-0.09330031, 0.03807047, 0.05522985, 0.0, 0.0, 0.0, 0.03494008, -0.08049145,
                                     0.04555137]),
 'dropout_eval': ([(2, 3)], [[0.0, 0.6442177, 0.9854497, 0.8632094, 0.3349881, -0.3507832]],
                  [0.247404, 0.8134155, 0.996865, 0.7114733, 0.09146464, -0.5715613]),
 'embedding': ([(2, 2, 2)],
               [[0.841471, 0.9916648, 0.6754632, 0.04158066, -0.8834547, -0.3738767, 0.6754632, 0.04158066]], None),
 'flatten': ([(2, 2)], [[0.0, 0.6442177, 0.9854497, 0.8632094]], [0.247404, 0.8134155, 0.996865, 0.7114733]),
 'gelu': ([(2, 3)], [[0.0, 0.4769033, 0.8256083, 0.6957371, 0.2114388, -0.1272907]],
          [0.123702, 0.7720349, 1.076333, 0.7422433, 0.06928738, -0.1321928]),
 'gelu_tanh': ([(2, 3)], [[0.0, 0.4768613, 0.8254606, 0.6956324, 0.211435, -0.1272952]],
               [0.123702, 0.771856, 1.07598, 0.7420015, 0.06928338, -0.1322212]),
 'group_norm': ([(1, 4, 2)],
                [[-0.4706507, 0.9557928, 1.3726, 1.05362, 0.7846444, -0.1043016, -0.8505246, -0.8593722]],
                [0.01580948, 0.05999893, 0.21974, -0.2955486, 0.2545457, -0.5562576, 0.1445282, 0.1571837]),
 'gru_bidirectional': ([(1, 3, 4), (2, 1, 2)],
                       [[0.2935011, 0.5328886, -0.4194579, -0.822989, 0.9109974, 0.9102948, -0.290015, -0.717819,
                         0.6335518, 0.5487008, -0.230323, -0.4908554],
                        [0.6335518, 0.5487008, -0.4194579, -0.822989]],
                       [0.6542691, 0.4929624, -0.00963155, 0.01251512, 0.6369417, 0.2157486]),
 'gru_cell': ([(2,)], [[0.2935011, 0.5328886]], [0.5515012, 0.473998]),
 'identity': ([(2,)], [[0.0, 0.6442177]], [0.247404, 0.8134155]),
 'l1_loss': ([()], [[3.894126]], [-0.247404, -0.247404, 0.247404, 0.247404, 0.247404, 0.247404]),
 'layer_norm': ([(2, 3)], [[-0.2093886, 0.6724876, 0.4754945, 1.892526, 0.5321646, -1.116168]],
                [-0.1612638, 0.4656026, -0.3043388, 0.05994435, -0.1060461, 0.04610178]),
 'leaky_relu': ([(2, 3)], [[0.0, 0.6442177, 0.9854497, 0.8632094, 0.3349881, -0.03507832]],
                [0.0247404, 0.8134155, 0.996865, 0.7114733, 0.09146464, -0.05715613]),
 'linear': ([(2, 2)], [[2.21378, -0.9300966, 1.730918, 0.6012087]],
            [0.2420056, -0.2523529, -0.6280259, 0.8684165, 0.5532354, -0.022141]),
 'log_softmax': ([(2, 3)], [[-1.215137, -0.550438, -0.2333584, -0.3519281, -0.8596675, -1.569591]],
                 [-0.03706542, 0.2915737, 0.6600799, 0.03706549, -0.2915737, -0.6600799]),
 'lstm': ([(3, 1, 3), (1, 1, 3), (1, 1, 3)],
          [[0.2059895, 0.0234432, 0.004873605, 0.4886136, -0.002775446, 0.002827135, 0.2496203, 0.01724812,
            0.01724416],
           [0.2496203, 0.01724812, 0.01724416], [0.6573781, 0.1161923, 0.1032018]],
          [0.02268312, -0.001144015, -0.02258811, 0.007711586, -0.1536591, -0.120297]),
 'lstm_cell': ([(1, 2), (1, 2)], [[0.2036888, 0.1189739], [0.2633941, 0.1671757]], [0.2364943, 0.1938111]),
 'lstm_two_layers': ([(2, 1, 2), (2, 1, 2), (2, 1, 2)],
                     [[-0.1613989, -0.3176966, -0.1923445, -0.4849309], [0.433792, 0.1140648, -0.1923445, -0.4849309],
                      [0.7002915, 0.2870932, -1.280921, -1.216263]],
                     [-0.01448776, -0.02509769, 0.1107817, 0.0394634]),
 'max_pool2d': ([(1, 1, 2, 2)], [[0.6442177, 0.9854497, 0.8545989, 0.9881682]],
                [0.0, 0.247404, 0.8134155, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.7114733, 0.996865, 0.0, 0.0,
                 0.0]),
 'max_pool2d_pad': ([(1, 1, 3, 3)],
                    [[0.6442177, 0.9854497, 0.8632094, 0.8545989, 0.9881682, 0.9881682, 0.8545989, 0.3190984,
                      -0.8796958]],
                    [0.0, 0.247404, 0.8134155, 0.996865, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -0.4800967, -0.2542997,
                     -0.9057667, 0.0, -0.419764]),
 'mse_loss': ([()], [[0.4815479]], [-0.06939442, -0.02865327, 0.02556397, 0.06775807, 0.07808449, 0.05168656]),
 'multihead_attention': ([(2, 1, 4), (1, 2, 3)],
                         [[-2.311598, 0.08304107, -1.258755, -0.3493046, -0.3331289, -2.278872, 1.213671, -2.646541],
                          [0.1402544, 0.002756354, 0.8569893, 0.1092303, 0.8675973, 0.02317241]],
                         [0.02178753, 0.04289347, 0.04382593, 0.02414637, -0.159164, -0.2671714, -0.249524,
                          -0.1145215]),
 'multihead_attention_batch_first_mask': ([(1, 2, 4), (1, 2, 2, 3)],
                                          [[-1.273252, 1.049406, -0.7042955, 0.2777998, 1.013852, -0.7441287,
                                            0.3884167, 0.0121788],
                                           [0.2516216, 0.0, 0.7483784, 0.01574941, 0.9842505, 0.0, 0.03686551, 0.0,
                                            0.9631345, 0.200244, 0.7997559, 0.0]],
                                          [0.06616815, 0.108785, 0.1002385, 0.04454833, -0.03617864, -0.1573469,
                                           -0.2045125, -0.1554927]),
 'nll_loss': ([()], [[0.6115134]], [-0.07068685, 0.0, 0.0, 0.0, 0.0, -0.03534342, 0.0, -0.1413737, 0.0]),
 'relu': ([(2, 3)], [[0.0, 0.6442177, 0.9854497, 0.8632094, 0.3349881, 0.0]],
          [0.0, 0.8134155, 0.996865, 0.7114733, 0.09146464, 0.0]),
 'rnn': ([(3, 1, 3), (1, 1, 3)],
         [[0.02316138, -0.9056839, -0.9821196, 0.7418228, 0.6339252, -0.9998163, 0.4771592, -0.9518563, -0.9779879],
          [0.4771592, -0.9518563, -0.9779879]],
         [0.421744, 0.3620039, 0.03083139, 0.09163868, -0.4880924, -0.5751086]),
 'rnn_cell': ([(1, 3)], [[0.02316552, 0.0, 0.0]], [0.2081832, 0.2453418]),
 'sigmoid': ([(2, 3)], [[0.5, 0.6557062, 0.7281882, 0.7033308, 0.5829726, 0.4131925]],
             [0.06185099, 0.1836331, 0.1973096, 0.1484536, 0.02223648, -0.1385833]),
 'silu': ([(2, 3)], [[0.0, 0.4224176, 0.7175929, 0.6071216, 0.1952889, -0.144941]],
          [0.123702, 0.6516613, 0.9203441, 0.6285476, 0.06077033, -0.1875522]),
 'smooth_l1_loss': ([(2, 3)], [[0.591471, 0.1207195, 0.09609165, 0.5716287, 0.696846, 0.3767469]],
                    [-0.247404, -0.5652378, 0.6180295, 0.7114733, 0.09146464, -0.5715613]),
 'softmax': ([(2, 3)], [[0.1790987, 0.3410929, 0.4798084, 0.5300366, 0.3125376, 0.1574257]],
             [-0.09898075, 0.004554021, 0.09442667, 0.2097666, -0.07008657, -0.13968]),
 'softplus': ([(2, 3)], [[0.3465736, 0.6442177, 0.9854497, 0.8632094, 0.5416124, 0.2013333]],
              [0.123702, 0.8134155, 0.996865, 0.7114733, 0.06050366, -0.1894526]),
 'tanh': ([(2, 3)], [[0.0, 0.5677645, 0.7554154, 0.6979075, 0.3229957, -0.33707]],
          [0.247404, 0.5512058, 0.4280016, 0.3649325, 0.08192248, -0.5066227]),
 'transformer_encoder_layer': ([(2, 1, 4)],
                               [[-1.156603, -0.5573292, 1.016234, 1.070249, -1.268263, -0.2153573, 1.025772,
                                 1.271031]],
                               [-0.1328833, 0.01117462, -0.01960737, -0.2469414, -0.05692085, -0.2677236, -0.03888046,
                                0.0849238]),
 'transformer_encoder_layer_norm_first': ([(1, 2, 4)],
                                          [[1.980678, -0.8624928, 1.970585, -3.598569, 2.646472, -2.23063, -0.1105269,
                                            -4.535435]],
                                          [0.2443518, 1.045419, 1.092959, 0.3864284, 0.0771651, -0.7265525, -0.885223,
                                           -0.817026]),
 'unflatten': ([(1, 2, 1)], [[0.0, 0.6442177]], [0.247404, 0.8134155])}


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_values(name):
    shapes, expected_outs, expected_grad = EXPECTED[name]
    _, outs, grad = run_case(graft, name)
    assert [tuple(o.shape) for o in outs] == shapes
    for o, e in zip(outs, expected_outs):
        assert o.detach().flatten().tolist() == pytest.approx(e, rel=2e-5, abs=2e-6)
    if expected_grad is None:
        assert grad is None
    else:
        assert grad.flatten().tolist() == pytest.approx(expected_grad, rel=2e-5, abs=2e-6)


def test_batch_norm_running_stats_and_cumulative_average():
    batches = [graft.tensor([[1.0, 2.0], [3.0, -2.0], [0.5 * s, 1.0]]) for s in range(3)]
    cumulative, exponential = nn.BatchNorm1d(2, momentum=None), nn.BatchNorm1d(2)
    for x in batches:
        cumulative(x)
        exponential(x)
    # torch 1.13: momentum=None averages the three batches' statistics equally
    assert cumulative.running_mean.tolist() == pytest.approx([1.5, 0.3333333134651184], rel=1e-6)
    assert cumulative.running_var.tolist() == pytest.approx([1.8055553436279297, 4.3333330154418945], rel=1e-6)
    assert exponential.running_mean.tolist() == pytest.approx([0.40966665744781494, 0.09033332765102386], rel=1e-6)
    assert exponential.running_var.tolist() == pytest.approx([1.2088332176208496, 1.903333067893982], rel=1e-6)
    assert cumulative.num_batches_tracked.item() == 3 and exponential.num_batches_tracked.item() == 3
    exponential.eval()
    assert exponential(graft.tensor([[1.0, 2.0]])).tolist()[0] == pytest.approx([0.5369234085083008,
                                                                                 1.3842005729675293], rel=1e-6)
    assert exponential.num_batches_tracked.item() == 3  # eval does not count


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=re.escape("expected 4D input (got 2D input)")):
        nn.BatchNorm2d(3)(graft.zeros(2, 3))
    with pytest.raises(ValueError, match=re.escape("expected 2D or 3D input (got 4D input)")):
        nn.BatchNorm1d(3)(graft.zeros(2, 3, 1, 1))
    with pytest.raises(ValueError, match=re.escape("Expected more than 1 value per channel when training, got input "
                                                   "size graft.Size([1, 3])")):
        nn.BatchNorm1d(3)(graft.zeros(1, 3))


def test_embedding_padding_row_and_from_pretrained():
    e = nn.Embedding(4, 2, padding_idx=1)
    assert e.weight[1].tolist() == [0.0, 0.0]
    e(graft.tensor([[0, 1], [1, 3]])).sum().backward()
    assert e.weight.grad.tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    assert nn.Embedding(4, 2, padding_idx=-1).padding_idx == 3
    pre = nn.Embedding.from_pretrained(graft.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert not pre.weight.requires_grad and pre(graft.tensor([1, 0])).tolist() == [[3.0, 4.0], [1.0, 2.0]]
    assert nn.Embedding.from_pretrained(graft.zeros(2, 2), freeze=False).weight.requires_grad
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(graft.zeros(3))


def test_dropout_training_zeroes_and_rescales():
    graft.manual_seed(0)
    d = nn.Dropout(0.25)
    y = d(graft.ones(4000))
    kept = (y != 0).sum().item()
    assert 0.72 * 4000 < kept < 0.78 * 4000
    assert set(round(v, 5) for v in y.tolist()) == {0.0, round(1 / 0.75, 5)}
    d.eval()
    assert d(graft.ones(3)).tolist() == [1.0, 1.0, 1.0]
    x = graft.ones(10)
    assert nn.Dropout(0.5, inplace=True).train()(x) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)


def test_default_initialisation_bounds():
    graft.manual_seed(0)
    lin = nn.Linear(16, 64)
    bound = 1 / math.sqrt(16)
    assert lin.weight.detach().abs().max().item() <= bound and lin.bias.detach().abs().max().item() <= bound
    assert lin.weight.detach().abs().max().item() > 0.9 * bound  # uniform over the whole interval
    conv = nn.Conv2d(4, 8, 3)
    assert conv.weight.detach().abs().max().item() <= 1 / math.sqrt(36)
    rnn = nn.LSTM(3, 5)
    assert all(p.detach().abs().max().item() <= 1 / math.sqrt(5) for p in rnn.parameters())
    mha = nn.MultiheadAttention(8, 2)
    assert mha.in_proj_bias.detach().abs().sum().item() == 0 and mha.out_proj.bias.detach().abs().sum().item() == 0
    assert mha.in_proj_weight.detach().abs().max().item() <= math.sqrt(6 / (8 + 24))
    ln, bn = nn.LayerNorm(3), nn.BatchNorm1d(3)
    assert ln.weight.tolist() == [1.0] * 3 and ln.bias.tolist() == [0.0] * 3
    assert bn.running_var.tolist() == [1.0] * 3 and bn.num_batches_tracked.dtype == graft.int64
    emb = nn.Embedding(500, 4)
    assert 0.85 < emb.weight.detach().std().item() < 1.15


def test_layer_constructor_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="out_channels must be divisible by groups"):
        nn.Conv2d(2, 3, 3, groups=2)
    with pytest.raises(ValueError, match=re.escape("Invalid padding string 'foo', should be one of {'valid', "
                                                   "'same'}")):
        nn.Conv2d(1, 1, 3, padding="foo")
    with pytest.raises(ValueError, match=re.escape("padding='same' is not supported for strided convolutions")):
        nn.Conv1d(1, 1, 3, stride=2, padding="same")
    with pytest.raises(NotImplementedError, match="padding_mode='reflect' is not supported by graft"):
        nn.Conv2d(1, 1, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(2, 3, dropout=2)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1, but got dropout=0.5 "
                                         "and num_layers=1"):
        nn.RNN(2, 3, dropout=0.5)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sin'"):
        nn.RNN(2, 3, nonlinearity="sin")


def test_recurrent_forward_errors():
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D instead"):
        nn.LSTM(2, 3)(graft.zeros(1, 2, 3, 2))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 2, got 4"):
        nn.LSTM(2, 3)(graft.zeros(1, 2, 4))
    with pytest.raises(RuntimeError, match=re.escape("Expected hidden size (1, 2, 3), got [2, 2, 3]")):
        nn.GRU(2, 3)(graft.zeros(5, 2, 2), graft.zeros(2, 2, 3))
    with pytest.raises(RuntimeError, match=re.escape("Expected hidden[1] size (1, 2, 3), got [1, 3, 3]")):
        nn.LSTM(2, 3)(graft.zeros(5, 2, 2), (graft.zeros(1, 2, 3), graft.zeros(1, 3, 3)))
    with pytest.raises(RuntimeError, match="For batched 3-D input, hx should also be 3-D but got 2-D tensor"):
        nn.RNN(2, 3)(graft.zeros(5, 2, 2), graft.zeros(2, 3))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D instead"):
        nn.GRUCell(2, 3)(graft.zeros(1, 1, 2))


def test_recurrent_shapes():
    out, (h, c) = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)(graft.zeros(2, 5, 3))
    assert tuple(out.shape) == (2, 5, 8) and tuple(h.shape) == (4, 2, 4) and tuple(c.shape) == (4, 2, 4)
    out, h = nn.GRU(3, 4)(graft.zeros(5, 3))
    assert tuple(out.shape) == (5, 4) and tuple(h.shape) == (1, 4)
    assert [n for n, _ in nn.GRU(3, 4, bidirectional=True).named_parameters()] == [
        "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
        "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse"]
    assert tuple(nn.LSTM(3, 4).weight_ih_l0.shape) == (16, 3)


def test_multihead_attention_shapes_and_need_weights():
    mha = nn.MultiheadAttention(6, 3, batch_first=True)
    q = graft.randn(2, 4, 6)
    out, w = mha(q, q, q, average_attn_weights=False)
    assert tuple(out.shape) == (2, 4, 6) and tuple(w.shape) == (2, 3, 4, 4)
    out, w = mha(q, q, q, need_weights=False)
    assert w is None
    assert [n for n, _ in mha.named_parameters()] == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                                      "out_proj.bias"]
    kv = nn.MultiheadAttention(6, 3, kdim=2, vdim=5)
    assert [n for n, _ in kv.named_parameters()] == ["q_proj_weight", "k_proj_weight", "v_proj_weight",
                                                     "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    with pytest.raises(RuntimeError, match=re.escape("The shape of the 2D attn_mask is graft.Size([4, 3]), but should "
                                                     "be (4, 4).")):
        mha(q, q, q, attn_mask=graft.zeros(4, 3))


def test_transformer_encoder_layer_causal_hint_needs_a_mask():
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
    x = graft.randn(3, 1, 4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(x, is_causal=True)
    mask = graft.tensor([[False, True, True], [False, False, True], [False, False, False]])
    assert graft.equal(layer(x, src_mask=mask, is_causal=True), layer(x, src_mask=mask))


# repr strings torch 1.13 prints for the same layers
REPRS = [
    (lambda: nn.Linear(2, 3, bias=False), "Linear(in_features=2, out_features=3, bias=False)"),
    (lambda: nn.Bilinear(2, 3, 4), "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)"),
    (lambda: nn.Conv1d(2, 4, 3), "Conv1d(2, 4, kernel_size=(3,), stride=(1,))"),
    (lambda: nn.Conv2d(2, 4, (3, 2), stride=2, padding=1, dilation=2, groups=2, bias=False),
     "Conv2d(2, 4, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), dilation=(2, 2), groups=2, bias=False)"),
    (lambda: nn.Conv2d(2, 4, 3, padding="same"), "Conv2d(2, 4, kernel_size=(3, 3), stride=(1, 1), padding=same)"),
    (lambda: nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1),
     "ConvTranspose2d(2, 4, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"),
    (lambda: nn.MaxPool2d(2), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    (lambda: nn.MaxPool2d((2, 3), stride=1, padding=1, return_indices=True, ceil_mode=True),
     "MaxPool2d(kernel_size=(2, 3), stride=1, padding=1, dilation=1, ceil_mode=True)"),
    (lambda: nn.AvgPool2d(3, 2, 1, True, False, 2), "AvgPool2d(kernel_size=3, stride=2, padding=1)"),
    (lambda: nn.AdaptiveAvgPool2d((None, 3)), "AdaptiveAvgPool2d(output_size=(None, 3))"),
    (lambda: nn.ReLU(True), "ReLU(inplace=True)"),
    (lambda: nn.GELU("tanh"), "GELU(approximate='tanh')"),
    (lambda: nn.SiLU(), "SiLU()"),
    (lambda: nn.Softmax(), "Softmax(dim=None)"),
    (lambda: nn.LogSoftmax(dim=-1), "LogSoftmax(dim=-1)"),
    (lambda: nn.LeakyReLU(0.2, True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.Softplus(2, 10), "Softplus(beta=2, threshold=10)"),
    (lambda: nn.Dropout(0.2, True), "Dropout(p=0.2, inplace=True)"),
    (lambda: nn.LayerNorm([2, 3], elementwise_affine=False), "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False)"),
    (lambda: nn.BatchNorm2d(3, momentum=None, affine=False, track_running_stats=False),
     "BatchNorm2d(3, eps=1e-05, momentum=None, affine=False, track_running_stats=False)"),
    (lambda: nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True)"),
    (lambda: nn.Embedding(10, 3, padding_idx=0, max_norm=1.0), "Embedding(10, 3, padding_idx=0, max_norm=1.0)"),
    (lambda: nn.Flatten(), "Flatten(start_dim=1, end_dim=-1)"),
    (lambda: nn.Unflatten(1, (2, 3)), "Unflatten(dim=1, unflattened_size=(2, 3))"),
    (lambda: nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, batch_first=True),
     "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)\n)"),
    (lambda: nn.LSTM(2, 3, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True),
     "LSTM(2, 3, num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)"),
    (lambda: nn.RNNCell(2, 3, nonlinearity="relu"), "RNNCell(2, 3, nonlinearity=relu)"),
    (lambda: nn.LSTMCell(2, 3, bias=False), "LSTMCell(2, 3, bias=False)"),
    (lambda: nn.CrossEntropyLoss(weight=graft.ones(3)), "CrossEntropyLoss()"),
    (lambda: nn.ParameterList([nn.Parameter(graft.zeros(2, 3)), nn.Parameter(graft.zeros(1, dtype=graft.float64))]),
     "ParameterList(\n    (0): Parameter containing: [graft.float32 of size 2x3]\n"
     "    (1): Parameter containing: [graft.float64 of size 1]\n)"),
    (lambda: nn.ParameterDict({"a": nn.Parameter(graft.zeros(2))}),
     "ParameterDict(  (a): Parameter containing: [graft.FloatTensor of size 2])"),
    (lambda: nn.TransformerEncoderLayer(4, 2, 8),
     "TransformerEncoderLayer(\n  (self_attn): MultiheadAttention(\n    (out_proj): NonDynamicallyQuantizableLinear("
     "in_features=4, out_features=4, bias=True)\n  )\n  (linear1): Linear(in_features=4, out_features=8, bias=True)\n"
     "  (dropout): Dropout(p=0.1, inplace=False)\n  (linear2): Linear(in_features=8, out_features=4, bias=True)\n"
     "  (norm1): LayerNorm((4,), eps=1e-05, elementwise_affine=True)\n  (norm2): LayerNorm((4,), eps=1e-05, "
     "elementwise_affine=True)\n  (dropout1): Dropout(p=0.1, inplace=False)\n  (dropout2): Dropout(p=0.1, "
     "inplace=False)\n)"),
]


@pytest.mark.parametrize("index", range(len(REPRS)))
def test_layer_repr(index):
    make, expected = REPRS[index]
    assert repr(make()) == expected


# ---------------------------------------------------------------- containers

def test_sequential_indexing_slicing_and_editing():
    a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    s = nn.Sequential(a, b, c)
    assert len(s) == 3 and s[0] is a and s[-1] is c and list(s) == [a, b, c]
    part = s[1:]
    assert type(part) is nn.Sequential and list(part) == [b, c] and list(part._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        s[3]
    s[1] = nn.Identity()
    assert isinstance(s[1], nn.Identity)
    del s[0]
    assert list(s._modules) == ["0", "1"] and s[1] is c
    s.append(a)
    assert s[2] is a and len(s) == 3
    s.insert(0, b)
    assert s[0] is b and list(s._modules) == ["0", "1", "2", "3"]
    assert s.pop(0) is b and len(s) == 3
    assert s(graft.tensor([-1.0, 2.0])).tolist() == pytest.approx([0.2689414322376251, 0.8807970285415649])
    named = nn.Sequential(collections.OrderedDict([("first", nn.ReLU()), ("second", nn.Tanh())]))
    assert list(named._modules) == ["first", "second"] and isinstance(named.second, nn.Tanh)
    assert len(s + named) == 5


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.append(nn.Sigmoid())
    ml += [nn.Identity()]
    ml.insert(1, nn.GELU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "GELU", "Tanh", "Sigmoid", "Identity"]
    assert type(ml[1:3]) is nn.ModuleList and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3"] and isinstance(ml[0], nn.GELU)
    with pytest.raises(IndexError, match="index -5 is out of range"):
        ml[-5]
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got ReLU"):
        ml.extend(nn.ReLU())
    with pytest.raises(NotImplementedError, match=re.escape('Module [ModuleList] is missing the required "forward"')):
        ml(graft.zeros(1))
    md = nn.ModuleDict({"act": nn.ReLU()})
    md["lin"] = nn.Linear(1, 1)
    md.update([("tanh", nn.Tanh())])
    assert list(md.keys()) == ["act", "lin", "tanh"] and "lin" in md and len(md) == 3
    assert [n for n, _ in md.named_parameters()] == ["lin.weight", "lin.bias"]
    assert isinstance(md.pop("act"), nn.ReLU) and list(md) == ["lin", "tanh"]
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        md.update([("x",)])


def test_parameter_list_and_dict():
    pl = nn.ParameterList([graft.zeros(2), nn.Parameter(graft.ones(1))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(graft.ones(3))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert len(pl[1:]) == 2 and pl[-1].tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl()
    pd = nn.ParameterDict({"b": graft.zeros(1), "a": graft.ones(1)})
    assert list(pd.keys()) == ["a", "b"]  # a plain dict is added in sorted order
    pd["c"] = nn.Parameter(graft.zeros(2))
    assert "c" in pd and len(pd) == 3 and isinstance(pd["a"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    assert pd.pop("b").tolist() == [0.0] and list(pd) == ["a", "c"]
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as it is not a string"):
        pd[1]

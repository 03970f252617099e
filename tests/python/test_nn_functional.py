"""graft.nn.functional values and error texts (expected numbers from torch 1.13), graft.nn.init
(statistics of seeded draws, fans, gains, errors) and graft.nn.utils gradient clipping."""
import math
import re
import warnings

import pytest

import graft
import graft.nn as nn
import graft.nn.functional as F
from graft.nn import init


def approx(values, rel=1e-6, abs=1e-6):
    return pytest.approx(values, rel=rel, abs=abs)


def nested(t):
    return t.detach().tolist()


def x23():
    return graft.tensor([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])


def flat(rows):
    return [v for r in rows for v in (flat(r) if isinstance(r, list) else [r])]


# ---------------------------------------------------------------- values

def test_activations():
    x = x23()
    assert flat(nested(F.relu(x))) == [1.0, 0.0, 0.5, 0.0, 3.0, 0.0]
    assert flat(nested(F.gelu(x))) == approx([0.8413447141647339, -0.045500099658966064, 0.3457311987876892, 0.0,
                                              2.995950222015381, -0.1586552858352661])
    assert flat(nested(F.gelu(x, approximate="tanh"))) == approx(
        [0.8411920070648193, -0.04540228843688965, 0.3457140028476715, 0.0, 2.9963626861572266, -0.15880799293518066])
    assert flat(nested(F.silu(x))) == approx([0.7310585975646973, -0.23840583860874176, 0.3112296760082245, 0.0,
                                              2.857722520828247, -0.2689414322376251])
    assert flat(nested(F.leaky_relu(x, 0.2))) == approx([1.0, -0.4, 0.5, 0.0, 3.0, -0.2])
    assert flat(nested(F.softplus(x, beta=2, threshold=1))) == approx(
        [1.0, 0.009074964560568333, 0.65663081407547, 0.3465735912322998, 3.0, 0.06346400082111359])
    assert flat(nested(F.log_softmax(x, dim=1))) == approx(
        [-0.5045968890190125, -3.5045969486236572, -1.0045969486236572, -3.0658838748931885, -0.06588391214609146,
         -4.065884113311768])
    assert F.softmax(x, dim=0, dtype=graft.float64).dtype == graft.float64
    assert flat(nested(F.sigmoid(graft.tensor([0.0])))) == [0.5] and nested(F.tanh(graft.tensor([0.0]))) == [0.0]


def test_inplace_activations_return_their_input():
    x = graft.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = graft.tensor([-1.0, 0.0])
    assert F.leaky_relu(y, 0.5, inplace=True) is y and y.tolist() == [-0.5, 0.0]
    z = graft.ones(4)
    assert F.dropout(z, 0.5, training=False, inplace=True) is z


def test_softmax_without_dim_warns_and_picks_pytorchs_dim():
    x = graft.tensor([[1.0, 2.0], [3.0, 5.0]])
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated. Change the call "
                                         "to include dim=X as an argument."):
        y = F.softmax(x)
    assert flat(nested(y)) == approx(flat(nested(F.softmax(x, dim=1))))


def test_convolution_and_pooling_values():
    img = graft.arange(16.0).reshape(1, 1, 4, 4)
    assert nested(F.conv2d(img, graft.ones(1, 1, 2, 2), bias=graft.tensor([0.5]), stride=2)) == \
        [[[[10.5, 18.5], [42.5, 50.5]]]]
    assert nested(F.conv2d(graft.arange(9.0).reshape(1, 1, 3, 3), graft.ones(1, 1, 2, 2), padding="same")) == \
        [[[[8.0, 12.0, 7.0], [20.0, 24.0, 13.0], [13.0, 15.0, 8.0]]]]
    assert nested(F.conv1d(graft.arange(5.0).reshape(1, 1, 5), graft.tensor([[[1.0, -1.0]]]), dilation=2)) == \
        [[[-2.0, -2.0, -2.0]]]
    assert nested(F.conv_transpose2d(graft.ones(1, 1, 2, 2), graft.arange(4.0).reshape(1, 1, 2, 2), stride=2)) == \
        [[[[0.0, 1.0, 0.0, 1.0], [2.0, 3.0, 2.0, 3.0], [0.0, 1.0, 0.0, 1.0], [2.0, 3.0, 2.0, 3.0]]]]
    values, indices = _flipped_max_pool()
    assert nested(values) == [[[[7.0, 5.0], [15.0, 13.0]]]] and nested(indices) == [[[[4, 6], [12, 14]]]]
    assert nested(F.avg_pool2d(img, 3, stride=1, padding=1, count_include_pad=False)) == \
        [[[[2.5, 3.0, 4.0, 4.5], [4.5, 5.0, 6.0, 6.5], [8.5, 9.0, 10.0, 10.5], [10.5, 11.0, 12.0, 12.5]]]]
    assert nested(F.adaptive_avg_pool2d(graft.arange(12.0).reshape(1, 1, 3, 4), (2, None))) == \
        [[[[2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0]]]]
    cols = F.unfold(graft.arange(9.0).reshape(1, 1, 3, 3), 2)
    assert nested(cols) == [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    assert nested(F.fold(cols, (3, 3), 2)) == [[[[0.0, 2.0, 2.0], [6.0, 16.0, 10.0], [6.0, 14.0, 8.0]]]]


def _flipped_max_pool():
    # the columns of img in reverse order (4x4: 3 2 1 0 / 7 6 5 4 / ...), built without advanced indexing
    rows = [[float(4 * r + c) for c in (3, 2, 1, 0)] for r in range(4)]
    return F.max_pool2d(graft.tensor([[rows]]), 2, return_indices=True)


def test_pad_attention_normalize_embedding_one_hot():
    assert nested(F.pad(graft.tensor([[1.0, 2.0]]), (1, 2, 1, 0), value=9.0)) == \
        [[9.0, 9.0, 9.0, 9.0, 9.0], [9.0, 1.0, 2.0, 9.0, 9.0]]
    assert nested(F.pad(graft.tensor([[1.0, 2.0, 3.0]]), (-1, 1))) == [[2.0, 3.0, 0.0]]
    q = graft.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    assert flat(nested(F.scaled_dot_product_attention(q, q, q * 2))) == approx(
        [1.6044483184814453, 1.1977758407592773, 1.1977758407592773, 1.6044483184814453, 1.5034898519515991,
         1.5034898519515991])
    assert flat(nested(F.scaled_dot_product_attention(q, q, q * 2, is_causal=True))) == approx(
        [2.0, 0.0, 0.6604769229888916, 1.3395230770111084, 1.5034898519515991, 1.5034898519515991])
    x = x23()
    assert flat(nested(F.normalize(x))) == approx([0.4364357590675354, -0.8728715181350708, 0.2182178795337677, 0.0,
                                                   0.9486832618713379, -0.3162277638912201])
    assert flat(nested(F.normalize(x, p=1.0, dim=0))) == approx([1.0, -0.4, 0.3333333432674408, 0.0, 0.6,
                                                                 -0.6666666865348816])
    z = graft.zeros(2, 3, requires_grad=True)
    F.normalize(z).sum().backward()
    assert flat(nested(z.grad)) == approx([1e12] * 6)  # finite at zero: 1 / eps, as torch
    assert nested(F.embedding(graft.tensor([2, 0]), x.t())) == [[0.5, -1.0], [1.0, 0.0]]
    assert nested(F.one_hot(graft.tensor([2, 0, 1]))) == [[0, 0, 1], [1, 0, 0], [0, 1, 0]]
    assert F.one_hot(graft.tensor([1]), num_classes=4).dtype == graft.int64


def test_the_python_layer_over_the_generated_nn_ops():
    # torch.nn.functional's own Python code, over the generated _C._nn bindings (values from torch 1.13)
    x = graft.arange(16.0).reshape(1, 1, 4, 4)
    values, indices = F.max_pool2d(x, 2, return_indices=True)
    assert flat(nested(values)) == [5.0, 7.0, 13.0, 15.0] and flat(indices.tolist()) == [5, 7, 13, 15]
    assert nested(F.max_pool2d(x, 2, None)) == nested(values)  # stride=None: the kernel's
    assert list(F.avg_pool2d(x, 2, None).shape) == [1, 1, 2, 2]
    assert list(F.adaptive_avg_pool2d(x, (None, 2)).shape) == [1, 1, 4, 2]  # None keeps the input's size
    assert list(F.adaptive_avg_pool2d(x, 3).shape) == [1, 1, 3, 3]
    assert nested(F.fold(F.unfold(x, 2), (4, 4), 2)) == nested(x * graft.tensor([[1.0, 2, 2, 1], [2, 4, 4, 2],
                                                                                 [2, 4, 4, 2], [1, 2, 2, 1]]))
    assert list(F.conv2d(x, graft.ones(1, 1, 2, 2), padding="same").shape) == [1, 1, 4, 4]
    assert list(F.conv2d(x, graft.ones(1, 1, 2, 2), None, 1, "valid").shape) == [1, 1, 3, 3]
    assert list(F.pad(x, (1, 1), value=None).shape) == [1, 1, 4, 6]
    assert F.dropout(x, 0.0, inplace=True) is x
    w = graft.arange(6.0).reshape(3, 2).requires_grad_()
    F.embedding(graft.tensor([0, 2, 2]), w, padding_idx=-1).sum().backward()  # -1: the last row
    assert nested(w.grad) == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]
    assert x.amax(None).item() == 15.0 and x.amin(dim=None).item() == 0.0  # an int list defaulting to [] takes None
    p = nn.Parameter(graft.ones(3))
    with graft.no_grad():
        for fill in (lambda t: t.uniform_(2, 3), lambda t: t.normal_(std=9223372036854775808), lambda t: t.zero_(),
                     lambda t: t.bernoulli_(), lambda t: t.exponential_(), lambda t: t.geometric_(0.5),
                     lambda t: t.log_normal_(), lambda t: t.cauchy_()):
            assert fill(p) is p and type(p) is nn.Parameter  # the in-place methods return the tensor itself


def test_normalization_values():
    x = x23()
    ln = F.layer_norm(x, (3,), graft.tensor([1.0, 2.0, 3.0]), graft.tensor([0.0, 0.1, 0.2]))
    assert flat(nested(ln)) == approx([0.88899827003479, -2.6939947605133057, 1.7239969968795776, -0.3922315835952759,
                                       2.845621109008789, -2.741736888885498], rel=1e-5)
    gn = F.group_norm(x.reshape(1, 2, 3), 2)
    assert flat(nested(gn)) == approx([0.88899827003479, -1.396997332572937, 0.5079990029335022, -0.3922315835952759,
                                       1.3728104829788208, -0.9805790185928345], rel=1e-5)
    rm, rv = graft.zeros(3), graft.ones(3)
    bn = F.batch_norm(x, rm, rv, training=True, momentum=0.5)
    assert flat(nested(bn)) == approx([0.9999799728393555, -0.9999991655349731, 0.9999910593032837,
                                       -0.9999799728393555, 0.9999991655349731, -0.9999910593032837], rel=1e-5)
    assert rm.tolist() == approx([0.25, 0.25, -0.125]) and rv.tolist() == approx([0.75, 6.75, 1.0625])


def test_loss_values():
    x = x23()
    assert F.cross_entropy(x, graft.tensor([2, 1]), label_smoothing=0.2).item() == approx(0.8352404832839966)
    assert nested(F.cross_entropy(x, graft.tensor([2, 1]), reduction="none")) == approx([1.0045969486236572,
                                                                                       0.06588391214609146])
    assert F.nll_loss(x, graft.tensor([0, 2]), ignore_index=2).item() == -1.0
    assert F.mse_loss(x, graft.zeros(2, 3), reduction="sum").item() == 15.25
    assert F.l1_loss(x, graft.ones(2, 3)).item() == approx(1.4166666269302368)
    assert F.smooth_l1_loss(x, graft.zeros(2, 3), beta=0.5).item() == approx(1.0416666269302368)
    p, t = graft.tensor([0.2, 0.9, 0.5]), graft.tensor([0.0, 1.0, 1.0])
    assert F.binary_cross_entropy(p, t).item() == approx(0.34055042266845703)
    assert F.binary_cross_entropy(p, t, weight=graft.tensor([1.0, 2.0, 3.0]), reduction="sum").item() == \
        approx(2.513306140899658)
    assert F.binary_cross_entropy_with_logits(x[0], graft.tensor([1.0, 0.0, 1.0]),
                                              pos_weight=graft.tensor([2.0, 1.0, 0.5])).item() == \
        approx(0.33016330003738403)


def test_legacy_reduction_arguments_warn():
    x = x23()
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead."):
        total = F.mse_loss(x, graft.zeros(2, 3), size_average=False)
    assert total.item() == 15.25
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert tuple(nn.L1Loss(reduce=False)(x, x).shape) == (2, 3)


def test_regression_loss_warns_about_broadcast_target():
    with pytest.warns(UserWarning, match=re.escape("Using a target size (graft.Size([3, 1])) that is different to the "
                                                   "input size (graft.Size([3])). This will likely lead to incorrect "
                                                   "results due to broadcasting. Please ensure they have the same "
                                                   "size.")):
        F.mse_loss(graft.zeros(3), graft.zeros(3, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(graft.zeros(3), graft.zeros(3))


# ---------------------------------------------------------------- errors

ERRORS = [
    (lambda: F.conv2d(graft.zeros(1, 2, 5, 5), graft.zeros(3, 4, 3, 3)), RuntimeError,
     "Given groups=1, weight of size [3, 4, 3, 3], expected input[1, 2, 5, 5] to have 4 channels, but got 2 channels "
     "instead"),
    (lambda: F.conv2d(graft.zeros(5, 5), graft.zeros(3, 2, 3, 3)), RuntimeError,
     "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]"),
    (lambda: F.conv2d(graft.zeros(1, 2, 2, 2), graft.zeros(3, 2, 3, 3)), RuntimeError,
     "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than "
     "actual input size"),
    (lambda: F.conv2d(graft.zeros(1, 2, 5, 5), graft.zeros(3, 2, 3, 3), padding="foo"), RuntimeError,
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(graft.zeros(1, 2, 5, 5), graft.zeros(3, 2, 3, 3), stride=2, padding="same"), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv1d(graft.zeros(1, 2, 5, 5), graft.zeros(3, 2, 3)), RuntimeError,
     "Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: [1, 2, 5, 5]"),
    (lambda: F.max_pool2d(graft.zeros(1, 1, 1, 1), 2), RuntimeError,
     "Given input size: (1x1x1). Calculated output size: (1x0x0). Output size is too small"),
    (lambda: F.avg_pool2d(graft.zeros(1, 1, 4, 4), 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
    (lambda: F.pad(graft.zeros(2, 2), (1,)), RuntimeError, "Padding length must be divisible by 2"),
    (lambda: F.pad(graft.zeros(1, 2, 2), (1, 1), mode="bogus"), NotImplementedError, "Unrecognised padding mode bogus"),
    (lambda: F.dropout(graft.zeros(2), p=1.5), ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda: F.embedding(graft.zeros(2), graft.zeros(3, 2)), RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
     "graft.FloatTensor instead (while checking arguments for embedding)"),
    (lambda: F.embedding(graft.tensor([0]), graft.zeros(3, 2), padding_idx=5), AssertionError,
     "Padding_idx must be within num_embeddings"),
    (lambda: F.layer_norm(graft.zeros(2, 3), (4,)), RuntimeError,
     "Given normalized_shape=[4], expected input with shape [*, 4], but got input of size[2, 3]"),
    (lambda: F.group_norm(graft.zeros(2, 3, 2), 2), RuntimeError,
     "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 3, 2] and "
     "num_groups=2"),
    (lambda: F.batch_norm(graft.zeros(2, 3), None, None, training=False), RuntimeError,
     "running_mean must be defined in evaluation mode"),
    (lambda: F.batch_norm(graft.zeros(1, 3), None, None, training=True), ValueError,
     "Expected more than 1 value per channel when training, got input size graft.Size([1, 3])"),
    (lambda: F.group_norm(graft.zeros(1, 2), 2), ValueError,
     "Expected more than 1 value per channel when training, got input size [1, 2]"),
    (lambda: F.group_norm(graft.zeros(3), 1), RuntimeError,
     "Expected at least 2 dimensions for input tensor but received 1"),
    (lambda: F.nll_loss(graft.zeros(2, 3), graft.tensor([0, 1], dtype=graft.int32)), RuntimeError,
     "expected scalar type Long but found Int"),
    (lambda: F.pad(graft.zeros(2, 2), 1), TypeError, "pad(): argument 'pad' (position 2) must be tuple of ints, not int"),
    (lambda: F.max_pool2d(graft.zeros(1, 1, 4, 4), "a"), TypeError,
     "max_pool2d(): argument 'kernel_size' (position 2) must be tuple of ints, not str"),
    (lambda: F.conv2d(graft.zeros(1, 1, 4, 4), graft.zeros(1, 1, 3, 3), padding="foo"), RuntimeError,
     "Invalid padding string: 'foo'"),
    (lambda: F.conv2d(graft.zeros(1, 1, 4, 4), graft.zeros(1, 1, 3, 3), padding="same", stride=2), RuntimeError,
     "padding='same' is not supported for strided convolutions"),
    (lambda: F.mse_loss(graft.zeros(2), graft.zeros(2), reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
    (lambda: F.nll_loss(graft.zeros(2, 3), graft.zeros(2)), RuntimeError, "expected scalar type Long but found Float"),
    (lambda: F.nll_loss(graft.zeros(2, 3), graft.tensor([0, 1, 2])), ValueError,
     "Expected input batch_size (2) to match target batch_size (3)."),
    (lambda: F.nll_loss(graft.zeros(2, 3), graft.tensor([0, 5])), IndexError, "Target 5 is out of bounds."),
    (lambda: F.cross_entropy(graft.zeros(2, 3), graft.tensor([0, 1]), label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.binary_cross_entropy(graft.zeros(3), graft.zeros(3, 1)), ValueError,
     "Using a target size (graft.Size([3, 1])) that is different to the input size (graft.Size([3])) is deprecated. "
     "Please ensure they have the same size."),
    (lambda: F.binary_cross_entropy(graft.tensor([2.0]), graft.zeros(1)), RuntimeError,
     "all elements of input should be between 0 and 1"),
    (lambda: F.binary_cross_entropy_with_logits(graft.zeros(3), graft.zeros(3, 1)), ValueError,
     "Target size (graft.Size([3, 1])) must be the same as input size (graft.Size([3]))"),
    (lambda: F.smooth_l1_loss(graft.zeros(3), graft.zeros(3), beta=-1.0), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: F.one_hot(graft.tensor([-1, 0])), RuntimeError, "Class values must be non-negative."),
    (lambda: F.one_hot(graft.tensor([3, 0]), 3), RuntimeError, "Class values must be smaller than num_classes."),
    (lambda: F.one_hot(graft.zeros(2)), RuntimeError, "one_hot is only applicable to index tensor of type LongTensor."),
    (lambda: F.linear(graft.zeros(2, 3), graft.zeros(4, 2)), RuntimeError,
     "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x4)"),
    (lambda: F.gelu(graft.zeros(2), approximate="foo"), RuntimeError,
     "approximate argument must be either none or tanh."),
    (lambda: F.fold(graft.zeros(1, 4, 3), (3, 4), 2), RuntimeError,
     "Given output_size=(3, 4), kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size of "
     "input's dimension 2 to match the calculated number of sliding blocks 2 * 3 = 6, but got input.size(2)=3."),
    (lambda: F.scaled_dot_product_attention(graft.zeros(1, 2, 2), graft.zeros(1, 2, 2), graft.zeros(1, 2, 2),
                                            attn_mask=graft.zeros(2, 2), is_causal=True), RuntimeError,
     "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"),
    (lambda: F.adaptive_avg_pool2d(graft.zeros(1, 1, 4, 4), (-1, 2)), RuntimeError,
     "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, 2}"),
    (lambda: F.conv2d(graft.zeros(1, 1, 3, 3), graft.zeros(1, 1, 2, 2), None, "x", 0, 1, 1), TypeError,
     "conv2d() received an invalid combination of arguments - got (Tensor, Tensor, NoneType, str, int, int, int), "
     "but expected one of:\n"
     " * (Tensor input, Tensor weight, Tensor bias, tuple of ints stride, tuple of ints padding, tuple of ints "
     "dilation, int groups)\n"
     "      didn't match because some of the arguments have invalid types: (Tensor, Tensor, NoneType, !str!, int, int, "
     "int)\n"
     " * (Tensor input, Tensor weight, Tensor bias, tuple of ints stride, str padding, tuple of ints dilation, int "
     "groups)\n"
     "      didn't match because some of the arguments have invalid types: (Tensor, Tensor, NoneType, !str!, !int!, "
     "int, int)\n"),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_functional_errors(index):
    call, kind, text = ERRORS[index]
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == text


# ---------------------------------------------------------------- init

def test_init_returns_the_same_tensor_and_records_nothing():
    p = nn.Parameter(graft.empty(20, 30))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.trunc_normal_, init.ones_, init.zeros_, init.eye_):
        out = fn(p)
        assert out is p and p.grad_fn is None and p.is_leaf and type(p) is nn.Parameter
    assert init.constant_(p, 0.5) is p and p.detach().sum().item() == 0.5 * 600


def test_init_statistics():
    graft.manual_seed(1234)
    t = graft.empty(200, 300)
    init.uniform_(t, -2.0, 3.0)
    assert -2.0 <= t.min().item() and t.max().item() <= 3.0 and abs(t.mean().item() - 0.5) < 0.03
    init.normal_(t, 1.0, 2.0)
    assert abs(t.mean().item() - 1.0) < 0.03 and abs(t.std().item() - 2.0) < 0.03
    init.xavier_uniform_(t, gain=2.0)
    bound = 2.0 * math.sqrt(6.0 / 500)
    assert t.abs().max().item() <= bound and abs(t.std().item() - bound / math.sqrt(3)) < 0.01 * bound
    init.xavier_normal_(t)
    assert abs(t.std().item() - math.sqrt(2.0 / 500)) < 0.01 * math.sqrt(2.0 / 500)
    init.kaiming_uniform_(t, a=math.sqrt(5))  # Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
    assert t.abs().max().item() <= 1 / math.sqrt(300) and t.abs().max().item() > 0.99 / math.sqrt(300)
    init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")
    assert abs(t.std().item() - math.sqrt(2.0 / 200)) < 0.01 * math.sqrt(2.0 / 200)
    init.trunc_normal_(t, mean=0.5, std=1.0, a=-0.5, b=1.0)
    assert -0.5 <= t.min().item() and t.max().item() <= 1.0 and t.min().item() < -0.49 and t.max().item() > 0.99
    e = init.eye_(graft.empty(2, 3))
    assert e.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]


def test_init_is_seeded():
    graft.manual_seed(7)
    a = init.normal_(graft.empty(5)).tolist()
    graft.manual_seed(7)
    assert init.normal_(graft.empty(5)).tolist() == a


def test_init_gains_fans_and_errors():
    assert init.calculate_gain("tanh") == approx(5.0 / 3)
    assert init.calculate_gain("relu") == approx(math.sqrt(2.0))
    assert init.calculate_gain("leaky_relu") == approx(math.sqrt(2.0 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == approx(math.sqrt(2.0 / 1.04))
    assert init.calculate_gain("selu") == 0.75 and init.calculate_gain("conv2d") == 1.0
    assert init._calculate_fan_in_and_fan_out(graft.empty(5, 2, 3, 3)) == (18, 45)
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed for tensor with fewer than 2 "
                                         "dimensions"):
        init._calculate_fan_in_and_fan_out(graft.empty(3))
    with pytest.raises(ValueError, match="Unsupported nonlinearity foo"):
        init.calculate_gain("foo")
    with pytest.raises(ValueError, match="negative_slope x not a valid number"):
        init.calculate_gain("leaky_relu", "x")
    with pytest.raises(ValueError, match=re.escape("Mode fan_x not supported, please use one of ['fan_in', "
                                                   "'fan_out']")):
        init.kaiming_uniform_(graft.empty(3, 3), mode="fan_x")
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(graft.empty(2, 2, 2))
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(graft.empty(0, 3))


# ---------------------------------------------------------------- clip_grad

def params_with_grads(*grads):
    ps = []
    for g in grads:
        p = nn.Parameter(graft.zeros(len(g)))
        p.grad = graft.tensor(g)
        ps.append(p)
    return ps


def test_clip_grad_norm_values():
    ps = params_with_grads([3.0, 4.0], [12.0])
    total = nn.utils.clip_grad_norm_(ps, max_norm=6.5)
    assert total.dim() == 0 and total.item() == approx(13.0)
    coef = 6.5 / (13.0 + 1e-6)
    assert ps[0].grad.tolist() == approx([3.0 * coef, 4.0 * coef]) and ps[1].grad.tolist() == approx([12.0 * coef])
    ps = params_with_grads([3.0, -4.0], [1.0])
    assert nn.utils.clip_grad_norm_(iter(ps), 10.0, norm_type=float("inf")).item() == 4.0
    assert ps[0].grad.tolist() == [3.0, -4.0]  # below max_norm: unchanged
    ps = params_with_grads([3.0, -4.0])
    assert nn.utils.clip_grad_norm_(ps[0], 1.0, norm_type=1).item() == 7.0
    assert ps[0].grad.tolist() == approx([3.0 / 7, -4.0 / 7], rel=1e-5)
    no_grad = nn.Parameter(graft.zeros(2))
    assert nn.utils.clip_grad_norm_([no_grad], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite():
    ps = params_with_grads([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To "
            "disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`")):
        nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert ps[0].grad.tolist() == [float("inf"), 1.0]  # unchanged


def test_clip_grad_value():
    ps = params_with_grads([3.0, -4.0, 0.5])
    assert nn.utils.clip_grad_value_(ps, 1.0) is None
    assert ps[0].grad.tolist() == [1.0, -1.0, 0.5]

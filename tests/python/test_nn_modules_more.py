"""The lazy modules (LazyLinear, LazyConv1d/2d, LazyConvTranspose2d, LazyBatchNorm1d/2d,
LazyInstanceNorm1d/2d/3d) with UninitializedParameter / UninitializedBuffer, max unpooling
(F.max_unpool1d/2d/3d, nn.MaxUnpool1d/2d/3d), TripletMarginWithDistanceLoss, NLLLoss2d,
AdaptiveLogSoftmaxWithLoss, SyncBatchNorm and Container against PyTorch: placeholders, state_dict,
materialization in place (an optimizer built before the first forward keeps training the same
Parameters), values, gradients, reprs and PyTorch's errors (2.x's where 1.13 differs)."""
import copy
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn as gnn  # noqa: E402
import graft.nn.functional as GF  # noqa: E402
from graft.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy  # noqa: E402
from nn_parity_utils import copy_state, rand, run_both, run_fn_both  # noqa: E402

tnn = torch.nn
TF = torch.nn.functional
REDUCTIONS = ["mean", "sum", "none"]
# PyTorch 1.13 warns at every lazy module's construction (2.x does not)
pytestmark = pytest.mark.filterwarnings("ignore:Lazy modules are a new feature:UserWarning")


def norm_text(text):
    """An error text with torch's names written as graft's."""
    return text.replace("torch.Size(", "graft.Size(").replace("'torch._C._TensorBase'", "'graft.Tensor'")


def raised(fn, exc=Exception):
    """The exception ``fn()`` raises (it must raise ``exc``)."""
    with pytest.raises(exc) as info:
        fn()
    return info.value


def same_error(t_fn, g_fn, exc=Exception):
    """Both calls raise the same exception type with the same text (torch's names as graft's)."""
    t_err, g_err = raised(t_fn, exc), raised(g_fn, exc)
    assert type(g_err).__name__ == type(t_err).__name__
    assert norm_text(str(g_err)) == norm_text(str(t_err))


def state_kinds(module):
    """(key, class name, repr of a placeholder) of a state_dict."""
    return [(k, type(v).__name__, repr(v) if is_lazy(v) or isinstance(v, tnn.parameter.UninitializedTensorMixin)
             else None) for k, v in module.state_dict().items()]


# ---- UninitializedParameter / UninitializedBuffer and the lazy modules ----

def test_lazy_linear_placeholders():
    t, g = tnn.LazyLinear(3), gnn.LazyLinear(3)
    assert repr(g) == repr(t) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert g.has_uninitialized_params() and t.has_uninitialized_params()
    assert state_kinds(g) == state_kinds(t)
    assert isinstance(g.weight, gnn.Parameter) and isinstance(g.weight, gnn.UninitializedParameter)
    assert repr(g.weight) == "<UninitializedParameter>"
    assert tuple(g.weight.size()) == tuple(t.weight.size()) == (0,)
    assert (g.weight.dtype, g.weight.requires_grad, g.weight.grad) == (graft.float32, True, None)
    assert [n for n, _ in g.named_parameters()] == ["weight", "bias"]
    assert list(gnn.LazyLinear(3, bias=False).state_dict()) == ["weight"]


@pytest.mark.parametrize("use", ["sum", "detach", "numel", "dim", "requires_grad_"])
def test_uninitialized_param_methods_refused(use):
    t, g = tnn.LazyLinear(3).weight, gnn.LazyLinear(3).weight
    same_error(lambda: getattr(t, use)(), lambda: getattr(g, use)(), ValueError)


@pytest.mark.parametrize("use", [lambda w: w + 1, lambda w: 2 * w, lambda w: w[0], lambda w: -w, lambda w: w == 1])
def test_uninitialized_param_operators_refused(use):
    err = raised(lambda: use(gnn.LazyLinear(3).weight), ValueError)
    assert str(err).startswith("Attempted to use an uninitialized parameter in <method '__")
    assert str(err).endswith("objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                             "parameters before calling torch functions")


def test_uninitialized_shape_and_share_memory_errors():
    same_error(lambda: tnn.LazyLinear(3).weight.shape, lambda: gnn.LazyLinear(3).weight.shape, RuntimeError)
    same_error(lambda: tnn.UninitializedBuffer().share_memory_(), lambda: UninitializedBuffer().share_memory_(),
               RuntimeError)


def test_uninitialized_materialize_standalone():
    p = UninitializedParameter(requires_grad=False, dtype=graft.float64)
    assert p.__reduce_ex__(2) == (UninitializedParameter, (False,))
    q = copy.deepcopy(p)
    assert type(q) is UninitializedParameter and q is not p and q.dtype == graft.float64
    p.materialize((2, 3))
    assert type(p) is gnn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == graft.float64
    assert not p.requires_grad and not is_lazy(p)
    b = UninitializedBuffer()
    assert repr(b) == repr(tnn.UninitializedBuffer()) == "<UninitializedBuffer>" and not b.requires_grad
    b.materialize((4,), dtype=graft.float64)
    assert not is_lazy(b) and isinstance(b, graft.Tensor) and tuple(b.shape) == (4,) and b.dtype == graft.float64


def train_steps(t_m, g_m, t_opt, g_opt, x, y, steps=3):
    """A few MSE steps of both modules; the losses and parameters must agree after each."""
    for _ in range(steps):
        t_loss = ((t_m(torch.tensor(x)) - torch.tensor(y)) ** 2).mean()
        g_loss = ((g_m(graft.tensor(x)) - graft.tensor(y)) ** 2).mean()
        np.testing.assert_allclose(g_loss.detach().item(), t_loss.detach().item(), rtol=1e-10)
        t_opt.zero_grad()
        g_opt.zero_grad()
        t_loss.backward()
        g_loss.backward()
        t_opt.step()
        g_opt.step()
        for (name, tp), (g_name, gp) in zip(t_m.named_parameters(), g_m.named_parameters()):
            assert name == g_name
            np.testing.assert_allclose(gp.detach().numpy(), tp.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_lazy_linear_materializes_in_place_then_trains():
    t, g = tnn.LazyLinear(3).double(), gnn.LazyLinear(3).double()
    assert g.weight.dtype == graft.float64 and is_lazy(g.weight)
    t_opt = torch.optim.SGD(t.parameters(), lr=0.1, momentum=0.9)
    g_opt = graft.optim.SGD(g.parameters(), lr=0.1, momentum=0.9)
    weight, bias = g.weight, g.bias
    x, y = rand(5, 4), rand(5, 3, seed=1)
    g(graft.tensor(x))
    t(torch.tensor(x))
    assert type(g) is gnn.Linear and type(t) is tnn.Linear and repr(g) == repr(t)
    assert g.weight is weight and g.bias is bias and type(weight) is gnn.Parameter
    assert tuple(weight.shape) == (3, 4) and weight.dtype == graft.float64 and weight.requires_grad
    assert not g._forward_pre_hooks and not hasattr(g, "_initialize_hook") and not hasattr(t, "_initialize_hook")
    w = weight.detach().numpy()
    assert np.abs(w).max() <= 0.5 and np.abs(w).min() > 0  # reset_parameters ran: U(+-1/sqrt(4))
    copy_state(t, g)
    train_steps(t, g, t_opt, g_opt, x, y)


@pytest.mark.parametrize("name, kwargs, shape", [
    ("LazyConv1d", {"out_channels": 4, "kernel_size": 3}, (2, 3, 7)),
    ("LazyConv1d", {"out_channels": 4, "kernel_size": 2, "groups": 2, "bias": False}, (6, 5)),
    ("LazyConv2d", {"out_channels": 4, "kernel_size": (2, 3), "stride": 2, "padding": 1}, (2, 3, 6, 5)),
    ("LazyConv2d", {"out_channels": 2, "kernel_size": 3}, (3, 5, 5)),
    ("LazyConvTranspose2d", {"out_channels": 4, "kernel_size": 3, "stride": 2, "groups": 2}, (2, 4, 3, 3)),
])
def test_lazy_conv(name, kwargs, shape):
    t, g = getattr(tnn, name)(**kwargs), getattr(gnn, name)(**kwargs)
    assert repr(g) == repr(t) and state_kinds(g) == state_kinds(t)
    x = rand(*shape)
    t(torch.tensor(x, dtype=torch.float32))
    g(graft.tensor(x, dtype=graft.float32))
    assert type(g).__name__ == type(t).__name__ == name[4:]
    assert repr(g) == repr(t) and g.in_channels == t.in_channels
    for (n, tp), (gn, gp) in zip(t.named_parameters(), g.named_parameters()):
        assert n == gn and tuple(gp.shape) == tuple(tp.shape) and type(gp) is gnn.Parameter
    run_both(torch, t, g, [x], rtol=1e-9)


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.LazyConv2d(4, 3), (2, 2, 3, 3, 3)),
    (lambda nn: nn.LazyConv1d(4, 3), (3,)),
    (lambda nn: nn.LazyConv1d(4, 2, groups=2), (1, 3, 5)),
])
def test_lazy_conv_errors(make, shape):
    x = rand(*shape)
    same_error(lambda: make(tnn)(torch.tensor(x, dtype=torch.float32)),
               lambda: make(gnn)(graft.tensor(x, dtype=graft.float32)))


@pytest.mark.parametrize("name, shape", [
    ("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm1d", (4, 3, 5)), ("LazyBatchNorm2d", (4, 3, 2, 2)),
    ("LazyInstanceNorm1d", (2, 3, 5)), ("LazyInstanceNorm2d", (2, 3, 4, 4)), ("LazyInstanceNorm3d", (2, 3, 2, 2, 3)),
])
def test_lazy_norms(name, shape):
    t, g = getattr(tnn, name)().double(), getattr(gnn, name)().double()
    assert repr(g) == repr(t) and state_kinds(g) == state_kinds(t)
    assert is_lazy(g.running_mean) and g.running_mean.dtype == graft.float64
    x = rand(*shape)
    t_out, g_out = t(torch.tensor(x)), g(graft.tensor(x))
    np.testing.assert_allclose(g_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert type(g).__name__ == type(t).__name__ == name[4:] and repr(g) == repr(t)
    assert type(g.running_mean) is graft.Tensor and g.running_mean.dtype == graft.float64
    assert type(g.weight) is gnn.Parameter and g.num_features == shape[1]
    for key, tv in t.state_dict().items():
        np.testing.assert_allclose(g.state_dict()[key].numpy(), tv.numpy(), rtol=1e-9, err_msg=key)
    run_both(torch, t, g, [rand(*shape, seed=2)], train=True, rtol=1e-9, atol=1e-11)


def test_lazy_norm_without_affine_or_stats():
    t, g = tnn.LazyBatchNorm1d(affine=False, track_running_stats=False), gnn.LazyBatchNorm1d(affine=False,
                                                                                           track_running_stats=False)
    assert repr(g) == repr(t) and not g.has_uninitialized_params() and list(g.state_dict()) == []
    x = rand(5, 3)
    np.testing.assert_allclose(g(graft.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-9)
    assert type(g) is gnn.BatchNorm1d and g.num_features == t.num_features == 0  # nothing was lazy


def test_lazy_load_state_dict():
    full = gnn.Linear(4, 3)
    lazy = gnn.LazyLinear(3)
    assert repr(lazy.load_state_dict(full.state_dict())) == "<All keys matched successfully>"
    assert type(lazy) is gnn.LazyLinear and not lazy.has_uninitialized_params()  # lazy until its forward
    assert tuple(lazy.weight.shape) == (3, 4) and type(lazy.weight) is gnn.Parameter
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), full.weight.detach().numpy())
    x = graft.tensor(rand(2, 4), dtype=graft.float32)
    np.testing.assert_array_equal(lazy(x).detach().numpy(), full(x).detach().numpy())  # the loaded values stay
    assert type(lazy) is gnn.Linear
    other = gnn.LazyLinear(3)
    other.load_state_dict(gnn.LazyLinear(3).state_dict())  # placeholders into placeholders
    assert other.has_uninitialized_params()
    same_error(lambda: tnn.Linear(4, 3).load_state_dict(tnn.LazyLinear(3).state_dict()),
               lambda: gnn.Linear(4, 3).load_state_dict(gnn.LazyLinear(3).state_dict()), RuntimeError)
    same_error(lambda: tnn.LazyLinear(3).load_state_dict({}), lambda: gnn.LazyLinear(3).load_state_dict({}),
               RuntimeError)


def test_lazy_batchnorm_load_state_dict():
    full = gnn.BatchNorm2d(3)
    full(graft.tensor(rand(4, 3, 2, 2), dtype=graft.float32))
    lazy = gnn.LazyBatchNorm2d()
    lazy.load_state_dict(full.state_dict())
    assert type(lazy.running_mean) is graft.Tensor and not lazy.has_uninitialized_params()
    for key, value in full.state_dict().items():
        np.testing.assert_array_equal(lazy.state_dict()[key].numpy(), value.numpy(), err_msg=key)


def incomplete_lazy(nn):
    """A lazy module whose initialize_parameters leaves its placeholder as it is."""
    class Incomplete(nn.modules.lazy.LazyModuleMixin, nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.UninitializedParameter()

        def initialize_parameters(self, x):
            pass
    return Incomplete()


def test_lazy_mixin_errors():
    same_error(lambda: incomplete_lazy(tnn)(torch.ones(1)), lambda: incomplete_lazy(gnn)(graft.ones(1)), RuntimeError)
    same_error(lambda: tnn.modules.lazy.LazyModuleMixin.initialize_parameters(tnn.LazyLinear(2)),
               lambda: gnn.modules.lazy.LazyModuleMixin.initialize_parameters(gnn.LazyLinear(2)),
               NotImplementedError)
    original = gnn.LazyLinear(3)
    clone = copy.deepcopy(original)
    assert clone.has_uninitialized_params() and clone.weight is not original.weight
    for _ in range(2):
        assert clone(graft.ones(2, 5)).shape == (2, 3) and type(clone) is gnn.Linear and not clone._forward_pre_hooks
    assert type(original) is gnn.LazyLinear and original.has_uninitialized_params() and original._forward_pre_hooks
    assert original(graft.ones(2, 4)).shape == (2, 3) and tuple(original.weight.shape) == (3, 4)


# ---- max unpooling ----

def pooled(fn, x, *args):
    """torch's pooled values and indices of ``x`` as NumPy arrays."""
    values, indices = fn(torch.tensor(x), *args, return_indices=True)
    return values.numpy(), indices.numpy()


@pytest.mark.parametrize("shape, kernel, stride, padding, output_size", [
    ((2, 3, 6, 6), 2, None, 0, None),
    ((2, 3, 7, 6), (3, 2), (2, 1), (1, 0), (7, 6)),
    ((2, 3, 7, 6), (3, 2), (2, 1), (1, 0), (2, 3, 7, 6)),
    ((3, 5, 5), 3, 1, 1, None),  # overlapping windows: repeated indices
])
def test_max_unpool2d(shape, kernel, stride, padding, output_size):
    o, i = pooled(TF.max_pool2d, rand(*shape), kernel, stride, padding)
    run_fn_both(torch, lambda a, b: TF.max_unpool2d(a, b, kernel, stride, padding, output_size),
                lambda a, b: GF.max_unpool2d(a, b, kernel, stride, padding, output_size), [o, i], int_inputs=(1,))
    t_m, g_m = tnn.MaxUnpool2d(kernel, stride, padding), gnn.MaxUnpool2d(kernel, stride, padding)
    assert repr(g_m) == repr(t_m)
    run_both(torch, t_m, g_m, [o, i], kwargs={"output_size": output_size} if output_size else None)


@pytest.mark.parametrize("shape, kernel, stride, padding, output_size", [
    ((2, 3, 9), 2, None, 0, None),
    ((2, 3, 9), 2, None, 0, (2, 3, 9)),
    ((3, 8), 3, 2, 1, [8]),
])
def test_max_unpool1d(shape, kernel, stride, padding, output_size):
    o, i = pooled(TF.max_pool1d, rand(*shape), kernel, stride, padding)
    run_fn_both(torch, lambda a, b: TF.max_unpool1d(a, b, kernel, stride, padding, output_size),
                lambda a, b: GF.max_unpool1d(a, b, kernel, stride, padding, output_size), [o, i], int_inputs=(1,))
    t_m, g_m = tnn.MaxUnpool1d(kernel, stride, padding), gnn.MaxUnpool1d(kernel, stride, padding)
    assert repr(g_m) == repr(t_m)
    run_both(torch, t_m, g_m, [o, i], kwargs={"output_size": output_size} if output_size else None)


@pytest.mark.parametrize("shape, kernel, stride, padding", [
    ((2, 2, 4, 4, 5), 2, None, 0), ((2, 5, 4, 4), (2, 3, 2), (1, 2, 2), (1, 1, 0)),
])
def test_max_unpool3d(shape, kernel, stride, padding):
    o, i = pooled(TF.max_pool3d, rand(*shape), kernel, stride, padding)
    size = shape[-3:]
    run_fn_both(torch, lambda a, b: TF.max_unpool3d(a, b, kernel, stride, padding, size),
                lambda a, b: GF.max_unpool3d(a, b, kernel, stride, padding, size), [o, i], int_inputs=(1,))
    t_m, g_m = tnn.MaxUnpool3d(kernel, stride, padding), gnn.MaxUnpool3d(kernel, stride, padding)
    assert repr(g_m) == repr(t_m)
    run_both(torch, t_m, g_m, [o, i], kwargs={"output_size": size})


def test_max_pool_then_unpool_modules():
    x = rand(2, 3, 6, 5)
    t_pool, g_pool = tnn.MaxPool2d(2, return_indices=True), gnn.MaxPool2d(2, return_indices=True)
    t_out = tnn.MaxUnpool2d(2)(*t_pool(torch.tensor(x)), output_size=(6, 5))
    g_out = gnn.MaxUnpool2d(2)(*g_pool(graft.tensor(x)), output_size=(6, 5))
    np.testing.assert_array_equal(g_out.numpy(), t_out.numpy())


UNPOOL_ERRORS = [  # (call(F, values, indices), the error when PyTorch 1.13's text differs from 2.x's)
    (lambda F, o, i: F.max_unpool2d(o, i, 2, output_size=(6, 5)), None),
    (lambda F, o, i: F.max_unpool2d(o, i, 2, output_size=(5,)), None),
    (lambda F, o, i: F.max_unpool2d(o, i.int(), 2), None),
    (lambda F, o, i: F.max_unpool2d(o, i[:, :2], 2), None),
    (lambda F, o, i: F.max_unpool2d(o[0, 0], i[0, 0], 2), None),
    (lambda F, o, i: F.max_unpool1d(o[0, 0, 0], i[0, 0, 0], 2), None),
    (lambda F, o, i: F.max_unpool3d(o[0], i[0], 2), None),
    (lambda F, o, i: F.max_unpool2d(o.int(), i, 2),
     (NotImplementedError, "\"max_unpool2d\" not implemented for 'Int'")),
    (lambda F, o, i: F.max_unpool2d(o, i + 100, 2),  # the first bad index (PyTorch's is any of them)
     (RuntimeError, "Found an invalid max index: 105 (output volumes are of size 4x4)")),
    (lambda F, o, i: F.max_unpool2d(o, i - 6, 2),
     (RuntimeError, "Found an invalid max index: -1 (output volumes are of size 4x4)")),
    (lambda F, o, i: F.max_unpool2d(o[:, :0], i[:, :0], 2),
     (RuntimeError, "max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                    "dimensions, but input has sizes [2, 0, 2, 2] with dimension 1 being empty")),
    (lambda F, o, i: F.max_unpool2d(o, i, 2, padding=3),
     (ValueError, "max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                  "output_size[0]=-2")),
    (lambda F, o, i: F.max_unpool3d(o.unsqueeze(2), i.unsqueeze(2), 2, stride=0), None),
]


@pytest.mark.parametrize("call, expected", UNPOOL_ERRORS)
def test_max_unpool_errors(call, expected):
    x = np.arange(2 * 3 * 4 * 4, dtype=np.float64).reshape(2, 3, 4, 4)  # maxima at index 5, 7, 13, 15 of each plane
    t_o, t_i = TF.max_pool2d(torch.tensor(x), 2, return_indices=True)
    g_o, g_i = graft.tensor(t_o.numpy()), graft.tensor(t_i.numpy())
    if expected is None:
        same_error(lambda: call(TF, t_o, t_i), lambda: call(GF, g_o, g_i))
        return
    err = raised(lambda: call(GF, g_o, g_i), expected[0])
    assert str(err) == expected[1]
    raised(lambda: call(TF, t_o, t_i))  # 1.13 raises too, with another text


# ---- losses ----

def cosine_distance(F):
    return lambda a, b: 1.0 - F.cosine_similarity(a, b)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("distance", [None, "cosine", "module"])
def test_triplet_margin_with_distance_loss(reduction, swap, distance):
    def make(nn, F):
        d = {None: None, "cosine": cosine_distance(F), "module": nn.PairwiseDistance(p=1.0)}[distance]
        return nn.TripletMarginWithDistanceLoss(distance_function=d, margin=0.7, swap=swap, reduction=reduction), d
    (t_loss, t_d), (g_loss, g_d) = make(tnn, TF), make(gnn, GF)
    inputs = [rand(5, 4), rand(5, 4, seed=1), rand(5, 4, seed=2)]
    run_both(torch, t_loss, g_loss, inputs)
    run_fn_both(torch, lambda a, p, n: TF.triplet_margin_with_distance_loss(
                    a, p, n, distance_function=t_d, margin=1.3, swap=swap, reduction=reduction),
                lambda a, p, n: GF.triplet_margin_with_distance_loss(
                    a, p, n, distance_function=g_d, margin=1.3, swap=swap, reduction=reduction), inputs)


def test_triplet_margin_with_distance_loss_repr_and_errors():
    assert repr(gnn.TripletMarginWithDistanceLoss()) == repr(tnn.TripletMarginWithDistanceLoss())
    assert repr(gnn.TripletMarginWithDistanceLoss(distance_function=cosine_distance(GF))) == \
        repr(tnn.TripletMarginWithDistanceLoss(distance_function=cosine_distance(TF)))
    x = rand(3, 4)
    t, g = torch.tensor(x), graft.tensor(x)
    same_error(lambda: TF.triplet_margin_with_distance_loss(t, t, t, 2.0),
               lambda: GF.triplet_margin_with_distance_loss(g, g, g, 2.0), TypeError)
    # PyTorch 2.x's checks (1.13 had none of them)
    assert str(raised(lambda: GF.triplet_margin_with_distance_loss(g, g, g[0]), RuntimeError)) == \
        "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: " \
        "anchor 2D, positive 2D, and negative 1D inputs"
    assert str(raised(lambda: GF.triplet_margin_with_distance_loss(g, g, g, margin=0), ValueError)) == \
        "margin must be greater than 0, got 0"
    assert str(raised(lambda: GF.triplet_margin_with_distance_loss(g, g, g, reduction="avg"), ValueError)) == \
        "avg is not a valid value for reduction"
    assert str(raised(lambda: gnn.TripletMarginWithDistanceLoss(margin=-1.0), ValueError)) == \
        "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1.0 instead"


def test_nll_loss2d():
    with pytest.warns(FutureWarning, match=re.escape("`NLLLoss2d` has been deprecated. Please use `NLLLoss`")):
        g = gnn.NLLLoss2d(ignore_index=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tnn.NLLLoss2d(ignore_index=1)
    assert isinstance(g, gnn.NLLLoss) and repr(g) == repr(t) == "NLLLoss2d()"
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 3))).transpose(0, 3, 1, 2).copy()
    target = np.random.default_rng(1).integers(0, 4, size=(2, 3, 3))
    run_both(torch, t, g, [x, target])


# ---- AdaptiveLogSoftmaxWithLoss ----

def adaptive_pair(head_bias=True, **kwargs):
    args = dict(in_features=8, n_classes=10, cutoffs=[3, 6], div_value=2.0, head_bias=head_bias, **kwargs)
    t, g = tnn.AdaptiveLogSoftmaxWithLoss(**args).double(), gnn.AdaptiveLogSoftmaxWithLoss(**args).double()
    copy_state(t, g)
    return t, g


@pytest.mark.parametrize("target", [[0, 4, 9, 2, 7, 5], [1, 0, 2, 2], [8, 9, 6]])
def test_adaptive_log_softmax_forward(target):
    t, g = adaptive_pair()
    assert repr(g) == repr(t)
    assert [k for k in g.state_dict()] == [k for k in t.state_dict()]
    x = rand(len(target), 8)
    t_out, g_out = run_both(torch, t, g, [x, np.array(target)], train=True, rtol=1e-9, atol=1e-12)
    g_res = g(graft.tensor(x), graft.tensor(target))
    assert type(g_res).__name__ == "_ASMoutput" and g_res._fields == ("output", "loss")
    assert tuple(g_res.output.shape) == (len(target),) and g_res.loss.dim() == 0


def test_adaptive_log_softmax_unbatched_and_log_prob():
    t, g = adaptive_pair(head_bias=False)
    x = rand(8)
    for target in (1, 7):
        t_res, g_res = t(torch.tensor(x), torch.tensor(target)), g(graft.tensor(x), graft.tensor(target))
        assert g_res.output.dim() == 0
        np.testing.assert_allclose(g_res.output.detach().item(), t_res.output.detach().item(), rtol=1e-10)
        np.testing.assert_allclose(g_res.loss.detach().item(), t_res.loss.detach().item(), rtol=1e-10)
    run_fn_both(torch, t.log_prob, g.log_prob, [rand(5, 8)], rtol=1e-9, atol=1e-12)
    probs = np.exp(g.log_prob(graft.tensor(rand(5, 8))).detach().numpy())
    np.testing.assert_allclose(probs.sum(1), 1.0, rtol=1e-10)


@pytest.mark.parametrize("cluster_bias", [-5.0, 5.0, None])
def test_adaptive_log_softmax_predict(cluster_bias):
    t, g = adaptive_pair()
    with torch.no_grad():
        if cluster_bias is None:  # rows with x[:, 0] > 0 pick the first cluster, the others class 0
            t.head.weight.zero_()
            t.head.bias.zero_()
            t.head.weight[3, 0] = 10.0
        else:
            t.head.bias[3:] = cluster_bias
    copy_state(t, g)
    x = rand(7, 8, seed=4)
    t_pred, g_pred = t.predict(torch.tensor(x)), g.predict(graft.tensor(x))
    np.testing.assert_array_equal(g_pred.numpy(), t_pred.numpy())
    np.testing.assert_array_equal(g_pred.numpy(), g.log_prob(graft.tensor(x)).argmax(1).numpy())
    if cluster_bias is None:
        assert 0 < (g_pred.numpy() >= 3).sum() < 7


def test_adaptive_log_softmax_errors():
    assert str(raised(lambda: gnn.AdaptiveLogSoftmaxWithLoss(8, 10, []), ValueError)) == \
        "cutoffs should be a sequence of length larger than 0"  # PyTorch 2.x's check (1.13 failed in min())
    for cutoffs in ([3, 3], [6, 3], [0, 3], [3, 10], [2.5]):
        same_error(lambda: tnn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs),
                   lambda: gnn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs), ValueError)
    t, g = adaptive_pair()
    x = rand(3, 8)
    same_error(lambda: t(torch.tensor(x), torch.tensor([0, 12, 3])),
               lambda: g(graft.tensor(x), graft.tensor([0, 12, 3])), RuntimeError)
    same_error(lambda: t(torch.tensor(x), torch.tensor([0, 1])), lambda: g(graft.tensor(x), graft.tensor([0, 1])),
               RuntimeError)
    same_error(lambda: t(torch.tensor(x), torch.zeros(3, 1, dtype=torch.long)),
               lambda: g(graft.tensor(x), graft.zeros(3, 1, dtype=graft.int64)), RuntimeError)
    # PyTorch 2.x's texts (1.13 formatted a tuple)
    assert str(raised(lambda: g(graft.tensor(x), graft.tensor(1)), RuntimeError)) == \
        "0D target tensor expects 1D input tensors, but found inputs with size graft.Size([3, 8])"
    assert str(raised(lambda: g(graft.tensor(rand(3)), graft.tensor([1, 2, 0])), RuntimeError)) == \
        "1D target tensor expects 2D input tensors, but found inputs with size graft.Size([3])"


# ---- SyncBatchNorm and Container ----

@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("train", [True, False])
def test_sync_batchnorm_falls_back_to_batch_norm(shape, train):
    # PyTorch 2.x normalizes like BatchNorm without a process group (1.13 refused CPU input)
    t = (tnn.BatchNorm3d if len(shape) == 5 else tnn.BatchNorm1d)(3, momentum=None)
    g = gnn.SyncBatchNorm(3, momentum=None)
    for _ in range(2):
        run_both(torch, t, g, [rand(*shape)], train=train, rtol=1e-9, atol=1e-11)
    assert int(g.num_batches_tracked) == (2 if train else 0)
    assert repr(g) == repr(tnn.SyncBatchNorm(3, momentum=None))


def test_sync_batchnorm_errors():
    # PyTorch 2.x's order (1.13 first refused any CPU input)
    g = gnn.SyncBatchNorm(3)
    assert str(raised(lambda: g(graft.ones(3)), ValueError)) == "expected at least 2D input (got 1D input)"
    assert str(raised(lambda: g(graft.ones(2, 0)), ValueError)) == \
        "SyncBatchNorm number of input channels should be non-zero"


def test_convert_sync_batchnorm():
    def model(nn):
        return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Sequential(nn.BatchNorm2d(2, affine=False)))
    t_model, g_model = model(tnn), model(gnn)
    g_model[1].eval()
    bn = g_model[1]
    weight, running_mean = bn.weight, bn.running_mean
    t_conv = tnn.SyncBatchNorm.convert_sync_batchnorm(t_model)
    g_conv = gnn.SyncBatchNorm.convert_sync_batchnorm(g_model, process_group="group")
    assert repr(g_conv) == repr(t_conv)
    assert list(g_conv.state_dict()) == list(t_conv.state_dict())
    assert type(g_conv[1]) is gnn.SyncBatchNorm and type(g_conv[2][0]) is gnn.SyncBatchNorm
    assert g_conv[1].weight is weight and g_conv[1].running_mean is running_mean and not g_conv[1].training
    assert g_conv[1].process_group == "group" and g_conv[2][0].weight is None
    single = gnn.SyncBatchNorm.convert_sync_batchnorm(gnn.BatchNorm2d(5))
    assert type(single) is gnn.SyncBatchNorm and single.num_features == 5


def test_container():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        g = gnn.Container(a=gnn.Linear(2, 3), b=gnn.ReLU())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = tnn.Container(a=tnn.Linear(2, 3), b=tnn.ReLU())
    assert repr(g) == repr(t) and [n for n, _ in g.named_children()] == ["a", "b"]
    assert list(g.state_dict()) == list(t.state_dict())

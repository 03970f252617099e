"""Hardtanh, ReLU6, PReLU, CELU, GLU, Softsign, Tanhshrink, Softmin, Softmax2d, RReLU,
CosineSimilarity, PairwiseDistance and their functionals against PyTorch: values and gradients
(boundary points and non-finite values included), in-place forms, reprs, PReLU's parameter and
initialisation, RReLU's random slopes, and PyTorch's errors (2.x's where 1.13 differs)."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn as gnn  # noqa: E402
import graft.nn.functional as GF  # noqa: E402
from nn_parity_utils import rand, run_both, run_fn_both  # noqa: E402

tnn = torch.nn
TF = torch.nn.functional

EDGES = np.array([-7.0, -6.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, np.inf, -np.inf, np.nan])


def values(seed=0, nan=True):
    """Random values with the activations' boundary points and non-finite values mixed in."""
    x = rand(4, 13, seed=seed)
    x[0] = EDGES if nan else np.nan_to_num(EDGES, nan=2.0)
    return x


# ATen's hardtanh backward passes the gradient of a NaN in its scalar loop and drops it in its
# vectorised one (a size-dependent result); graft passes it, as the scalar loop: the large
# comparisons below leave NaN out and test_hardtanh_nan_gradient checks a small tensor
NAN_GRAD_DIFFERS = ("hardtanh", "relu6")


@pytest.mark.parametrize("name, kw", [
    ("hardtanh", {}), ("hardtanh", dict(min_val=-0.5, max_val=3.0)), ("relu6", {}), ("celu", {}),
    ("celu", dict(alpha=0.5)), ("softsign", {}), ("tanhshrink", {}), ("softmin", dict(dim=1)),
    ("rrelu", {}), ("glu", {}), ("glu", dict(dim=0)),
])
def test_functional_values_and_grads(name, kw):
    x = values(nan=name not in NAN_GRAD_DIFFERS) if name != "glu" else rand(4, 6)
    run_fn_both(torch, lambda t: getattr(TF, name)(t, **kw), lambda g: getattr(GF, name)(g, **kw), [x])


@pytest.mark.parametrize("name", ["hardtanh", "relu6", "celu", "rrelu"])
def test_inplace_functionals(name):
    x = values()
    t, g = torch.tensor(x), graft.tensor(x)
    getattr(TF, name)(t, inplace=True)
    assert getattr(GF, name)(g, inplace=True) is g
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12, equal_nan=True)
    # through a non-leaf the gradient is the op's
    run_fn_both(torch, lambda t: getattr(TF, name)(t * 1.0, inplace=True),
                lambda g: getattr(GF, name)(g * 1.0, inplace=True), [values(1, nan=name not in NAN_GRAD_DIFFERS)])


def test_hardtanh_nan_gradient():
    for name in NAN_GRAD_DIFFERS:
        run_fn_both(torch, getattr(TF, name), getattr(GF, name), [np.array([np.nan, 0.5, 1.0])])


def test_integer_inputs():
    x = np.array([-9, -1, 0, 2, 5, 7])
    for name, kw in [("hardtanh", dict(min_val=-1.5, max_val=1.5)), ("relu6", {})]:
        t, g = getattr(TF, name)(torch.tensor(x), **kw), getattr(GF, name)(graft.tensor(x), **kw)
        assert g.dtype == graft.int64
        np.testing.assert_array_equal(g.numpy(), t.numpy())
    for name, msg in [("celu", '"elu_cpu" not implemented for \'Long\''),
                      ("glu", '"glu_cpu" not implemented for \'Long\''),
                      ("rrelu", '"leaky_relu_cpu" not implemented for \'Long\'')]:
        with pytest.raises(RuntimeError, match=msg):
            getattr(GF, name)(graft.tensor(x))
    with pytest.raises(RuntimeError, match="^Bool inputs not supported for hardtanh$"):
        GF.relu6(graft.tensor([True]))


def test_prelu():
    for shape, w in [((2, 3, 4), rand(3, seed=1)), ((2, 3), rand(3, seed=1)), ((5,), rand(1, seed=1)),
                     ((2, 3, 2, 2), rand(1, seed=1)), ((), np.array(0.3))]:
        x = rand(*shape) if shape else np.array(-1.5)
        if len(shape) >= 2:
            x.reshape(-1)[:3] = [np.inf, -np.inf, 0.0]
        run_fn_both(torch, TF.prelu, GF.prelu, [x, w])
    t, g = tnn.PReLU(3), gnn.PReLU(3)
    np.testing.assert_array_equal(g.weight.detach().numpy(), t.weight.detach().numpy())
    assert repr(g) == repr(t) == "PReLU(num_parameters=3)" and g.init == 0.25
    assert list(g.state_dict()) == ["weight"]
    run_both(torch, tnn.PReLU(3, init=0.1), gnn.PReLU(3, init=0.1), [rand(2, 3, 5)])
    assert gnn.PReLU(init=0.1).weight.detach().item() == pytest.approx(0.1)


def test_prelu_errors():
    x = graft.randn(2, 3)
    with pytest.raises(RuntimeError, match="^Mismatch of parameter numbers and input channel size. Found parameter "
                                           "numbers = 2 and channel size = 3.$"):
        GF.prelu(x, graft.ones(2))
    with pytest.raises(RuntimeError, match="^Not allow zero-dim input tensor.$"):
        GF.prelu(graft.tensor(1.0), graft.ones(2))
    with pytest.raises(RuntimeError, match="^prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2$"):
        GF.prelu(graft.randn(2, 3, 4), graft.ones(1, 3))
    with pytest.raises(RuntimeError, match="^prelu: Type promoting not supported. Got Double and Float$"):
        GF.prelu(x.double(), graft.ones(1))
    with pytest.raises(TypeError, match=r"^prelu\(\): argument 'weight' \(position 2\) must be Tensor, not float$"):
        GF.prelu(x, 0.25)


def test_glu_errors():
    with pytest.raises(RuntimeError, match="^glu does not support scalars because halving size must be even$"):
        GF.glu(graft.tensor(1.0))
    with pytest.raises(RuntimeError, match="^Halving dimension must be even, but dimension 1 is size 3$"):
        GF.glu(graft.randn(2, 3))
    with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range of \[-2, 1\], but got "
                                         r"2\)$"):
        GF.glu(graft.randn(2, 4), 2)
    with pytest.raises(TypeError, match=r"^glu\(\): argument 'dim' \(position 2\) must be int, not bool$"):
        GF.glu(graft.randn(2, 4), True)
    assert tuple(GF.glu(graft.randn(2, 0)).shape) == (2, 0)


def test_argument_parsing():
    x = graft.randn(3)
    with pytest.raises(TypeError, match=r"^hardtanh\(\): argument 'input' \(position 1\) must be Tensor, not list$"):
        GF.hardtanh([1.0], -1.0, 1.0)
    with pytest.raises(TypeError, match=r"^celu\(\): argument 'alpha' \(position 2\) must be Number, not Tensor$"):
        GF.celu(x, graft.tensor([1.0]))
    with pytest.raises(RuntimeError, match="^Overflow when unpacking long$"):
        GF.celu(x, 2 ** 63)
    with pytest.raises(TypeError, match=r"^rrelu\(\): argument 'upper' \(position 3\) must be Number, not Tensor$"):
        GF.rrelu(x, 2 ** 63, graft.randn(2))  # the types are checked before any overflow
    np.testing.assert_allclose(GF.celu(x, graft.tensor(0.5)).numpy(), GF.celu(x, 0.5).numpy())
    with pytest.raises(RuntimeError, match="^ZeroDivisionError: alpha cannot be 0 for CELU$"):
        GF.celu(x, 0)
    with pytest.raises(RuntimeError, match="^Lower bound should be less than or equal to the upper bound$"):
        GF.rrelu(x, 0.5, 0.25)


def test_hardtanh_bounds_follow_pytorch_2():
    # 2.x refuses min_val > max_val (1.13 returned max_val everywhere)
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        GF.hardtanh(graft.randn(3), 1.0, 0.5)
    with pytest.raises(AssertionError, match=r"^max_val \(1.0\) must be greater than min_val \(1.0\)$"):
        gnn.Hardtanh(1.0, 1.0)
    with pytest.warns(FutureWarning, match="^keyword argument `min_value` is deprecated and renamed to `min_val`$"):
        m = gnn.Hardtanh(min_value=-2.0)
    assert m.min_val == -2.0


def test_rrelu_training_draws_slopes_in_range():
    graft.manual_seed(0)
    x = graft.full((4000,), -2.0, requires_grad=True)
    out = GF.rrelu(x, 0.1, 0.3, training=True)
    slopes = out.detach().numpy() / -2.0
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.005
    assert len(np.unique(slopes)) > 1000
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-6)
    pos = graft.tensor([0.5, 2.0])
    np.testing.assert_array_equal(GF.rrelu(pos, training=True).numpy(), pos.numpy())
    m = gnn.RReLU(0.1, 0.3)
    np.testing.assert_allclose(m.eval()(graft.tensor([-2.0])).numpy(), [-0.4], rtol=1e-6)
    assert not np.allclose(m.train()(graft.full((50,), -1.0)).numpy(), -0.2)


def test_softmin_and_softmax2d():
    run_both(torch, tnn.Softmin(dim=1), gnn.Softmin(dim=1), [rand(3, 4)])
    run_both(torch, tnn.Softmax2d(), gnn.Softmax2d(), [rand(2, 3, 4, 5)])
    run_both(torch, tnn.Softmax2d(), gnn.Softmax2d(), [rand(3, 4, 5)])
    with pytest.raises(ValueError, match="^Softmax2d: expected input to be 3D or 4D, got 2D instead$"):
        gnn.Softmax2d()(graft.randn(3, 4))
    with pytest.warns(UserWarning, match="^Implicit dimension choice for softmin has been deprecated"):
        GF.softmin(graft.randn(2, 3))
    np.testing.assert_allclose(GF.softmin(graft.tensor([1.0, 2.0]), 0, dtype=graft.float64).numpy(),
                               TF.softmin(torch.tensor([1.0, 2.0]), 0, dtype=torch.float64).numpy())


@pytest.mark.parametrize("make", [
    lambda nn: nn.Hardtanh(), lambda nn: nn.Hardtanh(-2.0, 0.5, inplace=True), lambda nn: nn.ReLU6(),
    lambda nn: nn.ReLU6(inplace=True), lambda nn: nn.CELU(), lambda nn: nn.CELU(0.5, True), lambda nn: nn.GLU(),
    lambda nn: nn.GLU(0), lambda nn: nn.Softsign(), lambda nn: nn.Tanhshrink(), lambda nn: nn.Softmin(),
    lambda nn: nn.Softmin(1), lambda nn: nn.Softmax2d(), lambda nn: nn.RReLU(), lambda nn: nn.RReLU(0.1, 0.2, True),
    lambda nn: nn.CosineSimilarity(), lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True), lambda nn: nn.PReLU(),
])
def test_reprs(make):
    assert repr(make(gnn)) == repr(make(tnn))


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.Hardtanh(-0.5, 3.0), (4, 13)), (lambda nn: nn.ReLU6(), (4, 13)), (lambda nn: nn.CELU(0.7), (4, 13)),
    (lambda nn: nn.GLU(), (3, 6)), (lambda nn: nn.Softsign(), (4, 13)), (lambda nn: nn.Tanhshrink(), (4, 13)),
    (lambda nn: nn.RReLU(), (4, 13)),
])
def test_modules(make, shape):
    nan = not isinstance(make(tnn), tnn.Hardtanh)
    run_both(torch, make(tnn), make(gnn), [values(nan=nan) if shape == (4, 13) else rand(*shape)])


def torch2_cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """PyTorch 2.x's ATen formula, written in torch (1.13 computes another)."""
    x1, x2 = torch.broadcast_tensors(x1, x2)
    n1 = torch.linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    n2 = torch.linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with torch.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def test_cosine_similarity():
    x1, x2 = rand(4, 5), rand(4, 5, seed=1)
    for kw in [{}, dict(dim=0), dict(dim=-1, eps=1e-3)]:
        run_fn_both(torch, lambda a, b: TF.cosine_similarity(a, b, **kw), lambda a, b: GF.cosine_similarity(a, b, **kw),
                    [x1, x2])
    x1[0] = 0.0
    x2[1, :] = 1e-9
    for kw in [{}, dict(dim=0), dict(dim=-1, eps=1e-3)]:
        run_fn_both(torch, lambda a, b: torch2_cosine_similarity(a, b, **kw),
                    lambda a, b: GF.cosine_similarity(a, b, **kw), [x1, x2])
    run_fn_both(torch, lambda a, b: TF.cosine_similarity(a, b, dim=-1),
                lambda a, b: GF.cosine_similarity(a, b, dim=-1), [rand(2, 3), rand(4, 1, 3, seed=1)])
    run_both(torch, tnn.CosineSimilarity(dim=0), gnn.CosineSimilarity(dim=0), [x1, x2])
    with pytest.raises(RuntimeError, match="^expected common dtype to be floating point, yet common dtype is Long$"):
        GF.cosine_similarity(graft.tensor([1, 2]), graft.tensor([1, 0]), dim=0)
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        GF.cosine_similarity(graft.randn(2, 3), graft.randn(2, 4))


def test_cosine_similarity_divides_by_each_norm_first():
    # PyTorch 2.x: x1 / max(|x1|, eps) . x2 / max(|x2|, eps) (1.13: x1.x2 / max(|x1||x2|, eps)),
    # so a tiny vector against itself with a large eps gives |x|^2 / eps^2
    x = graft.tensor([[1e-5, 0.0]], dtype=graft.float64)
    assert GF.cosine_similarity(x, x, eps=1e-3).item() == pytest.approx(1e-4, rel=1e-9)


def test_pairwise_distance():
    x1, x2 = rand(4, 5), rand(4, 5, seed=1)
    for kw in [{}, dict(p=1.0), dict(p=3.0, keepdim=True), dict(p=math.inf), dict(p=0.5, eps=0.1)]:
        run_fn_both(torch, lambda a, b: TF.pairwise_distance(a, b, **kw),
                    lambda a, b: GF.pairwise_distance(a, b, **kw), [x1, x2])
    for s1, s2 in [((5,), (5,)), ((4, 5), (5,)), ((), ())]:
        run_fn_both(torch, TF.pairwise_distance, GF.pairwise_distance, [rand(*s1), rand(*s2, seed=1)])
    run_both(torch, tnn.PairwiseDistance(p=1.5), gnn.PairwiseDistance(p=1.5), [x1, x2])
    assert gnn.PairwiseDistance(p=3.0).norm == 3.0
    with pytest.raises(TypeError, match="must be bool, not int"):
        GF.pairwise_distance(graft.randn(2), graft.randn(2), keepdim=1)


def test_no_warnings_in_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for m in (gnn.ReLU6(), gnn.Hardtanh(), gnn.CELU(), gnn.Softsign(), gnn.Tanhshrink(), gnn.Softmin(1)):
            m(graft.randn(2, 3))

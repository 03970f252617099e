"""KLDivLoss, HuberLoss, SoftMarginLoss, MarginRankingLoss, HingeEmbeddingLoss,
CosineEmbeddingLoss, TripletMarginLoss, PoissonNLLLoss, GaussianNLLLoss, MultiLabelSoftMarginLoss,
MultiMarginLoss, MultiLabelMarginLoss and their functionals against PyTorch: values and gradients
for every reduction, the legacy size_average/reduce arguments, KLDivLoss's 'batchmean' and its
warning for 'mean', and PyTorch's errors (2.x's where 1.13 differs)."""
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
REDUCTIONS = ["mean", "sum", "none"]


def signs(*shape, seed=3):
    """A float array of 1 and -1."""
    return np.where(np.random.default_rng(seed).random(shape) < 0.5, -1.0, 1.0)


def quiet(fn):
    """fn with the kl_div 'mean' warning silenced (both libraries give it)."""
    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return call


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x = np.log(np.random.default_rng(0).dirichlet(np.ones(5), size=4))
    t = np.random.default_rng(1).dirichlet(np.ones(5), size=4)
    t[0, 0] = 0.0  # xlogy's 0 * log(0) = 0
    if log_target:
        t = np.log(t + 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_both(torch, tnn.KLDivLoss(reduction=reduction, log_target=log_target),
                 gnn.KLDivLoss(reduction=reduction, log_target=log_target), [x, t])
    run_fn_both(torch, quiet(lambda a, b: TF.kl_div(a, b, reduction=reduction, log_target=log_target)),
                quiet(lambda a, b: GF.kl_div(a, b, reduction=reduction, log_target=log_target)), [x, t],
                int_inputs=(1,) if not log_target else ())


def test_kl_div_warnings_and_errors():
    x, t = graft.randn(3, 4), graft.rand(3, 4)
    with pytest.warns(UserWarning, match="^reduction: 'mean' divides the total loss by both the batch size and the "
                                         "support size.'batchmean' divides only by the batch size"):
        GF.kl_div(x, t)
    with pytest.warns(UserWarning, match="^reduction: 'mean' divides"):
        gnn.KLDivLoss()(x, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GF.kl_div(x, t, reduction="batchmean")
        assert GF.kl_div(graft.tensor(1.0), graft.tensor(2.0), reduction="batchmean").dim() == 0
    with pytest.warns(UserWarning, match="^size_average and reduce args will be deprecated, please use "
                                         "reduction='sum' instead.$"):
        legacy = GF.kl_div(x, t, size_average=False)
    np.testing.assert_allclose(legacy.numpy(), GF.kl_div(x, t, reduction="sum").numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="^kl_div: Integral inputs not supported.$"):
        GF.kl_div(graft.tensor([1, 2]), graft.rand(2), reduction="sum")
    with pytest.raises(ValueError, match="^bogus is not a valid value for reduction$"):
        GF.kl_div(x, t, reduction="bogus")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_elementwise_losses(reduction):
    x, y = rand(4, 5), rand(4, 5, seed=1)
    x[0, :3] = [0.2, -0.3, 1.7]
    y[0, :3] = [0.2, 0.7, 0.0]  # |x - y| == 0, == delta (1), > delta
    for delta in (1.0, 0.5, 2.0):
        run_fn_both(torch, lambda a, b: TF.huber_loss(a, b, reduction=reduction, delta=delta),
                    lambda a, b: GF.huber_loss(a, b, reduction=reduction, delta=delta), [x, y])
    run_both(torch, tnn.HuberLoss(reduction, 0.5), gnn.HuberLoss(reduction, 0.5), [x, y])
    s = signs(4, 5)
    run_fn_both(torch, lambda a, b: TF.soft_margin_loss(a, b, reduction=reduction),
                lambda a, b: GF.soft_margin_loss(a, b, reduction=reduction), [x, s], int_inputs=(1,))
    run_both(torch, tnn.SoftMarginLoss(reduction=reduction), gnn.SoftMarginLoss(reduction=reduction), [x, s],
             grad=False)
    for margin in (0.0, 0.5):
        run_fn_both(torch, lambda a, b, c: TF.margin_ranking_loss(a, b, c, margin, reduction=reduction),
                    lambda a, b, c: GF.margin_ranking_loss(a, b, c, margin, reduction=reduction), [x, y, s])
        run_fn_both(torch, lambda a, b: TF.hinge_embedding_loss(a, b, margin + 1, reduction=reduction),
                    lambda a, b: GF.hinge_embedding_loss(a, b, margin + 1, reduction=reduction), [x, s])
    run_both(torch, tnn.MarginRankingLoss(0.3, reduction=reduction), gnn.MarginRankingLoss(0.3, reduction=reduction),
             [x, y, s])
    run_both(torch, tnn.HingeEmbeddingLoss(2.0, reduction=reduction),
             gnn.HingeEmbeddingLoss(2.0, reduction=reduction), [x, s])


def test_huber_loss_weight_and_errors():
    # weight= is PyTorch 2.x's (1.13 had none): the elementwise loss times the weight, then reduced
    x, y, w = graft.randn(3, 4), graft.randn(3, 4), graft.rand(3, 4)
    expected = (GF.huber_loss(x, y, reduction="none") * w).mean()
    np.testing.assert_allclose(GF.huber_loss(x, y, weight=w).numpy(), expected.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="^Weights and input must have the same size.$"):
        GF.huber_loss(x, y, weight=graft.rand(4))
    with pytest.raises(ValueError, match="^Invalid reduction mode: bogus. Expected one of 'none', 'mean', 'sum'.$"):
        GF.huber_loss(x, y, reduction="bogus", weight=w)
    with pytest.raises(RuntimeError, match="^huber_loss does not support non-positive values for delta.$"):
        GF.huber_loss(x, y, delta=0.0)
    with pytest.raises(TypeError, match="^delta must be a float or int, got: <class 'str'>$"):
        gnn.HuberLoss(delta="1")
    with pytest.warns(UserWarning, match=r"^Using a target size \(graft.Size\(\[4\]\)\) that is different"):
        GF.huber_loss(x, graft.randn(4))


def test_soft_margin_loss_target_is_not_differentiable():
    x, t = graft.randn(3, requires_grad=True), graft.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^The function 'soft_margin_loss' is not differentiable with respect to "
                                           "argument 'target'. This input cannot have requires_grad True.$"):
        GF.soft_margin_loss(x, t)
    with graft.no_grad():
        GF.soft_margin_loss(x, t)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(reduction):
    x1, x2 = rand(4, 5), rand(4, 5, seed=1)
    t = np.array([1.0, -1.0, -1.0, 1.0])
    for margin in (0.0, -0.5, 0.3):
        run_fn_both(torch, lambda a, b, c: TF.cosine_embedding_loss(a, b, c, margin, reduction=reduction),
                    lambda a, b, c: GF.cosine_embedding_loss(a, b, c, margin, reduction=reduction), [x1, x2, t])
    run_fn_both(torch, lambda a, b, c: TF.cosine_embedding_loss(a, b, c, reduction=reduction),
                lambda a, b, c: GF.cosine_embedding_loss(a, b, c, reduction=reduction), [x1[0], x2[0], np.array(-1.0)])
    run_both(torch, tnn.CosineEmbeddingLoss(0.1, reduction=reduction),
             gnn.CosineEmbeddingLoss(0.1, reduction=reduction), [x1, x2, t])


def test_cosine_embedding_loss_errors():
    with pytest.raises(RuntimeError, match="^0D or 1D target tensor expected, multi-target not supported$"):
        GF.cosine_embedding_loss(graft.randn(3, 4), graft.randn(3, 4), graft.ones(3, 4))
    with pytest.raises(RuntimeError, match=r"^1D target tensor expects 2D input tensors, but found inputs with sizes "
                                           r"\[4\] and \[4\].$"):
        GF.cosine_embedding_loss(graft.randn(4), graft.randn(4), graft.ones(3))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_triplet_margin_loss(reduction):
    a, p, n = rand(4, 5), rand(4, 5, seed=1), rand(4, 5, seed=2)
    for kw in [dict(), dict(margin=0.5, p=1.0), dict(swap=True), dict(p=3.0, eps=1e-3, swap=True)]:
        run_fn_both(torch, lambda x, y, z: TF.triplet_margin_loss(x, y, z, reduction=reduction, **kw),
                    lambda x, y, z: GF.triplet_margin_loss(x, y, z, reduction=reduction, **kw), [a, p, n])
    run_both(torch, tnn.TripletMarginLoss(2.0, swap=True, reduction=reduction),
             gnn.TripletMarginLoss(2.0, swap=True, reduction=reduction), [a, p, n])


def test_triplet_margin_loss_errors():
    x = graft.randn(3, 4)
    # the margin checks are PyTorch 2.x's (1.13 took any margin)
    with pytest.raises(ValueError, match="^margin must be greater than 0, got 0$"):
        GF.triplet_margin_loss(x, x, x, margin=0)
    with pytest.raises(ValueError, match="^TripletMarginLoss: expected margin to be greater than 0, got -1 instead$"):
        gnn.TripletMarginLoss(margin=-1)
    with pytest.raises(RuntimeError, match="^The anchor, positive, and negative tensors are expected to have the same "
                                           "number of dimensions, but got: anchor 2D, positive 2D, and negative 1D "
                                           "inputs$"):
        GF.triplet_margin_loss(x, x, x[0])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_poisson_nll_loss(reduction):
    x = rand(4, 5)
    t = np.random.default_rng(2).poisson(2.0, size=(4, 5)).astype(float)
    for kw in [dict(), dict(full=True), dict(log_input=False), dict(log_input=False, full=True, eps=1e-3)]:
        inp = x if kw.get("log_input", True) else np.abs(x)
        run_fn_both(torch, lambda a, b: TF.poisson_nll_loss(a, b, reduction=reduction, **kw),
                    lambda a, b: GF.poisson_nll_loss(a, b, reduction=reduction, **kw), [inp, t], int_inputs=(1,))
    run_both(torch, tnn.PoissonNLLLoss(full=True, reduction=reduction),
             gnn.PoissonNLLLoss(full=True, reduction=reduction), [x, t], grad=False)
    with pytest.raises(ValueError, match="^bogus is not a valid value for reduction$"):
        GF.poisson_nll_loss(graft.randn(2), graft.rand(2), reduction="bogus")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gaussian_nll_loss(reduction):
    x, t = rand(4, 3), rand(4, 3, seed=1)
    for var in [np.abs(rand(4, 3, seed=2)), np.abs(rand(4, seed=2)), np.abs(rand(4, 1, seed=2)),
                np.array([[0.0, 1e-8, 2.0]] * 4)]:
        for kw in [dict(), dict(full=True, eps=1e-3)]:
            run_fn_both(torch, lambda a, b, v: TF.gaussian_nll_loss(a, b, v, reduction=reduction, **kw),
                        lambda a, b, v: GF.gaussian_nll_loss(a, b, v, reduction=reduction, **kw), [x, t, var])
    var = np.abs(rand(4, 3, seed=2))
    run_both(torch, tnn.GaussianNLLLoss(full=True, reduction=reduction),
             gnn.GaussianNLLLoss(full=True, reduction=reduction), [x, t, var])


def test_gaussian_nll_loss_float_var_and_errors():
    x, t = graft.randn(4, 3), graft.randn(4, 3)
    # a float var is PyTorch 2.x's (1.13 needed a tensor)
    np.testing.assert_allclose(GF.gaussian_nll_loss(x, t, 0.5).numpy(),
                               GF.gaussian_nll_loss(x, t, graft.full((4, 3), 0.5)).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="^var has negative entry/entries$"):
        GF.gaussian_nll_loss(x, t, -1.0)
    with pytest.raises(ValueError, match="^var has negative entry/entries$"):
        GF.gaussian_nll_loss(x, t, -graft.ones(4, 3))
    with pytest.raises(ValueError, match="^var is of incorrect size$"):
        GF.gaussian_nll_loss(x, t, graft.ones(3))
    with pytest.raises(ValueError, match="^bogus is not valid$"):
        GF.gaussian_nll_loss(x, t, graft.ones(4, 3), reduction="bogus")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_soft_margin_loss(reduction):
    x = rand(4, 5)
    t = (np.random.default_rng(1).random((4, 5)) < 0.5).astype(float)
    w = np.abs(rand(5, seed=2))
    run_fn_both(torch, lambda a, b: TF.multilabel_soft_margin_loss(a, b, reduction=reduction),
                lambda a, b: GF.multilabel_soft_margin_loss(a, b, reduction=reduction), [x, t])
    run_fn_both(torch, lambda a, b, c: TF.multilabel_soft_margin_loss(a, b, c, reduction=reduction),
                lambda a, b, c: GF.multilabel_soft_margin_loss(a, b, c, reduction=reduction), [x, t, w])
    t_loss = tnn.MultiLabelSoftMarginLoss(torch.tensor(w), reduction=reduction)
    g_loss = gnn.MultiLabelSoftMarginLoss(graft.tensor(w), reduction=reduction)
    assert list(g_loss.state_dict()) == list(t_loss.state_dict()) == ["weight"]
    run_both(torch, t_loss, g_loss, [x, t])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multi_margin_loss(reduction):
    x = rand(5, 4)
    t = np.array([0, 3, 1, 1, 2])
    x[0, 1] = x[0, 0] - 1.0  # a margin term of exactly 0
    w = np.abs(rand(4, seed=2))
    for kw in [dict(), dict(p=2), dict(margin=0.3), dict(p=2, margin=2.0)]:
        run_fn_both(torch, lambda a, b: TF.multi_margin_loss(a, b, reduction=reduction, **kw),
                    lambda a, b: GF.multi_margin_loss(a, b, reduction=reduction, **kw), [x, t])
    run_fn_both(torch, lambda a, b, c: TF.multi_margin_loss(a, b, weight=c, reduction=reduction),
                lambda a, b, c: GF.multi_margin_loss(a, b, weight=c, reduction=reduction), [x, t, w], int_inputs=(2,))
    for inp, tgt in [(rand(4), np.array([2])), (np.array(0.5), np.array([0]))]:
        run_fn_both(torch, lambda a, b: TF.multi_margin_loss(a, b, reduction=reduction),
                    lambda a, b: GF.multi_margin_loss(a, b, reduction=reduction), [inp, tgt])
    run_both(torch, tnn.MultiMarginLoss(2, 0.5, reduction=reduction), gnn.MultiMarginLoss(2, 0.5, reduction=reduction),
             [x, t])


def test_multi_margin_loss_errors():
    x, t = graft.randn(3, 4), graft.tensor([0, 1, 2])
    with pytest.raises(ValueError, match="^only p == 1 and p == 2 supported$"):
        GF.multi_margin_loss(x, t, p=3)
    with pytest.raises(ValueError, match="^weight must be one-dimensional$"):
        GF.multi_margin_loss(x, t, weight=graft.ones(1, 4))
    with pytest.raises(ValueError, match="^MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead$"):
        gnn.MultiMarginLoss(weight=graft.ones(1, 4))
    with pytest.raises(RuntimeError, match=r"^multi_margin_loss: target tensor should be 1-D with size equal to the "
                                           r"number of input samples \(batch size\). Expected target size \[3\], but "
                                           r"got \[2\]. Input has shape \[3, 4\].$"):
        GF.multi_margin_loss(x, graft.tensor([0, 1]))
    with pytest.raises(RuntimeError, match=r"^inconsistent weight size, expected 4 but got \[3\]$"):
        GF.multi_margin_loss(x, t, weight=graft.ones(3))
    with pytest.raises(RuntimeError, match="^target out of range$"):
        GF.multi_margin_loss(x, graft.tensor([0, 1, 4]))
    with pytest.raises(RuntimeError, match="^expected scalar type Long but found Float$"):
        GF.multi_margin_loss(x, graft.tensor([0.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"^Expected non-empty vector or matrix with optional 0-dim batch size, "
                                           r"but got: \[2, 2, 4\]$"):
        GF.multi_margin_loss(graft.randn(2, 2, 4), graft.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="^The function 'multi_margin_loss' is not differentiable with respect to "
                                           "argument 'weight'."):
        GF.multi_margin_loss(x, t, weight=graft.ones(4, requires_grad=True))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction):
    x = rand(3, 5)
    t = np.array([[3, 0, -1, 1, 1], [0, 1, 2, 3, 4], [4, 4, 2, -1, -1]])  # repeats and a full row
    run_fn_both(torch, lambda a, b: TF.multilabel_margin_loss(a, b, reduction=reduction),
                lambda a, b: GF.multilabel_margin_loss(a, b, reduction=reduction), [x, t])
    run_fn_both(torch, lambda a, b: TF.multilabel_margin_loss(a, b, reduction=reduction),
                lambda a, b: GF.multilabel_margin_loss(a, b, reduction=reduction), [x[0], t[0]])
    run_both(torch, tnn.MultiLabelMarginLoss(reduction=reduction), gnn.MultiLabelMarginLoss(reduction=reduction),
             [x, t])


def test_multilabel_margin_loss_errors():
    x = graft.randn(3, 4)
    with pytest.raises(RuntimeError, match="^argument #2 'target' is out of range$"):
        GF.multilabel_margin_loss(x, graft.tensor([[0, 4, -1, 0]] * 3))
    with pytest.raises(RuntimeError, match=r"^inconsistent target size: \[3, 3\] for input of size: \[3, 4\]$"):
        GF.multilabel_margin_loss(x, graft.tensor([[0, 1, -1]] * 3))
    with pytest.raises(RuntimeError, match="^expected scalar type Long but found Float$"):
        GF.multilabel_margin_loss(x, graft.zeros(3, 4))


def test_empty_batches_stay_in_the_graph():
    x = graft.randn(0, 4, requires_grad=True)
    for loss in (GF.multi_margin_loss(x, graft.tensor([], dtype=graft.int64)),
                 GF.multilabel_margin_loss(x, graft.zeros(0, 4, dtype=graft.int64), reduction="sum")):
        assert loss.requires_grad and loss.dim() == 0 and loss.detach().item() == 0


@pytest.mark.parametrize("cls, args", [
    ("KLDivLoss", dict(reduction="batchmean", log_target=True)), ("HuberLoss", dict(delta=0.5)),
    ("SoftMarginLoss", {}), ("MarginRankingLoss", dict(margin=0.2)), ("HingeEmbeddingLoss", {}),
    ("CosineEmbeddingLoss", {}), ("TripletMarginLoss", dict(p=1.0, swap=True)), ("PoissonNLLLoss", dict(full=True)),
    ("GaussianNLLLoss", dict(eps=1e-3)), ("MultiLabelSoftMarginLoss", {}), ("MultiMarginLoss", dict(p=2)),
    ("MultiLabelMarginLoss", {}),
])
def test_module_attributes_and_repr(cls, args):
    t, g = getattr(tnn, cls)(**args), getattr(gnn, cls)(**args)
    assert repr(g) == repr(t)
    for name in ("reduction", "margin", "p", "eps", "swap", "delta", "log_target", "log_input", "full"):
        if hasattr(t, name):
            assert getattr(g, name) == getattr(t, name), name


def test_legacy_reduction_arguments():
    with pytest.warns(UserWarning, match="^size_average and reduce args will be deprecated, please use "
                                         "reduction='none' instead.$"):
        m = gnn.MarginRankingLoss(reduce=False)
    assert m.reduction == "none"
    x = graft.randn(3)
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = GF.hinge_embedding_loss(x, graft.ones(3), size_average=False)
    assert loss.item() == pytest.approx(float(x.sum()), rel=1e-6)
    assert math.isclose(GF.soft_margin_loss(graft.zeros(2), graft.ones(2), reduction="sum").item(), 2 * math.log(2),
                        rel_tol=1e-6)

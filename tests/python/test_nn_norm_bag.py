"""Parity of graft's InstanceNorm1d/2d/3d, LocalResponseNorm, CrossMapLRN2d, EmbeddingBag and
Bilinear (and their functional forms) with PyTorch: forward values and gradients against torch 1.13
(float64, torch's state copied into graft), state_dict keys, reprs, initialisation and error texts.
Where PyTorch 2.x differs from 1.13 (the InstanceNorm channel-count check, EmbeddingBag's repr and
2-D include_last_offset, bilinear's dtype check, CrossMapLRN2d's dim check), the 2.x behaviour is
checked on its own."""
import math
import re
import warnings

import numpy as np
import pytest

import graft
import graft.nn as gnn
import graft.nn.functional as GF

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

from nn_parity_utils import copy_state, rand, run_both, run_fn_both  # noqa: E402


def as_graft(text):
    """torch's message as graft writes it (its module paths and tensor type names)."""
    return text.replace("torch.", "graft.")


def same_error(t_fn, g_fn, exc=Exception):
    """Both calls raise the same exception type with the same text (torch -> graft in names)."""
    with pytest.raises(exc) as t_err:
        t_fn()
    with pytest.raises(type(t_err.value)) as g_err:
        g_fn()
    assert str(g_err.value) == as_graft(str(t_err.value))


def buffers(module):
    return {k: v.detach().numpy() for k, v in module.state_dict().items()}


def assert_same_state(t_layer, g_layer):
    t_state, g_state = buffers(t_layer), buffers(g_layer)
    assert list(t_state) == list(g_state)
    for k in t_state:
        np.testing.assert_allclose(g_state[k], t_state[k], rtol=1e-12, atol=1e-14, err_msg=k)


# ---------------------------------------------------------------- InstanceNorm

INSTANCE = [(1, (3, 5, 7)), (2, (2, 4, 3, 5)), (3, (2, 3, 2, 3, 4))]


@pytest.mark.parametrize("dims, shape", INSTANCE)
@pytest.mark.parametrize("affine", [False, True])
def test_instance_norm_forward_backward(dims, shape, affine):
    t = getattr(tnn, f"InstanceNorm{dims}d")(shape[1], eps=1e-3, affine=affine)
    g = getattr(gnn, f"InstanceNorm{dims}d")(shape[1], eps=1e-3, affine=affine)
    if affine:  # not the ones/zeros they start at, so that the affine part is seen
        with torch.no_grad():
            t.weight.copy_(torch.tensor(rand(shape[1], seed=3)))
            t.bias.copy_(torch.tensor(rand(shape[1], seed=4)))
    for train in (True, False):
        run_both(torch, t, g, [rand(*shape)], train=train)


@pytest.mark.parametrize("dims, shape", INSTANCE)
def test_instance_norm_running_stats(dims, shape):
    t = getattr(tnn, f"InstanceNorm{dims}d")(shape[1], momentum=0.3, affine=True, track_running_stats=True)
    g = getattr(gnn, f"InstanceNorm{dims}d")(shape[1], momentum=0.3, affine=True, track_running_stats=True)
    run_both(torch, t, g, [rand(*shape)], train=True)
    assert_same_state(t, g)  # moved towards the batch's instance statistics; num_batches_tracked stays 0
    assert int(g.num_batches_tracked) == 0
    run_both(torch, t, g, [rand(*shape, seed=1)], train=True)
    assert_same_state(t, g)
    run_both(torch, t, g, [rand(*shape, seed=2)], train=False)  # eval: normalizes with the running stats
    assert_same_state(t, g)


@pytest.mark.parametrize("dims, shape", INSTANCE)
def test_instance_norm_unbatched(dims, shape):
    t = getattr(tnn, f"InstanceNorm{dims}d")(shape[1], affine=True, track_running_stats=True)
    g = getattr(gnn, f"InstanceNorm{dims}d")(shape[1], affine=True, track_running_stats=True)
    _, out = run_both(torch, t, g, [rand(*shape[1:])], train=True)
    assert tuple(out[0].shape) == shape[1:]
    assert_same_state(t, g)


def test_instance_norm_momentum_none_keeps_running_stats():
    # PyTorch 2.x hands momentum 0.0 to instance_norm when momentum is None
    g = gnn.InstanceNorm1d(3, momentum=None, track_running_stats=True).double()
    g(graft.tensor(rand(2, 3, 5)))
    np.testing.assert_array_equal(g.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(g.running_var.numpy(), np.ones(3))
    assert repr(g) == "InstanceNorm1d(3, eps=1e-05, momentum=None, affine=False, track_running_stats=True)"


def test_functional_instance_norm():
    args = [rand(2, 3, 4), rand(3, seed=1), rand(3, seed=2)]
    run_fn_both(torch, lambda x, w, b: TF.instance_norm(x, weight=w, bias=b, eps=1e-4),
                lambda x, w, b: GF.instance_norm(x, weight=w, bias=b, eps=1e-4), args)
    t_mean, t_var = torch.tensor(rand(3, seed=5)), torch.tensor(np.abs(rand(3, seed=6)))
    g_mean, g_var = graft.tensor(t_mean.numpy()), graft.tensor(t_var.numpy())
    for use_input_stats in (True, False):
        run_fn_both(torch, lambda x: TF.instance_norm(x, t_mean, t_var, None, None, use_input_stats, 0.2),
                    lambda x: GF.instance_norm(x, g_mean, g_var, None, None, use_input_stats, 0.2), args[:1])
        np.testing.assert_allclose(g_mean.numpy(), t_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(g_var.numpy(), t_var.numpy(), rtol=1e-12)


def test_instance_norm_errors():
    same_error(lambda: tnn.InstanceNorm1d(3)(torch.zeros(2, 3, 1)), lambda: gnn.InstanceNorm1d(3)(graft.zeros(2, 3, 1)))
    same_error(lambda: TF.instance_norm(torch.zeros(4, 3)), lambda: GF.instance_norm(graft.zeros(4, 3)))
    same_error(lambda: TF.instance_norm(torch.zeros(2, 3, 4), use_input_stats=False),
               lambda: GF.instance_norm(graft.zeros(2, 3, 4), use_input_stats=False))
    for dims, bad in ((1, (2, 3, 4, 5)), (2, (3, 4)), (3, (2, 3, 4, 5, 6, 7))):
        same_error(lambda: getattr(tnn, f"InstanceNorm{dims}d")(3)(torch.zeros(bad)),
                   lambda: getattr(gnn, f"InstanceNorm{dims}d")(3)(graft.zeros(bad)))
    # one spatial element is fine with the running statistics (eval)
    g = gnn.InstanceNorm1d(3, track_running_stats=True).eval()
    assert tuple(g(graft.zeros(2, 3, 1)).shape) == (2, 3, 1)


def test_instance_norm_num_features_mismatch():
    with pytest.warns(UserWarning, match=re.escape(
            "input's size at dim=1 does not match num_features. You can silence this warning by not passing in "
            "num_features, which is not used because affine=False")):
        out = gnn.InstanceNorm2d(5)(graft.randn(2, 3, 4, 4))
    assert tuple(out.shape) == (2, 3, 4, 4)
    with pytest.warns(UserWarning, match="input's size at dim=0 does not match num_features"):
        gnn.InstanceNorm1d(5)(graft.randn(3, 4))
    with pytest.raises(ValueError, match=re.escape(
            "expected input's size at dim=1 to match num_features (5), but got: 3.")):
        gnn.InstanceNorm1d(5, affine=True)(graft.randn(2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gnn.InstanceNorm1d(3)(graft.randn(2, 3, 4))


@pytest.mark.parametrize("kwargs", [{}, {"affine": True}, {"track_running_stats": True},
                                    {"affine": True, "track_running_stats": True, "momentum": 0.2, "eps": 1e-3}])
def test_instance_norm_state_dict_and_repr(kwargs):
    for dims in (1, 2, 3):
        t = getattr(tnn, f"InstanceNorm{dims}d")(4, **kwargs)
        g = getattr(gnn, f"InstanceNorm{dims}d")(4, **kwargs)
        assert list(g.state_dict()) == list(t.state_dict())
        assert repr(g) == repr(t)
        assert_same_state(t, g)  # the initial values: ones, zeros, running mean 0, var 1, count 0


def test_instance_norm_reset_and_legacy_checkpoint():
    g = gnn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    g(graft.tensor(rand(2, 3, 5)))
    with graft.no_grad():
        g.weight.fill_(2.0)
    g.reset_parameters()
    np.testing.assert_array_equal(g.weight.detach().numpy(), np.ones(3))
    np.testing.assert_array_equal(g.running_mean.numpy(), np.zeros(3))
    # a checkpoint of no version with running stats for a layer that does not track them
    t, g = tnn.InstanceNorm1d(3), gnn.InstanceNorm1d(3)
    t_state = {"running_mean": torch.zeros(3), "running_var": torch.ones(3)}
    g_state = {"running_mean": graft.zeros(3), "running_var": graft.ones(3)}
    same_error(lambda: t.load_state_dict(t_state), lambda: g.load_state_dict(g_state))


# ---------------------------------------------------------------- LocalResponseNorm, CrossMapLRN2d

@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 4), (2, 5, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
def test_local_response_norm(shape, size):
    run_both(torch, tnn.LocalResponseNorm(size, 0.3, 0.6, 1.5), gnn.LocalResponseNorm(size, 0.3, 0.6, 1.5),
             [rand(*shape)])
    run_fn_both(torch, lambda x: TF.local_response_norm(x, size), lambda x: GF.local_response_norm(x, size),
                [3 * rand(*shape, seed=1)])


def test_local_response_norm_repr_errors_empty():
    for args in ((3,), (2, 1e-3, 0.5, 2)):
        assert repr(gnn.LocalResponseNorm(*args)) == repr(tnn.LocalResponseNorm(*args))
        assert list(gnn.LocalResponseNorm(*args).state_dict()) == []
    same_error(lambda: TF.local_response_norm(torch.zeros(2, 3), 2),
               lambda: GF.local_response_norm(graft.zeros(2, 3), 2))
    empty = graft.zeros(0, 3, 4)
    assert GF.local_response_norm(empty, 2) is empty


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6, 9])
def test_cross_map_lrn2d(size):
    # forward and PyTorch's own (legacy) backward, channel 0's quirk in the window included
    run_both(torch, tnn.CrossMapLRN2d(size, 0.5, 0.75, 1.0), gnn.CrossMapLRN2d(size, 0.5, 0.75, 1.0),
             [rand(2, 7, 3, 2)], rtol=1e-10, atol=1e-12)
    run_both(torch, tnn.CrossMapLRN2d(size), gnn.CrossMapLRN2d(size), [rand(1, 3, 2, 2)], rtol=1e-10, atol=1e-12)


def test_cross_map_lrn2d_repr_errors():
    for args in ((3,), (4, 1e-3, 0.5, 2.0)):
        assert repr(gnn.CrossMapLRN2d(*args)) == repr(tnn.CrossMapLRN2d(*args))
    with pytest.raises(ValueError, match=re.escape("CrossMapLRN2d: Expected input to be 4D, got 3D instead.")):
        gnn.CrossMapLRN2d(3)(graft.zeros(2, 3, 4))
    t_x, g_x = torch.ones(1, 3, 2, 2, requires_grad=True), graft.ones(1, 3, 2, 2, requires_grad=True)
    same_error(lambda: tnn.CrossMapLRN2d(1)(t_x).sum().backward(),
               lambda: gnn.CrossMapLRN2d(1)(g_x).sum().backward(), RuntimeError)


# ---------------------------------------------------------------- EmbeddingBag

INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 2])
OFFSETS = np.array([0, 4, 4, 7])  # bag 1 is empty


def bag_pair(*args, **kwargs):
    t, g = tnn.EmbeddingBag(*args, **kwargs), gnn.EmbeddingBag(*args, **kwargs)
    with torch.no_grad():
        t.weight.copy_(torch.tensor(rand(*t.weight.shape, seed=11)))
    return t, g


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2, -1])
def test_embedding_bag_offsets(mode, padding_idx):
    t, g = bag_pair(10, 3, mode=mode, padding_idx=padding_idx)
    run_both(torch, t, g, [INDICES, OFFSETS])
    run_both(torch, t, g, [INDICES.reshape(2, 5)])  # a bag per row


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_include_last_offset(mode):
    t, g = bag_pair(10, 3, mode=mode, include_last_offset=True)
    _, out = run_both(torch, t, g, [INDICES, np.append(OFFSETS, len(INDICES))])
    assert tuple(out[0].shape) == (4, 3)


def test_embedding_bag_2d_ignores_include_last_offset():
    # PyTorch 2.x: a 2-D input is a bag per row whatever include_last_offset says
    t, g = bag_pair(10, 3, mode="sum", include_last_offset=True)
    copy_state(t.double(), g.double())
    out = g(graft.tensor(INDICES.reshape(2, 5)))
    ref = TF.embedding_bag(torch.tensor(INDICES.reshape(2, 5)), t.weight, mode="sum")
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_per_sample_weights(padding_idx):
    t, g = bag_pair(10, 3, mode="sum", padding_idx=padding_idx)
    run_both(torch, t, g, [INDICES, OFFSETS, rand(len(INDICES), seed=2)])
    run_both(torch, t, g, [INDICES.reshape(5, 2)], kwargs={"per_sample_weights": rand(5, 2, seed=3)})
    run_fn_both(torch, lambda x, w, o, p: TF.embedding_bag(x, w, o, mode="sum", per_sample_weights=p),
                lambda x, w, o, p: GF.embedding_bag(x, w, o, mode="sum", per_sample_weights=p),
                [INDICES, rand(10, 3), OFFSETS, rand(len(INDICES), seed=4)], int_inputs=(0, 2))


@pytest.mark.parametrize("mode", ["sum", "mean"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_scale_grad_by_freq(mode, padding_idx):
    # PyTorch's CPU kernel scales the i-th distinct index by 1 / count of the i-th smallest index
    t, g = bag_pair(10, 3, mode=mode, scale_grad_by_freq=True, padding_idx=padding_idx)
    run_both(torch, t, g, [INDICES, OFFSETS])
    run_both(torch, t, g, [np.array([[7, 7, 7, 1], [4, 7, 0, 0], [9, 4, 4, 1]])])


def test_embedding_bag_all_padding_and_empty_bags():
    for mode in ("sum", "mean", "max"):
        t, g = bag_pair(10, 3, mode=mode, padding_idx=2)
        _, out = run_both(torch, t, g, [np.array([2, 2, 2]), np.array([0, 1, 1])])
        assert not out[0].detach().numpy().any()


def test_embedding_bag_include_last_offset_short():
    # PyTorch 2.x: with include_last_offset, indices past the last offset belong to no bag
    x, w = graft.tensor(INDICES), graft.tensor(rand(10, 3))
    out = GF.embedding_bag(x, w, graft.tensor([0, 3, 5]), mode="sum", include_last_offset=True)
    ref = [rand(10, 3)[INDICES[:3]].sum(0), rand(10, 3)[INDICES[3:5]].sum(0)]
    np.testing.assert_allclose(out.numpy(), np.stack(ref), rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_max_norm(mode):
    t, g = bag_pair(10, 3, mode=mode, max_norm=1.2, norm_type=1.5)
    run_both(torch, t, g, [INDICES[:6], np.array([0, 3])])
    assert_same_state(t, g)  # the rows it looked up renormalized in place, the others left as they were
    assert np.abs(g.weight.detach().numpy()[7]).sum() > 1.2


def test_embedding_bag_int32_and_functional_defaults():
    w = rand(10, 3)
    run_fn_both(torch, lambda x, w, o: TF.embedding_bag(x, w, o), lambda x, w, o: GF.embedding_bag(x, w, o),
                [INDICES.astype(np.int32), w, OFFSETS.astype(np.int32)], int_inputs=(0, 2))
    run_fn_both(torch, lambda x, w: TF.embedding_bag(x, w, mode="max"),
                lambda x, w: GF.embedding_bag(x, w, mode="max"), [INDICES.reshape(5, 2), w], int_inputs=(0,))


def test_embedding_bag_swapped_arguments_warn():
    w, x, o = rand(10, 3), INDICES, OFFSETS
    with pytest.warns(UserWarning, match="Argument order of nn.functional.embedding_bag was changed"):
        out = GF.embedding_bag(graft.tensor(w), graft.tensor(x), graft.tensor(o))
    ref = TF.embedding_bag(torch.tensor(x), torch.tensor(w), torch.tensor(o))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)


def test_embedding_bag_from_pretrained():
    w = rand(6, 4)
    for freeze in (True, False):
        t = tnn.EmbeddingBag.from_pretrained(torch.tensor(w), freeze=freeze, mode="sum", padding_idx=1)
        g = gnn.EmbeddingBag.from_pretrained(graft.tensor(w), freeze=freeze, mode="sum", padding_idx=1)
        assert g.weight.requires_grad is (not freeze)
        assert repr(g) == "EmbeddingBag(6, 4, mode='sum', padding_idx=1)"
        x = np.array([[1, 2, 3], [0, 1, 5]])
        np.testing.assert_allclose(g(graft.tensor(x)).detach().numpy(), t(torch.tensor(x)).detach().numpy())
    np.testing.assert_array_equal(g.weight.detach().numpy()[1], w[1])  # a given weight keeps its padding row
    same_error(lambda: tnn.EmbeddingBag.from_pretrained(torch.zeros(3)),
               lambda: gnn.EmbeddingBag.from_pretrained(graft.zeros(3)))


def test_embedding_bag_module_state_repr_init():
    kwargs = [{}, {"max_norm": 1.0, "norm_type": 1.0, "scale_grad_by_freq": True, "mode": "max", "padding_idx": -2},
              {"mode": "sum", "include_last_offset": True, "sparse": True}]
    # PyTorch 2.x writes the options' reprs (mode='mean'); 1.13 wrote mode=mean
    reprs = ["EmbeddingBag(10, 3, mode='mean')",
             "EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, mode='max', padding_idx=8)",
             "EmbeddingBag(10, 3, mode='sum')"]
    for kw, text in zip(kwargs, reprs):
        t, g = tnn.EmbeddingBag(10, 3, **kw), gnn.EmbeddingBag(10, 3, **kw)
        assert list(g.state_dict()) == list(t.state_dict()) == ["weight"]
        assert repr(g) == text
        assert re.sub(r"mode=(\w+)", r"mode='\1'", repr(t)) == text
        for name in ("num_embeddings", "embedding_dim", "max_norm", "norm_type", "scale_grad_by_freq", "mode",
                     "sparse", "include_last_offset", "padding_idx"):
            assert getattr(g, name) == getattr(t, name), name
    graft.manual_seed(0)
    g = gnn.EmbeddingBag(400, 50, padding_idx=3)
    w = g.weight.detach().numpy()
    assert not w[3].any()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02  # N(0, 1)
    with graft.no_grad():
        g.weight.fill_(5.0)
    g.reset_parameters()
    assert not g.weight.detach().numpy()[3].any() and abs(g.weight.detach().numpy().std() - 1) < 0.02


def test_embedding_bag_errors_as_torch():
    x, o, w = INDICES, OFFSETS, rand(10, 3)
    cases = [
        dict(input=x, offsets=o, per_sample_weights=rand(3)),
        dict(input=x.reshape(2, 5), offsets=o),
        dict(input=x),
        dict(input=x, offsets=o.reshape(2, 2)),
        dict(input=x.reshape(1, 2, 5)),
        dict(input=x, offsets=o, mode="median"),
        dict(input=x, offsets=o, mode="max", scale_grad_by_freq=True),
        dict(input=x, offsets=o, mode="max", sparse=True),
        dict(input=x, offsets=o, mode="mean", per_sample_weights=rand(len(x))),
        dict(input=x, offsets=o, padding_idx=10),
        dict(input=x, offsets=o, padding_idx=-11),
        dict(input=x, offsets=o + 1),
        dict(input=x, offsets=np.array([0, 11])),
        dict(input=np.array([1, 10]), offsets=np.array([0])),
        dict(input=np.array([1, -1]), offsets=np.array([0])),
        dict(input=x.astype(np.float64), offsets=o),
        dict(input=x, offsets=o.astype(np.float32)),
        dict(input=x.astype(np.int32), offsets=(o + 1).astype(np.int32)),
        dict(input=x, offsets=o, mode="sum", per_sample_weights=rand(len(x)).astype(np.float32)),
    ]
    for case in cases:
        t_kw = {k: torch.tensor(v) if isinstance(v, np.ndarray) else v for k, v in case.items()}
        g_kw = {k: graft.tensor(v) if isinstance(v, np.ndarray) else v for k, v in case.items()}
        same_error(lambda: TF.embedding_bag(weight=torch.tensor(w), **t_kw),
                   lambda: GF.embedding_bag(weight=graft.tensor(w), **g_kw))
    for kw in ({"padding_idx": 10}, {"padding_idx": -11}, {"_weight": torch.zeros(3, 3)}):
        g_kw = {k: graft.zeros(3, 3) if k == "_weight" else v for k, v in kw.items()}
        same_error(lambda: tnn.EmbeddingBag(10, 3, **kw), lambda: gnn.EmbeddingBag(10, 3, **g_kw))


def test_embedding_bag_errors_2x():
    w, x = graft.randn(10, 3), graft.tensor(INDICES)
    with pytest.raises(ValueError, match=re.escape("weight has to be a 2D Tensor, but got Tensor of dimension 1")):
        GF.embedding_bag(x, w[0], graft.tensor(OFFSETS))
    with pytest.raises(RuntimeError, match=re.escape("include_last_offset: number of offset should be at least 1")):
        GF.embedding_bag(x, w, graft.tensor([], dtype=graft.int64), include_last_offset=True)
    with pytest.raises(NotImplementedError, match="sparse"):
        gnn.EmbeddingBag(10, 3, sparse=True)(x, graft.tensor(OFFSETS))


# ---------------------------------------------------------------- Bilinear

@pytest.mark.parametrize("bias", [True, False])
def test_bilinear(bias):
    t, g = tnn.Bilinear(3, 5, 4, bias=bias), gnn.Bilinear(3, 5, 4, bias=bias)
    run_both(torch, t, g, [rand(7, 3), rand(7, 5, seed=1)])
    run_both(torch, t, g, [rand(2, 6, 3), rand(2, 6, 5, seed=1)])
    run_both(torch, t, g, [rand(3), rand(5, seed=1)])
    args = [rand(2, 6, 3), rand(2, 6, 5, seed=1), rand(4, 3, 5, seed=2)] + ([rand(4, seed=3)] if bias else [])
    run_fn_both(torch, TF.bilinear, GF.bilinear, args)


def test_bilinear_module_state_repr_init():
    for kw in ({}, {"bias": False}):
        t, g = tnn.Bilinear(3, 5, 4, **kw), gnn.Bilinear(3, 5, 4, **kw)
        assert repr(g) == repr(t)
        assert list(g.state_dict()) == list(t.state_dict())
    graft.manual_seed(0)
    g = gnn.Bilinear(9, 50, 40)
    bound = 1 / math.sqrt(9)
    for p in (g.weight.detach().numpy(), g.bias.detach().numpy()):
        assert np.abs(p).max() <= bound and np.abs(p).max() > 0.9 * bound  # U(-1/sqrt(in1), 1/sqrt(in1))
    assert abs(g.weight.detach().numpy().std() - bound / math.sqrt(3)) < 0.01


def test_bilinear_errors():
    x1, x2, w, b = rand(2, 6, 3), rand(2, 6, 5), rand(4, 3, 5), rand(4)
    for a1, a2, aw, ab in ((x1[0], x2, w, b), (x1[:, :5], x2, w, b), (x1, x2[..., :4], w, b), (x1[..., :2], x2, w, b),
                           (x1, x2, w, b[:3])):
        same_error(lambda: TF.bilinear(*(torch.tensor(a) for a in (a1, a2, aw, ab))),
                   lambda: GF.bilinear(*(graft.tensor(a) for a in (a1, a2, aw, ab))))
    with pytest.raises(RuntimeError, match=re.escape(
            "All tensors must have the same dtype, got input1: double, input2: float, weight: double, bias: double")):
        GF.bilinear(graft.tensor(x1), graft.tensor(x2).float(), graft.tensor(w), graft.tensor(b))
    with pytest.raises(RuntimeError, match=re.escape(
            "All tensors must have the same dtype, got input1: float, input2: float, weight: double")):
        GF.bilinear(graft.tensor(x1).float(), graft.tensor(x2).float(), graft.tensor(w))


def test_torch_pickled_layers_load_as_graft_layers(tmp_path):
    # each class lives in the module PyTorch has it in, so whole pickled layers map onto graft's
    layers = [tnn.InstanceNorm2d(3, affine=True), tnn.LocalResponseNorm(2), tnn.CrossMapLRN2d(3),
              tnn.EmbeddingBag(5, 2, mode="sum"), tnn.Bilinear(2, 3, 4)]
    path = tmp_path / "layers.pt"
    torch.save(tnn.Sequential(*layers), path)
    loaded = graft.load(path, weights_only=False)
    for t, g in zip(layers, loaded):
        assert type(g) is getattr(gnn, type(t).__name__)
        assert type(g).__module__ == type(t).__module__.replace("torch.", "graft.")
    x = graft.randn(2, 3, 4, 4)
    np.testing.assert_allclose(loaded[0](x).detach().numpy(), layers[0](torch.tensor(x.numpy())).detach().numpy(),
                               rtol=1e-5, atol=1e-6)

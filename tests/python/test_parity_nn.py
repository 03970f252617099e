"""Parity tier for graft.nn: each layer is built in torch and in graft, torch's weights are
loaded into graft (load_state_dict with tensors converted through NumPy), both run the same
input, and outputs, input gradients and parameter gradients are compared (float64)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft.nn as gnn  # noqa: E402
import graft.nn.functional as GF  # noqa: E402
from nn_parity_utils import copy_state, flat  # noqa: E402  (shared with the other nn parity tests)

tnn = torch.nn
TF = torch.nn.functional


def to_np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()



def run_both(t_layer, g_layer, inputs, *, train=False, grad=True, rtol=1e-7, atol=1e-9, kwargs=None):
    """Runs both layers on the same NumPy inputs; compares outputs and gradients."""
    kwargs = kwargs or {}
    t_layer.double()
    g_layer.double()
    copy_state(t_layer, g_layer)
    t_layer.train(train)
    g_layer.train(train)
    t_in, g_in = [], []
    for a in inputs:
        a = np.asarray(a)
        floating = a.dtype.kind == "f"
        t_in.append(torch.tensor(a, requires_grad=grad and floating))
        g_in.append(graft.tensor(a, requires_grad=grad and floating))
    t_out, g_out = flat(t_layer(*t_in, **kwargs)), flat(g_layer(*g_in, **kwargs))
    assert len(t_out) == len(g_out)
    for t, g in zip(t_out, g_out):
        assert tuple(t.shape) == tuple(g.shape)
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    if not grad:
        return
    rng = np.random.default_rng(7)
    t_loss, g_loss = 0, 0
    for t, g in zip(t_out, g_out):
        if not t.requires_grad:
            continue
        w = rng.standard_normal(tuple(t.shape))
        t_loss = t_loss + (t * torch.tensor(w)).sum()
        g_loss = g_loss + (g * graft.tensor(w)).sum()
    t_loss.backward()
    g_loss.backward()
    for t, g in zip(t_in, g_in):
        if t.requires_grad:
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    t_params = dict(t_layer.named_parameters())
    for name, gp in g_layer.named_parameters():
        tg = t_params[name].grad
        if tg is None:
            assert gp.grad is None or not gp.grad.numpy().any(), name
        else:
            np.testing.assert_allclose(gp.grad.numpy(), tg.numpy(), rtol=rtol, atol=atol, err_msg=name)
    for name, b in t_layer.named_buffers():
        np.testing.assert_allclose(g_layer.get_buffer(name).numpy(), b.numpy(), rtol=rtol, atol=atol, err_msg=name)


def each(cases, check):
    """Runs check(case) for every case; a failure names the case."""
    for i, case in enumerate(cases):
        try:
            check(case)
        except AssertionError as e:
            raise AssertionError(f"case {i}: {e}") from e


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def test_linear():
    each([lambda nn: nn.Linear(4, 3), lambda nn: nn.Linear(4, 3, bias=False)],
         lambda make: run_both(make(tnn), make(gnn), [rand(2, 5, 4)]))


def test_bilinear():
    run_both(tnn.Bilinear(3, 4, 2), gnn.Bilinear(3, 4, 2), [rand(5, 3), rand(5, 4, seed=1)])


def test_conv1d():
    each([dict(in_channels=4, out_channels=6, kernel_size=3),
          dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, dilation=2, groups=2, bias=False),
          dict(in_channels=4, out_channels=2, kernel_size=4, padding="same"),
          dict(in_channels=4, out_channels=2, kernel_size=3, padding="valid")],
         lambda args: run_both(tnn.Conv1d(**args), gnn.Conv1d(**args), [rand(2, 4, 9)]))


def test_conv2d():
    each([dict(in_channels=2, out_channels=4, kernel_size=3),
          dict(in_channels=4, out_channels=6, kernel_size=(3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
               groups=2),
          dict(in_channels=2, out_channels=3, kernel_size=(2, 3), padding="same", dilation=2)],
         lambda args: run_both(tnn.Conv2d(**args), gnn.Conv2d(**args), [rand(2, args["in_channels"], 7, 6)]))
    run_both(tnn.Conv2d(2, 3, 3), gnn.Conv2d(2, 3, 3), [rand(2, 5, 5)])  # unbatched


def test_conv_transpose2d():
    each([dict(in_channels=2, out_channels=3, kernel_size=3),
          dict(in_channels=4, out_channels=2, kernel_size=3, stride=2, padding=1, output_padding=1, groups=2),
          dict(in_channels=2, out_channels=2, kernel_size=2, stride=2, dilation=2, bias=False)],
         lambda args: run_both(tnn.ConvTranspose2d(**args), gnn.ConvTranspose2d(**args),
                               [rand(2, args["in_channels"], 4, 5)]))
    t, g = tnn.ConvTranspose2d(1, 1, 3, stride=2), gnn.ConvTranspose2d(1, 1, 3, stride=2)
    run_both(t, g, [rand(1, 1, 4, 4)], kwargs={"output_size": [10, 10]})



CONVOLUTIONS = [  # torch.convolution's arguments after input, weight and bias; the shapes
    ((2, 3, 6, 5), (4, 3, 3, 2), ([2, 1], [1, 0], [1, 2], False, [0, 0], 1)),
    ((1, 4, 3, 4), (4, 1, 3, 3), ([2], [1], [1], True, [1], 2)),  # transposed, output_padding, groups
    ((2, 3, 9), (4, 3, 3), ([2], [1], [2], False, [0], 1)),  # 1-d
    ((2, 2, 4), (2, 3, 3), ([2], [0], [1], True, [1], 1)),  # 1-d transposed
]


@pytest.mark.parametrize("x_shape, w_shape, args", CONVOLUTIONS)
def test_convolution_records_one_node_whose_joint_backward_gives_three_gradients(x_shape, w_shape, args):
    """torch.convolution: values, the three gradients, ConvolutionBackward0 (a 1-d convolution's
    too, with no view around it) and the gradients of the gradients (create_graph)."""
    out_channels = w_shape[1] * args[-1] if args[3] else w_shape[0]
    arrays = [rand(*x_shape), rand(*w_shape, seed=1), rand(out_channels, seed=2)]
    results = []
    for lib in (torch, graft):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
        out = lib.convolution(x, w, b, *args)
        assert (type(out.grad_fn).__name__ if lib is torch else out.grad_fn.name()) == "ConvolutionBackward0"
        grads = lib.autograd.grad((out * out).sum(), (x, w, b), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (x, w))
        results.append([t.detach().numpy() for t in (out, *grads, *second)])
    for g, t in zip(results[1], results[0]):
        np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-10)
    g_out = GF.conv1d(graft.tensor(rand(2, 3, 9), requires_grad=True), graft.tensor(rand(4, 3, 3)))
    assert g_out.grad_fn.name() == "ConvolutionBackward0"  # PyTorch's conv1d records no view


@pytest.mark.parametrize("x_shape, w_shape, args", [
    ((3, 5, 5), (4, 3, 3, 3), ([1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 3, 3, 3), ([1, 1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 3, 3, 3), ([0, 1], [0, 0], [1, 1], False, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 3, 3, 3), ([1, 1], [-1, 0], [1, 1], False, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 3, 3, 3), ([1, 1], [0, 0], [1, 1], False, [0, 0], 0)),
    ((2, 3, 5, 5), (4, 3, 9, 9), ([1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 3, 3, 3), ([1, 1], [0, 0], [1, 1], True, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 2, 3, 3), ([1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
    ((2, 3, 5, 5), (4, 3, 3), ([1], [0], [1], False, [0], 1)),
    ((2, 3, 5), (4, 3, 9), ([1], [0], [1], False, [0], 1)),
    ((2, 3, 5, 5), (3,), ([1], [0], [1], False, [0], 1)),
])
def test_convolution_refuses_bad_arguments_as_pytorch_does(x_shape, w_shape, args):
    messages = []
    for lib in (torch, graft):
        with pytest.raises(RuntimeError) as e:
            lib.convolution(lib.zeros(*x_shape, dtype=lib.float64), lib.zeros(*w_shape, dtype=lib.float64), None,
                            *args)
        messages.append(str(e.value).split("\n")[0])
    assert messages[1] == messages[0]


POOLS = [
    lambda nn: nn.MaxPool2d(2),
    lambda nn: nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, ceil_mode=True),
    lambda nn: nn.MaxPool2d(2, stride=1, dilation=2),
    lambda nn: nn.AvgPool2d(2),
    lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    lambda nn: nn.AvgPool2d(2, divisor_override=3),
    lambda nn: nn.AdaptiveAvgPool2d((3, 2)),
    lambda nn: nn.AdaptiveAvgPool2d((None, 2)),
    lambda nn: nn.AdaptiveAvgPool2d(1),
]


def test_pooling():
    each(POOLS, lambda make: run_both(make(tnn), make(gnn), [rand(2, 3, 7, 6)]))


def test_max_pool_indices():
    t_out, t_idx = TF.max_pool2d(torch.tensor(rand(1, 2, 5, 5)), 2, return_indices=True)
    g_out, g_idx = GF.max_pool2d(graft.tensor(rand(1, 2, 5, 5)), 2, return_indices=True)
    np.testing.assert_array_equal(g_idx.numpy(), t_idx.numpy())
    np.testing.assert_allclose(g_out.numpy(), t_out.numpy())


ELEMENTWISE = [
    lambda nn: nn.ReLU(), lambda nn: nn.GELU(), lambda nn: nn.GELU(approximate="tanh"), lambda nn: nn.Tanh(),
    lambda nn: nn.Sigmoid(), lambda nn: nn.SiLU(), lambda nn: nn.Softmax(dim=1), lambda nn: nn.LogSoftmax(dim=-1),
    lambda nn: nn.LeakyReLU(0.2), lambda nn: nn.Softplus(beta=2, threshold=1), lambda nn: nn.Dropout(0.3),
    lambda nn: nn.Identity(), lambda nn: nn.Flatten(), lambda nn: nn.Flatten(0, 1),
    lambda nn: nn.Unflatten(1, (2, 2)),
]


def test_elementwise_layers():
    each(ELEMENTWISE, lambda make: run_both(make(tnn), make(gnn), [rand(3, 4, 5)]))


def test_norms():
    def check(make):
        t, g = make(tnn), make(gnn)
        with torch.no_grad():
            for p in t.parameters():
                p.copy_(torch.tensor(rand(*p.shape, seed=3)))
        run_both(t, g, [rand(3, 4, 5)])
    each([lambda nn: nn.LayerNorm(5), lambda nn: nn.LayerNorm([4, 5], elementwise_affine=False),
          lambda nn: nn.GroupNorm(2, 4), lambda nn: nn.GroupNorm(4, 4, affine=False)], check)


BATCH_NORMS = [
    (lambda nn: nn.BatchNorm1d(4), (6, 4)),
    (lambda nn: nn.BatchNorm1d(4, momentum=None), (3, 4, 5)),
    (lambda nn: nn.BatchNorm2d(3, affine=False), (2, 3, 4, 4)),
    (lambda nn: nn.BatchNorm2d(3, track_running_stats=False), (2, 3, 4, 4)),
]


@pytest.mark.parametrize("train", [True, False])
def test_batch_norm(train):
    each(BATCH_NORMS, lambda case: check_batch_norm(*case, train))


def check_batch_norm(make, shape, train):
    t, g = make(tnn), make(gnn)
    with torch.no_grad():
        if t.running_mean is not None:
            t.running_mean.copy_(torch.tensor(rand(t.num_features, seed=4)))
            t.running_var.copy_(torch.tensor(np.abs(rand(t.num_features, seed=5)) + 0.5))
            t.num_batches_tracked.fill_(3)
    run_both(t, g, [rand(*shape)], train=train)
    if train:  # a second step: momentum / cumulative average of the running statistics
        x = rand(*shape, seed=9)
        t(torch.tensor(x))
        g(graft.tensor(x))
        for name, b in t.named_buffers():
            np.testing.assert_allclose(g.get_buffer(name).numpy(), b.numpy(), rtol=1e-12, err_msg=name)


def test_embedding():
    idx = np.array([[0, 2, 4], [4, 3, 0]])
    run_both(tnn.Embedding(5, 3, padding_idx=0), gnn.Embedding(5, 3, padding_idx=0), [idx])
    run_both(tnn.Embedding(5, 3, padding_idx=-1), gnn.Embedding(5, 3, padding_idx=-1), [idx])


@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=1), dict(scale_grad_by_freq=True)])
def test_functional_ops_show_pytorchs_nodes(kw):
    """The ops declared with their own node show PyTorch's grad_fn names (embedding showed
    IndexSelectBackward0 before), and their second derivatives agree."""
    w = rand(4, 3, seed=3)
    idx = np.array([[3, 1], [1, 0]])
    outs = {}
    for lib, F in ((torch, TF), (graft, GF)):
        wt = lib.tensor(w, requires_grad=True)
        y = F.embedding(lib.tensor(idx), wt, **kw)
        g, = lib.autograd.grad((y * y).sum(), wt, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), wt)
        outs[lib.__name__] = (type(y.grad_fn).__name__ if lib is torch else y.grad_fn.name(), g.detach().numpy(),
                              gg.numpy())
    assert outs["graft"][0] == outs["torch"][0] == "EmbeddingBackward0"
    np.testing.assert_allclose(outs["graft"][1], outs["torch"][1], rtol=1e-12)
    # PyTorch's double backward of embedding (embedding_dense_double_backward) leaves out
    # scale_grad_by_freq's scaling; graft's differentiates its first derivative as computed
    # (the scaled index_add), so the second derivatives are compared only without it
    if not kw.get("scale_grad_by_freq"):
        np.testing.assert_allclose(outs["graft"][2], outs["torch"][2], rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_node_and_gradients(reduction, weighted):
    """binary_cross_entropy's own node sits on the reduced loss (BinaryCrossEntropyBackward0, as
    PyTorch's; graft showed MeanBackward0 before), with PyTorch's gradients for input and target
    and their second derivatives, including at 0 and 1 where the logs are clamped."""
    x = np.array([[0.0, 0.3, 0.9], [1.0, 0.5, 0.2]])
    y = np.array([[0.0, 1.0, 0.25], [1.0, 0.0, 0.5]])
    w = np.array([0.5, 2.0, 1.5])
    outs = {}
    for lib, F in ((torch, TF), (graft, GF)):
        weight = lib.tensor(w) if weighted else None
        xt, yt = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        loss = F.binary_cross_entropy(xt, yt, weight=weight, reduction=reduction)
        gx, gy = lib.autograd.grad((loss * loss).sum(), (xt, yt))
        # second derivatives inside (0, 1), where the logs are not clamped
        xi = lib.tensor(np.clip(x, 0.05, 0.95), requires_grad=True)
        yi = lib.tensor(y, requires_grad=True)
        li = F.binary_cross_entropy(xi, yi, weight=weight, reduction=reduction)
        gxi, gyi = lib.autograd.grad((li * li).sum(), (xi, yi), create_graph=True)
        ggx, = lib.autograd.grad((gxi * gxi).sum() + (gyi * gyi).sum(), xi)
        name = type(loss.grad_fn).__name__ if lib is torch else loss.grad_fn.name()
        outs[lib.__name__] = [name] + [t.detach().numpy() for t in (loss, gx, gy, ggx)]
    assert outs["graft"][0] == outs["torch"][0] == "BinaryCrossEntropyBackward0"
    for g, t in zip(outs["graft"][1:], outs["torch"][1:]):  # NaN where PyTorch's is (0 * inf at 0 and 1)
        np.testing.assert_allclose(g, t, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target_shape", [(2, 3), (3,)])
def test_mse_loss_node_and_gradients(reduction, target_shape):
    """mse_loss is one node (MseLossBackward0, as PyTorch's; graft showed MeanBackward0 over
    MulBackward0 and SubBackward0 before), with PyTorch's gradients for input and target, a
    broadcast target's included, and their second derivatives."""
    x = rand(2, 3, seed=4)
    y = rand(*target_shape, seed=5)
    outs = {}
    for lib, F in ((torch, TF), (graft, GF)):
        xt, yt = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        if target_shape == (2, 3):
            loss = F.mse_loss(xt, yt, reduction=reduction)
        else:  # both warn about the broadcast
            with pytest.warns(UserWarning, match="different to the input size"):
                loss = F.mse_loss(xt, yt, reduction=reduction)
        gx, gy = lib.autograd.grad((loss * loss).sum(), (xt, yt), create_graph=True)
        ggx, ggy = lib.autograd.grad((gx * gx).sum() + (gy * gy).sum(), (xt, yt))
        name = type(loss.grad_fn).__name__ if lib is torch else loss.grad_fn.name()
        outs[lib.__name__] = [name] + [t.detach().numpy() for t in (loss, gx, gy, ggx, ggy)]
    assert outs["graft"][0] == outs["torch"][0] == "MseLossBackward0"
    for g, t in zip(outs["graft"][1:], outs["torch"][1:]):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
def test_smooth_l1_loss_node_and_gradients(reduction, beta):
    """smooth_l1_loss is one node (SmoothL1LossBackward0, as PyTorch's, for beta 0 too), with
    PyTorch's gradients at the edges (|x| = beta, x = 0 with beta 0, NaN, infinity) and
    second derivatives (1 / beta strictly inside the quadratic part)."""
    x = np.array([[0.0, 0.25, -0.5, 1.0], [-1.0, 2.5, -3.0, 0.75]])
    y = np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0]])
    edges = np.array([np.nan, np.inf, -np.inf, 0.5])
    outs = {}
    for lib, F in ((torch, TF), (graft, GF)):
        xt, yt = lib.tensor(x, requires_grad=True), lib.tensor(y, requires_grad=True)
        loss = F.smooth_l1_loss(xt, yt, reduction=reduction, beta=beta)
        gx, gy = lib.autograd.grad((loss * loss).sum(), (xt, yt), create_graph=True)
        ggx, ggy = lib.autograd.grad((gx * gx).sum() + (gy * gy).sum(), (xt, yt))
        et = lib.tensor(edges, requires_grad=True)
        ge, = lib.autograd.grad(F.smooth_l1_loss(et, lib.zeros(4, dtype=lib.float64), reduction="sum", beta=beta), et)
        name = type(loss.grad_fn).__name__ if lib is torch else loss.grad_fn.name()
        outs[lib.__name__] = [name] + [t.detach().numpy() for t in (loss, gx, gy, ggx, ggy, ge)]
    assert outs["graft"][0] == outs["torch"][0] == "SmoothL1LossBackward0"
    for g, t in zip(outs["graft"][1:], outs["torch"][1:]):
        np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12)


def test_sequential_model():
    def make(nn):
        return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Flatten(), nn.Linear(4 * 3 * 3, 5), nn.LogSoftmax(dim=1))
    run_both(make(tnn), make(gnn), [rand(3, 2, 6, 6)], train=True)


@pytest.mark.parametrize("fkw", [dict(), dict(need_weights=False), dict(average_attn_weights=False)])
def test_multihead_attention(fkw):
    each([dict(), dict(batch_first=True), dict(bias=False), dict(kdim=3, vdim=5),
          dict(add_bias_kv=True, add_zero_attn=True)], lambda kw: check_multihead_attention(kw, fkw))


def check_multihead_attention(kw, fkw):
    t, g = tnn.MultiheadAttention(6, 2, **kw), gnn.MultiheadAttention(6, 2, **kw)
    kdim, vdim = kw.get("kdim", 6), kw.get("vdim", 6)
    if kw.get("batch_first"):
        q, k, v = rand(2, 4, 6), rand(2, 5, kdim, seed=1), rand(2, 5, vdim, seed=2)
    else:
        q, k, v = rand(4, 2, 6), rand(5, 2, kdim, seed=1), rand(5, 2, vdim, seed=2)
    run_both(t, g, [q, k, v], kwargs=fkw)


@pytest.mark.parametrize("mask_kind", ["bool", "float"])
def test_multihead_attention_masks(mask_kind):
    t, g = tnn.MultiheadAttention(4, 2), gnn.MultiheadAttention(4, 2)
    L, S, N = 3, 4, 2
    attn = np.triu(np.ones((L, S), dtype=bool), k=2)
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1, 3] = True
    if mask_kind == "float":  # (torch 1.13 mishandles a float key_padding_mask: keep it bool)
        attn = np.where(attn, -1e9, 0.0)
    q, k, v = rand(L, N, 4), rand(S, N, 4, seed=1), rand(S, N, 4, seed=2)
    t.double()
    g.double()
    copy_state(t, g)
    t_out = t(*(torch.tensor(a) for a in (q, k, v)), key_padding_mask=torch.tensor(kpm), attn_mask=torch.tensor(attn))
    g_out = g(*(graft.tensor(a) for a in (q, k, v)), key_padding_mask=graft.tensor(kpm),
              attn_mask=graft.tensor(attn))
    for a, b in zip(g_out, t_out):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_multihead_attention_unbatched():
    t, g = tnn.MultiheadAttention(4, 2), gnn.MultiheadAttention(4, 2)
    run_both(t, g, [rand(3, 4), rand(5, 4, seed=1), rand(5, 4, seed=2)])


@pytest.mark.parametrize("kw", [
    dict(),
    dict(norm_first=True, activation="gelu"),
    dict(batch_first=True),
])
def test_transformer_encoder_layer(kw):
    t = tnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)
    g = gnn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)
    mask = np.triu(np.ones((5, 5), dtype=bool), k=1)
    run_both(t, g, [rand(5, 3, 8) if not kw.get("batch_first") else rand(3, 5, 8)], train=True,
             kwargs={"src_mask": None})
    t.eval()
    g.eval()
    x = rand(5, 3, 8) if not kw.get("batch_first") else rand(3, 5, 8)
    np.testing.assert_allclose(g(graft.tensor(x), src_mask=graft.tensor(mask)).detach().numpy(),
                               t(torch.tensor(x), src_mask=torch.tensor(mask)).detach().numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent(cls):
    def check(kw):
        t, g = getattr(tnn, cls)(3, 4, **kw), getattr(gnn, cls)(3, 4, **kw)
        run_both(t, g, [rand(2, 5, 3) if kw.get("batch_first") else rand(5, 2, 3)])
    each([dict(), dict(num_layers=2, bidirectional=True), dict(batch_first=True, bias=False), dict(num_layers=2)],
         check)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_recurrent_with_initial_state(cls):
    t, g = getattr(tnn, cls)(3, 4, num_layers=2), getattr(gnn, cls)(3, 4, num_layers=2)
    x, h0, c0 = rand(5, 2, 3), rand(2, 2, 4, seed=1), rand(2, 2, 4, seed=2)
    t.double()
    g.double()
    copy_state(t, g)
    th, gh = torch.tensor(h0, requires_grad=True), graft.tensor(h0, requires_grad=True)
    tc, gc = torch.tensor(c0, requires_grad=True), graft.tensor(c0, requires_grad=True)
    t_out = t(torch.tensor(x), (th, tc) if cls == "LSTM" else th)
    g_out = g(graft.tensor(x), (gh, gc) if cls == "LSTM" else gh)
    for a, b in zip(flat(g_out), flat(t_out)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-7, atol=1e-9)
    sum(o.sum() for o in flat(t_out)).backward()
    sum(o.sum() for o in flat(g_out)).backward()
    np.testing.assert_allclose(gh.grad.numpy(), th.grad.numpy(), rtol=1e-7, atol=1e-9)
    if cls == "LSTM":
        np.testing.assert_allclose(gc.grad.numpy(), tc.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_rnn_relu_unbatched():
    t, g = tnn.RNN(3, 4, nonlinearity="relu"), gnn.RNN(3, 4, nonlinearity="relu")
    run_both(t, g, [rand(5, 3)])


def test_cells():
    def check(case):
        cls, batched = case
        t, g = getattr(tnn, cls)(3, 4), getattr(gnn, cls)(3, 4)
        run_both(t, g, [rand(2, 3) if batched else rand(3)])
    each([(c, b) for c in ("RNNCell", "LSTMCell", "GRUCell") for b in (True, False)], check)


LOSSES = [
    (lambda nn, T: nn.MSELoss(), "float"),
    (lambda nn, T: nn.L1Loss(reduction="sum"), "float"),
    (lambda nn, T: nn.SmoothL1Loss(beta=0.5), "float"),
    (lambda nn, T: nn.SmoothL1Loss(reduction="none"), "float"),
    (lambda nn, T: nn.NLLLoss(), "class"),
    (lambda nn, T: nn.NLLLoss(weight=T([1.0, 2.0, 0.5, 1.5], dtype=nn_dtype(nn)), ignore_index=1), "class"),
    (lambda nn, T: nn.CrossEntropyLoss(), "class"),
    (lambda nn, T: nn.CrossEntropyLoss(reduction="sum", label_smoothing=0.2), "class"),
    (lambda nn, T: nn.CrossEntropyLoss(weight=T([1.0, 2.0, 0.5, 1.5], dtype=nn_dtype(nn)), ignore_index=2,
                                       label_smoothing=0.1), "class"),
    (lambda nn, T: nn.CrossEntropyLoss(), "probs"),
    (lambda nn, T: nn.BCELoss(), "binary"),
    (lambda nn, T: nn.BCELoss(weight=T([1.0, 2.0, 0.5, 1.5], dtype=nn_dtype(nn)), reduction="none"), "binary"),
    (lambda nn, T: nn.BCEWithLogitsLoss(), "binary"),
    (lambda nn, T: nn.BCEWithLogitsLoss(pos_weight=T([1.0, 2.0, 0.5, 3.0], dtype=nn_dtype(nn))), "binary"),
]


def test_losses():
    each(LOSSES, lambda case: check_loss(*case))


def check_loss(make, target):
    x = rand(5, 4)
    if target == "float":
        y = rand(5, 4, seed=1)
    elif target == "class":
        y = np.array([0, 1, 3, 2, 1])
    elif target == "probs":
        e = np.exp(rand(5, 4, seed=1))
        y = e / e.sum(1, keepdims=True)
    else:
        x = 1 / (1 + np.exp(-x)) if "BCELoss" in repr(make(tnn, torch.tensor)) else x
        y = (rand(5, 4, seed=1) > 0).astype(np.float64)
    run_both(make(tnn, torch.tensor), make(gnn, graft.tensor), [x, y])


def nn_dtype(nn):
    return torch.float64 if nn is tnn else graft.float64


def test_functional_extras():
    x = rand(3, 4)
    t, g = torch.tensor(x, requires_grad=True), graft.tensor(x, requires_grad=True)
    pairs = [
        (TF.normalize(t), GF.normalize(g)),
        (TF.normalize(t, p=1.0, dim=0), GF.normalize(g, p=1.0, dim=0)),
        (TF.leaky_relu(t, 0.1), GF.leaky_relu(g, 0.1)),
        (TF.softplus(t, 2.0, 1.0), GF.softplus(g, 2.0, 1.0)),
        (TF.pad(t, (1, 2, 0, 1), value=3.0), GF.pad(g, (1, 2, 0, 1), value=3.0)),
        (TF.unfold(t.reshape(1, 1, 3, 4), 2), GF.unfold(g.reshape(1, 1, 3, 4), 2)),
        (TF.fold(t.reshape(1, 4, 3), (3, 4), 2, stride=(2, 1)), GF.fold(g.reshape(1, 4, 3), (3, 4), 2, stride=(2, 1))),
        (TF.scaled_dot_product_attention(t.reshape(1, 3, 4), t.reshape(1, 3, 4), t.reshape(1, 3, 4), is_causal=True)
         if hasattr(TF, "scaled_dot_product_attention") else None,
         GF.scaled_dot_product_attention(g.reshape(1, 3, 4), g.reshape(1, 3, 4), g.reshape(1, 3, 4),
                                         is_causal=True)),
    ]
    for a, b in pairs:
        if a is None:
            continue
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-7, atol=1e-9)
        a.sum().backward()
        b.sum().backward()
        np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-7, atol=1e-9)
    idx = np.array([[0, 2], [3, 1]])
    np.testing.assert_array_equal(GF.one_hot(graft.tensor(idx), 5).numpy(), TF.one_hot(torch.tensor(idx), 5).numpy())


def test_clip_grad_norm_matches_torch():
    grads = [rand(3, 4), rand(5, seed=1) * 10]
    for norm_type in (2.0, 1.0, 3.0, float("inf")):
        tp = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
        gp = [graft.zeros(*g.shape, dtype=graft.float64, requires_grad=True) for g in grads]
        for t, g, v in zip(tp, gp, grads):
            t.grad = torch.tensor(v)
            g.grad = graft.tensor(v)
        tn = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type)
        gn = gnn.utils.clip_grad_norm_(gp, 1.5, norm_type)
        np.testing.assert_allclose(gn.item(), tn.item(), rtol=1e-12)
        for t, g in zip(tp, gp):
            np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_init_fans_and_gains_match_torch():
    for shape in [(3, 4), (5, 2, 3, 3), (4, 6, 2)]:
        assert gnn.init._calculate_fan_in_and_fan_out(graft.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    for nl, param in [("linear", None), ("conv2d", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                      ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None)]:
        assert gnn.init.calculate_gain(nl, param) == pytest.approx(torch.nn.init.calculate_gain(nl, param), rel=1e-15)


def test_module_repr_matches_torch():
    def make(nn):
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.BatchNorm2d(4), nn.ReLU())
                self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "box": nn.Linear(4, 4, bias=False)})
                self.attn = nn.MultiheadAttention(4, 2)
                self.rnn = nn.LSTM(4, 8, num_layers=2, batch_first=True, bidirectional=True)
                self.blocks = nn.ModuleList([nn.GELU(approximate="tanh"), nn.Dropout(0.25), nn.Identity()])
                self.empty = nn.Sequential()
                self.missing = None
        return Net()
    assert repr(make(gnn)) == repr(make(tnn))


def test_state_dict_keys_match_torch():
    def make(nn):
        return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Embedding(3, 2), nn.LayerNorm(2),
                             nn.GroupNorm(1, 2), nn.MultiheadAttention(4, 2, kdim=3, add_bias_kv=True),
                             nn.GRU(2, 3, num_layers=2, bidirectional=True), nn.LSTMCell(2, 3),
                             nn.TransformerEncoderLayer(4, 2, 8), nn.Bilinear(2, 3, 4), nn.ConvTranspose2d(2, 3, 2),
                             nn.CrossEntropyLoss(weight=None), nn.BCEWithLogitsLoss())
    t_sd, g_sd = make(tnn).state_dict(), make(gnn).state_dict()
    assert list(g_sd.keys()) == list(t_sd.keys())
    for k in t_sd:
        assert tuple(g_sd[k].shape) == tuple(t_sd[k].shape), k
    assert dict(g_sd._metadata) == dict(t_sd._metadata)

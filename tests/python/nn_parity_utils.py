"""Helpers of the nn parity tests (test_nn_transformers.py, test_nn_more_layers.py, ...): build a
layer in torch and in graft, copy torch's state into graft (through NumPy), run both on the same
float64 inputs and compare outputs, input gradients and parameter gradients."""
import numpy as np

import graft


def rand(*shape, seed=0):
    """Standard normal float64 values of ``shape``."""
    return np.random.default_rng(seed).standard_normal(shape)


def flat(out):
    """Tensors of a (nested) output, in order."""
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def copy_state(t_layer, g_layer):
    """Loads torch's state_dict into the graft layer; the keys must match exactly."""
    state = {k: graft.from_numpy(v.detach().numpy().copy()) for k, v in t_layer.state_dict().items()}
    result = g_layer.load_state_dict(state)
    assert not result.missing_keys and not result.unexpected_keys


def to_tensors(torch, inputs, grad):
    """The NumPy ``inputs`` as torch and graft tensors (floating ones requiring grad when ``grad``);
    None and other non-arrays pass as they are."""
    t_in, g_in = [], []
    for a in inputs:
        if not isinstance(a, np.ndarray):
            t_in.append(a)
            g_in.append(a)
            continue
        floating = a.dtype.kind == "f"
        t_in.append(torch.tensor(a, requires_grad=grad and floating))
        g_in.append(graft.tensor(a, requires_grad=grad and floating))
    return t_in, g_in


def compare_grads(torch, t_out, g_out, t_in, g_in, t_params, g_params, rtol, atol):
    """Backpropagates the same random weighting of both outputs and compares input and parameter grads."""
    rng = np.random.default_rng(7)
    t_loss, g_loss = 0, 0
    for t, g in zip(t_out, g_out):
        if t.requires_grad:
            w = rng.standard_normal(tuple(t.shape))
            t_loss = t_loss + (t * torch.tensor(w)).sum()
            g_loss = g_loss + (g * graft.tensor(w)).sum()
    t_loss.backward()
    g_loss.backward()
    for t, g in zip(t_in, g_in):
        if isinstance(t, torch.Tensor) and t.requires_grad:
            if t.grad is None:  # not in the graph (a target only compared)
                assert g.grad is None or not g.grad.numpy().any()
            else:
                np.testing.assert_allclose(g.grad.numpy(), t.grad.numpy(), rtol=rtol, atol=atol)
    t_params = dict(t_params)
    for name, gp in g_params:
        tg = t_params[name].grad
        if tg is None:
            assert gp.grad is None or not gp.grad.numpy().any(), name
        else:
            np.testing.assert_allclose(gp.grad.numpy(), tg.numpy(), rtol=rtol, atol=atol, err_msg=name)


def run_both(torch, t_layer, g_layer, inputs, *, train=False, grad=True, rtol=1e-7, atol=1e-9, kwargs=None,
             g_kwargs=None):
    """Runs both layers (float64, torch's state copied into graft) on the same NumPy inputs and
    compares the outputs and, with ``grad``, the gradients. ``kwargs`` holds NumPy arrays or plain
    values given to both; ``g_kwargs`` overrides graft's."""
    t_layer.double()
    g_layer.double()
    copy_state(t_layer, g_layer)
    t_layer.train(train)
    g_layer.train(train)
    t_in, g_in = to_tensors(torch, inputs, grad)
    kwargs = kwargs or {}
    names = list(kwargs)
    t_kw, g_kw = to_tensors(torch, [kwargs[k] for k in names], False)
    t_kw, g_kw = dict(zip(names, t_kw)), dict(zip(names, g_kw))
    g_kw.update(g_kwargs or {})
    t_out, g_out = flat(t_layer(*t_in, **t_kw)), flat(g_layer(*g_in, **g_kw))
    assert len(t_out) == len(g_out)
    for t, g in zip(t_out, g_out):
        assert tuple(t.shape) == tuple(g.shape)
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    if grad:
        compare_grads(torch, t_out, g_out, t_in, g_in, t_layer.named_parameters(), g_layer.named_parameters(),
                      rtol, atol)
    return t_out, g_out


def run_fn_both(torch, t_fn, g_fn, inputs, *, grad=True, rtol=1e-7, atol=1e-9, int_inputs=()):
    """Calls a torch function and its graft twin on the same NumPy inputs (positions in
    ``int_inputs`` are not differentiated) and compares outputs and input gradients."""
    t_in, g_in = to_tensors(torch, inputs, grad)
    for i in int_inputs:
        t_in[i] = t_in[i].detach()
        g_in[i] = g_in[i].detach()
    t_out, g_out = flat(t_fn(*t_in)), flat(g_fn(*g_in))
    assert len(t_out) == len(g_out)
    for t, g in zip(t_out, g_out):
        assert tuple(t.shape) == tuple(g.shape), (tuple(t.shape), tuple(g.shape))
        np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    if grad:
        compare_grads(torch, t_out, g_out, t_in, g_in, (), (), rtol, atol)
    return t_out, g_out

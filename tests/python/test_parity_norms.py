"""Parity tier for the norms (torch.linalg.vector_norm / matrix_norm / norm, torch.norm,
Tensor.norm) against PyTorch: values, dtypes, gradients and grad_fn names as PyTorch 2.x routes
them (torch.norm through linalg.vector_norm), and the errors."""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

DATA = [[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]]
INF = math.inf


def run(lib, fn):
    """fn(lib, x) on DATA (float64, requiring grad): value, dtype, gradient of its sum, or the error."""
    x = lib.tensor(DATA, dtype=lib.float64, requires_grad=True)
    try:
        y = fn(lib, x)
    except Exception as e:  # noqa: BLE001  (compared with PyTorch's)
        return type(e).__name__, str(e)
    if y.requires_grad:
        y.sum().backward()
    grad = None if x.grad is None else np.round(x.grad.numpy(), 7).tolist()
    return np.round(y.detach().numpy(), 7).tolist(), str(y.dtype).split(".")[-1], grad


CASES = {
    "vector_default": lambda t, x: t.linalg.vector_norm(x),
    "vector_ord1_dim1": lambda t, x: t.linalg.vector_norm(x, 1, dim=1),
    "vector_inf_dim0_keepdim": lambda t, x: t.linalg.vector_norm(x, INF, dim=(0,), keepdim=True),
    "vector_neg_inf": lambda t, x: t.linalg.vector_norm(x, -INF),
    "vector_ord3": lambda t, x: t.linalg.vector_norm(x, 3),
    "vector_ord_half_dim1": lambda t, x: t.linalg.vector_norm(x, 0.5, 1),
    "vector_neg1_dim1": lambda t, x: t.linalg.vector_norm(x, -1, 1),
    # detached: torch rounds this gradient (through float32) less accurately than graft
    "vector_dtype": lambda t, x: t.linalg.vector_norm(x.detach().float(), dtype=t.float64),
    "vector_zero": lambda t, x: t.linalg.vector_norm(x * 0),
    "vector_zero_ord3": lambda t, x: t.linalg.vector_norm(x * 0, 3, 1),
    "vector_empty": lambda t, x: t.linalg.vector_norm(t.ones(0)),
    "vector_empty_inf": lambda t, x: t.linalg.vector_norm(t.ones(0), INF),
    "vector_empty_dim_neg1": lambda t, x: t.linalg.vector_norm(t.ones(0, 2), -1, dim=0),
    "torch_norm": lambda t, x: t.norm(x),
    "torch_norm_p1": lambda t, x: t.norm(x, 1),
    "torch_norm_dim": lambda t, x: t.norm(x, dim=1),
    "torch_norm_fro_dims": lambda t, x: t.norm(x, "fro", dim=(0, 1)),
    "tensor_norm": lambda t, x: x.norm(),
    "tensor_norm_positional": lambda t, x: x.norm(2, 1, True),
    "tensor_norm_p_inf": lambda t, x: x.norm(p=INF, dim=0),
    "linalg_norm": lambda t, x: t.linalg.norm(x),
    "linalg_norm_vector_ord1": lambda t, x: t.linalg.norm(x[0], 1),
    "linalg_norm_dim1": lambda t, x: t.linalg.norm(x, dim=1),
    "linalg_norm_3d_ord": lambda t, x: t.linalg.norm(x.view(1, 2, 3), 1),
    "matrix_fro": lambda t, x: t.linalg.matrix_norm(x),
    "matrix_ord1": lambda t, x: t.linalg.matrix_norm(x, 1),
    "matrix_neg1": lambda t, x: t.linalg.matrix_norm(x, -1),
    "matrix_inf_keepdim": lambda t, x: t.linalg.matrix_norm(x, INF, keepdim=True),
    "matrix_neg_inf_batched": lambda t, x: t.linalg.matrix_norm(t.stack([x, 2 * x]), -INF),
    "matrix_bad_order": lambda t, x: t.linalg.matrix_norm(x, 3),
    "matrix_of_a_vector": lambda t, x: t.linalg.matrix_norm(x[0]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_norms_match_pytorch(name):
    assert run(graft, CASES[name]) == run(torch, CASES[name])


def test_torch_norm_records_the_vector_norms_node_as_pytorch_2x():
    # torch 1.13's torch.norm records NormBackward1; 2.x routes it through linalg.vector_norm
    x = graft.tensor(DATA, requires_grad=True)
    for y in (graft.norm(x), x.norm(1, 0), graft.linalg.vector_norm(x, INF)):
        assert y.grad_fn.name() == "LinalgVectorNormBackward0"
    assert graft.linalg.matrix_norm(x, 1).grad_fn.name() == "AmaxBackward0"


def test_a_bad_order_string_is_refused_as_pytorch_2x():
    # 1.13: "only valid string values are 'fro' and 'nuc', found abc"; 2.x goes to matrix_norm
    with pytest.raises(RuntimeError, match="^linalg.matrix_norm: Order abc not supported.$"):
        graft.ones(2, 2).norm(p="abc")


def test_integer_input_is_refused_as_pytorch_2x():
    with pytest.raises(NotImplementedError, match="^linalg.vector_norm: Expected a floating point or complex tensor "
                                                  "as input. Got Long$"):
        graft.linalg.vector_norm(graft.tensor([3, 4]))


def test_spectral_norms_are_the_singular_values():
    a = np.random.default_rng(3).standard_normal((2, 3, 4))
    s = np.linalg.svd(a, compute_uv=False)
    for ord, expected in (("nuc", s.sum(-1)), (2, s.max(-1)), (-2, s.min(-1))):
        got = graft.linalg.matrix_norm(graft.tensor(a), ord).tolist()
        np.testing.assert_allclose(got, expected, rtol=1e-12)

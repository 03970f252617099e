"""graft.autocast on the CPU against PyTorch's CPU autocast (Debian's 1.13; 2.x where they differ):
which ops run in bfloat16 / float16, which in float32, gradients in the parameters' dtype,
nesting, the decorator, and the refusals."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402
from nn_parity_utils import copy_state  # noqa: E402


def _region(lib):
    """The ops of a region, on fixed data: their dtypes and values."""
    F = lib.nn.functional
    lib.manual_seed(0)
    lin = lib.nn.Linear(4, 3)
    conv = lib.nn.Conv2d(1, 2, 3)
    return lin, conv, F


DATA_X = [[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.5, -2.0]]
DATA_T = [[0.1, 0.2, -0.3], [1.0, -1.0, 0.5]]
IMG = np.linspace(-1, 1, 25).reshape(1, 1, 5, 5).tolist()


def _run(lib, lin, conv, dtype):
    F = lib.nn.functional
    x, t, img = lib.tensor(DATA_X), lib.tensor(DATA_T), lib.tensor(IMG)
    with lib.autocast("cpu", dtype=getattr(lib, dtype)):
        y = lin(x)
        out = {"linear": y, "relu": y.relu(), "mm": x @ x.t(), "matmul": lib.matmul(x, x.t()),
               "bmm": lib.bmm(x[None], x.t()[None]), "conv": conv(img), "add": y + t, "softmax": y.softmax(1),
               "mse": F.mse_loss(y, t), "l1": F.l1_loss(y, t), "smooth_l1": F.smooth_l1_loss(y, t),
               "ce": F.cross_entropy(y, lib.tensor([0, 2])), "nll": F.nll_loss(y.log_softmax(1), lib.tensor([0, 2])),
               "bce": F.binary_cross_entropy(y.sigmoid(), t.sigmoid()), "prod": y.prod(),
               "double": x.double() @ x.double().t()}
        loss = F.mse_loss(y, t)
    loss.backward()
    out["weight_grad"] = lin.weight.grad
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_lists_as_torch(dtype):
    if dtype == "float16" and torch.__version__ < "2":
        pytest.skip("PyTorch 1.13's CPU autocast has bfloat16 only (2.x has float16 too)")
    tl, tc, _ = _region(torch)
    gl, gc, _ = _region(graft)
    copy_state(tl, gl)
    copy_state(tc, gc)
    t, g = _run(torch, tl, tc, dtype), _run(graft, gl, gc, dtype)
    for k in t:
        assert str(g[k].dtype).split(".")[1] == str(t[k].dtype).split(".")[1], k
        np.testing.assert_allclose(g[k].detach().double().numpy(), t[k].detach().double().numpy(),
                                   rtol=0.02, atol=0.02, err_msg=k)
    assert g["weight_grad"].dtype == graft.float32 and g["linear"].dtype == getattr(graft, dtype)


def test_state_nesting_and_decorator():
    assert not graft.is_autocast_cpu_enabled() and graft.get_autocast_cpu_dtype() == graft.bfloat16
    lin = graft.nn.Linear(2, 2)
    x = graft.ones(1, 2)
    with graft.autocast("cpu"):
        assert graft.is_autocast_cpu_enabled() and graft.is_autocast_enabled("cpu")
        with graft.autocast("cpu", enabled=False):
            assert lin(x).dtype == graft.float32
        with graft.autocast("cpu", dtype=graft.float16):
            assert lin(x).dtype == graft.float16
        assert lin(x).dtype == graft.bfloat16
    assert not graft.is_autocast_cpu_enabled() and lin(x).dtype == graft.float32

    @graft.autocast("cpu")
    def forward(inp):
        return lin(inp)
    assert forward(x).dtype == graft.bfloat16 and not graft.is_autocast_cpu_enabled()
    with pytest.raises(ZeroDivisionError):
        with graft.autocast("cpu"):
            1 / 0
    assert not graft.is_autocast_cpu_enabled()  # restored when the region raises


def test_refusals_and_warnings_as_torch_2():
    """PyTorch 2.x's texts (2.15): 1.13 raised on a float32 CPU region instead of warning."""
    lin, x = graft.nn.Linear(2, 2), graft.ones(1, 2)
    with pytest.warns(UserWarning, match="^In CPU autocast, but the target dtype is not supported. Disabling "
                                         "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                                         "torch.float16 currently.$"):
        with graft.autocast("cpu", dtype=graft.float32):
            assert lin(x).dtype == graft.float32
    with pytest.warns(UserWarning, match="^CUDA is not available or torch_xla is imported. Disabling autocast.$"):
        with graft.autocast("cuda"):
            assert lin(x).dtype == graft.float32
    with pytest.raises(RuntimeError, match="^Expected one of cpu, cuda, .* device type at start of device string: "
                                           "xyz$"):
        graft.autocast("xyz")
    with pytest.raises(ValueError, match="^Expected `device_type` of type `str`, got: `<class 'int'>`$"):
        graft.autocast(1)


def test_deprecated_spellings():
    x = graft.ones(1, 2)
    lin = graft.nn.Linear(2, 2)
    with pytest.warns(FutureWarning, match=r"^`torch.cpu.amp.autocast\(args...\)` is deprecated. Please use "
                                           r"`torch.amp.autocast\('cpu', args...\)` instead.$"):
        region = graft.cpu.amp.autocast()
    with region:
        assert lin(x).dtype == graft.bfloat16
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with graft.cuda.amp.autocast():
            assert lin(x).dtype == graft.float32
    assert [type(w.message) for w in caught] == [FutureWarning, UserWarning]

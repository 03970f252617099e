"""Helpers of the graft.distributions parity tests (test_distributions.py,
test_distributions_more.py): build the same thing in graft and in torch, compare the results as
NumPy arrays, and compare error texts (``graft.`` read as ``torch.``)."""
import numpy as np
import pytest

import graft

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

LIBS = (graft, torch)


def t(lib, values, dtype="float64"):
    """``values`` as a tensor of ``lib`` (graft or torch), float64 by default."""
    return lib.tensor(np.asarray(values, dtype=dtype))


def numpy(x):
    """A tensor of either library (detached), or anything else, as a NumPy array."""
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def close(got, want, rtol=1e-12, atol=1e-12):
    """Asserts that ``got`` and ``want`` (tensors of either library, or arrays) have one shape and
    agree to ``rtol`` and ``atol``."""
    want = numpy(want)
    got = numpy(got)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def both(build):
    """build(lib) for graft and torch."""
    return build(graft), build(torch)


def message(exc_info):
    """The text of a caught exception, ``graft.`` read as ``torch.``."""
    return str(exc_info.value).replace("graft.", "torch.")


def assert_same_errors(call, exc=ValueError):
    """Asserts that ``call(lib)`` raises ``exc`` in graft and in torch, with the same text."""
    errors = []
    for lib in LIBS:
        with pytest.raises(exc) as info:
            call(lib)
        errors.append(message(info))
    assert errors[0] == errors[1]

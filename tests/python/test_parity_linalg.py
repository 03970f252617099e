"""Parity tier for torch.linalg's factorizations against Debian's PyTorch: det, slogdet, logdet,
inv, solve (matrices, vectors, broadcast batches, left=False), cholesky, solve_triangular, qr, svd,
svdvals, eigh, eigvalsh, pinv, matrix_rank, lstsq, cond, the spectral matrix norms, multi_dot,
cholesky_solve, cholesky_inverse, triangular_solve and matrix_power with a negative power:
values, gradients, grad_fn names, result types, strides and the errors' types and texts (PyTorch
2.x's where 1.13 differs: its dtype refusals are NotImplementedError)."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")
import graft  # noqa: E402

R = np.random.default_rng(7)
SQ = R.standard_normal((3, 3)) + 3 * np.eye(3)          # well conditioned
BSQ = R.standard_normal((2, 3, 3)) + 3 * np.eye(3)
TALL, WIDE = R.standard_normal((4, 3)), R.standard_normal((2, 4))
RHS, VEC, RHS4 = R.standard_normal((3, 2)), R.standard_normal(3), R.standard_normal((4, 2))
SYM = SQ + SQ.T
SPD = SQ @ SQ.T + np.eye(3)


def t(lib, a, grad=False):
    x = lib.tensor(np.asarray(a), dtype=lib.float64)
    return x.requires_grad_() if grad else x


def values(r):
    parts = r if isinstance(r, (tuple, list)) else (r,)
    return [np.asarray(p.detach().tolist()) if hasattr(p, "detach") else p for p in parts]


def same(fn, atol=1e-9):
    """fn(torch) and fn(graft) give the same values."""
    for a, b in zip(values(fn(torch)), values(fn(graft)), strict=True):
        np.testing.assert_allclose(b, a, atol=atol, rtol=1e-9)


CASES = {
    "det": lambda L: L.linalg.det(t(L, BSQ)),
    "det_singular": lambda L: L.det(t(L, [[1.0, 2], [2, 4]])),
    "slogdet": lambda L: tuple(L.linalg.slogdet(t(L, -BSQ))),
    "slogdet_singular": lambda L: tuple(L.slogdet(t(L, np.zeros((2, 2))))),
    "logdet_negative": lambda L: L.logdet(t(L, [[0.0, 1], [1, 0]])),
    "logdet": lambda L: L.logdet(t(L, SPD)),
    "inv": lambda L: L.linalg.inv(t(L, BSQ)),
    "inverse": lambda L: t(L, SQ).inverse(),
    "solve": lambda L: L.linalg.solve(t(L, SQ), t(L, RHS)),
    "solve_vector": lambda L: L.linalg.solve(t(L, SQ), t(L, VEC)),
    "solve_broadcast": lambda L: L.linalg.solve(t(L, BSQ), t(L, RHS)),
    "solve_batched_vector": lambda L: L.linalg.solve(t(L, BSQ), t(L, VEC)),
    "solve_right": lambda L: L.linalg.solve(t(L, SQ), t(L, RHS.T), left=False),
    "cholesky": lambda L: L.linalg.cholesky(t(L, SPD)),
    "cholesky_upper": lambda L: L.linalg.cholesky(t(L, SPD), upper=True),
    "solve_triangular": lambda L: L.linalg.solve_triangular(t(L, SQ), t(L, RHS), upper=True),
    "solve_triangular_lower_unit": lambda L: L.linalg.solve_triangular(t(L, BSQ), t(L, RHS), upper=False,
                                                                       unitriangular=True),
    "solve_triangular_right": lambda L: L.linalg.solve_triangular(t(L, SQ), t(L, RHS.T), upper=True, left=False),
    "qr": lambda L: tuple(L.linalg.qr(t(L, TALL))),
    "qr_wide": lambda L: tuple(L.linalg.qr(t(L, WIDE))),
    "qr_complete": lambda L: tuple(L.linalg.qr(t(L, TALL), mode="complete")),
    "qr_r": lambda L: L.linalg.qr(t(L, TALL), mode="r")[1],
    "svd": lambda L: tuple(L.linalg.svd(t(L, TALL), full_matrices=False)),
    "svd_full": lambda L: tuple(L.linalg.svd(t(L, WIDE))),
    "svd_batched": lambda L: tuple(L.linalg.svd(t(L, BSQ))),
    "svd_legacy": lambda L: tuple(L.svd(t(L, TALL))),
    "svd_legacy_no_uv": lambda L: tuple(L.svd(t(L, TALL), compute_uv=False)),
    "svdvals": lambda L: L.linalg.svdvals(t(L, WIDE)),
    "eigh": lambda L: tuple(L.linalg.eigh(t(L, SYM))),
    "eigh_upper": lambda L: tuple(L.linalg.eigh(t(L, SQ), UPLO="U")),
    "eigvalsh": lambda L: L.linalg.eigvalsh(t(L, SQ)),
    "pinv": lambda L: L.linalg.pinv(t(L, TALL)),
    "pinv_wide": lambda L: L.linalg.pinv(t(L, WIDE)),
    "pinv_rank_deficient": lambda L: L.linalg.pinv(t(L, [[1.0, 2], [2, 4]])),
    "pinv_hermitian": lambda L: L.linalg.pinv(t(L, SYM), hermitian=True),
    "pinv_atol": lambda L: L.linalg.pinv(t(L, TALL), atol=1.0),
    "pinverse": lambda L: L.pinverse(t(L, WIDE)),
    "matrix_rank": lambda L: L.linalg.matrix_rank(t(L, [[1.0, 2], [2, 4]])),
    "matrix_rank_hermitian": lambda L: L.linalg.matrix_rank(t(L, SYM), hermitian=True),
    "lstsq": lambda L: L.linalg.lstsq(t(L, TALL), t(L, RHS4)).solution,
    "cond": lambda L: L.linalg.cond(t(L, SQ)),
    "cond_fro": lambda L: L.linalg.cond(t(L, SQ), "fro"),
    "matrix_norm_nuc": lambda L: L.linalg.matrix_norm(t(L, BSQ), "nuc"),
    "matrix_norm_2_keepdim": lambda L: L.linalg.matrix_norm(t(L, BSQ), 2, dim=(0, 2), keepdim=True),
    "norm_nuc": lambda L: L.norm(t(L, SQ), "nuc"),
    "multi_dot": lambda L: L.linalg.multi_dot([t(L, VEC), t(L, SQ), t(L, RHS)]),
    "cholesky_solve": lambda L: L.cholesky_solve(t(L, RHS), L.linalg.cholesky(t(L, SPD))),
    "cholesky_inverse_upper": lambda L: L.cholesky_inverse(L.linalg.cholesky(t(L, SPD), upper=True), upper=True),
    "triangular_solve": lambda L: tuple(L.triangular_solve(t(L, RHS), t(L, SQ))),
    "matrix_power_negative": lambda L: L.linalg.matrix_power(t(L, SQ), -2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_pytorch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(CASES[name])


def _grads(lib, fn, inputs):
    xs = [t(lib, x, grad=True) for x in inputs]
    out = fn(lib, *xs)
    out = out if isinstance(out, (tuple, list)) else (out,)
    weights = np.random.default_rng(1)
    loss = sum((o * t(lib, weights.standard_normal(tuple(o.shape)))).sum() for o in out if o.is_floating_point())
    grads = lib.autograd.grad(loss, xs)
    return [o.grad_fn.name() if o.grad_fn else None for o in out], [g.tolist() for g in grads]


GRAD_CASES = {
    "det": (lambda L, a: L.linalg.det(a), [BSQ]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, [SQ]),
    "inv": (lambda L, a: L.linalg.inv(a), [SQ]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [BSQ, RHS]),
    "solve_vector": (lambda L, a, b: L.linalg.solve(a, b), [SQ, VEC]),
    "solve_right": (lambda L, a, b: L.linalg.solve(a, b, left=False), [SQ, RHS.T]),
    "cholesky": (lambda L, a: L.linalg.cholesky(a), [SPD]),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(a, upper=True), [SPD]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True), [SQ, RHS]),
    "solve_triangular_right_unit": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False,
                                                                              unitriangular=True), [SQ, RHS.T]),
    "qr": (lambda L, a: tuple(L.linalg.qr(a)), [TALL]),
    "qr_wide": (lambda L, a: tuple(L.linalg.qr(a)), [WIDE]),
    "svd": (lambda L, a: tuple(L.linalg.svd(a, full_matrices=False)), [TALL]),
    "svd_wide": (lambda L, a: tuple(L.linalg.svd(a, full_matrices=False)), [WIDE]),
    "svdvals": (lambda L, a: L.linalg.svdvals(a), [TALL]),
    "eigh": (lambda L, a: tuple(L.linalg.eigh(a)), [SYM]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), [SYM]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [TALL]),
    "pinv_wide": (lambda L, a: L.linalg.pinv(a), [WIDE]),
    "logdet": (lambda L, a: L.logdet(a @ a.mT), [SQ]),
    # graft's gradient keeps to the triangle the factor's solve reads; PyTorch's fills the other one
    # too (its formula takes the whole input2): through tril the two agree
    "cholesky_solve": (lambda L, b, a: L.cholesky_solve(b, a.tril()), [RHS, np.tril(SQ)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_and_nodes_match_pytorch(name):
    fn, inputs = GRAD_CASES[name]
    nodes_t, grads_t = _grads(torch, fn, inputs)
    nodes_g, grads_g = _grads(graft, fn, inputs)
    if name != "cholesky_solve":  # a composite in graft (LinalgSolveTriangularBackward0), its own node in PyTorch
        assert nodes_g == nodes_t
    for a, b in zip(grads_t, grads_g, strict=True):
        np.testing.assert_allclose(b, a, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("matrix", [[[1.0, 2], [2, 4]], [[0.0, 0], [0, 1]], [[1.0, 2, 3], [4, 5, 6], [7, 8, 9]]])
def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix(matrix):
    """The true derivative, which PyTorch gives under create_graph; without it PyTorch returns zeros
    for an exactly singular matrix (a documented difference)."""
    a = t(torch, matrix, grad=True)
    (expected,) = torch.autograd.grad(torch.linalg.det(a), a, create_graph=True)
    for create_graph in (False, True):
        b = t(graft, matrix, grad=True)
        (got,) = graft.autograd.grad(graft.linalg.det(b), b, create_graph=create_graph)
        np.testing.assert_allclose(got.tolist(), expected.tolist(), atol=1e-12)


def test_det_double_backward_matches_pytorch():
    def hessian_row(lib):
        a = t(lib, SQ, grad=True)
        (g,) = lib.autograd.grad(lib.linalg.det(a), a, create_graph=True)
        return lib.autograd.grad(g[0, 1], a)[0].tolist()
    np.testing.assert_allclose(hessian_row(graft), hessian_row(torch), atol=1e-9)


def test_results_are_column_major_and_named_as_pytorchs():
    for lib in (torch, graft):
        assert lib.linalg.cholesky(t(lib, SPD)).stride() == (1, 3)
        assert lib.linalg.inv(t(lib, BSQ)).stride() == (9, 1, 3)
        q, r = lib.linalg.qr(t(lib, TALL))
        assert (q.stride(), r.stride()) == ((1, 4), (1, 3))
        assert lib.linalg.svd(t(lib, TALL))[1].stride() == (1,)
        assert type(lib.linalg.svd(t(lib, TALL))).__name__ == "linalg_svd"
        for result, fields in ((lib.linalg.eigh(t(lib, SYM)), ("eigenvalues", "eigenvectors")),
                               (lib.linalg.slogdet(t(lib, SQ)), ("sign", "logabsdet")),
                               (lib.svd(t(lib, SQ)), ("U", "S", "V")), (lib.linalg.qr(t(lib, SQ)), ("Q", "R"))):
            assert all(getattr(result, f) is part for f, part in zip(fields, result, strict=True))


ERRORS = {
    "inv_singular": (lambda L: L.linalg.inv(t(L, np.zeros((3, 3)))), "LinAlgError",
                     "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the "
                     "input matrix is singular."),
    "inv_singular_batch": (lambda L: L.linalg.inv(t(L, np.stack([np.eye(2), np.zeros((2, 2))]))), "LinAlgError",
                           "linalg.inv: (Batch element 1): The diagonal element 1 is zero, the inversion could not be "
                           "completed because the input matrix is singular."),
    "solve_singular": (lambda L: L.linalg.solve(t(L, np.zeros((3, 3))), t(L, VEC)), "LinAlgError",
                       "torch.linalg.solve: The solver failed because the input matrix is singular."),
    "cholesky_not_pd": (lambda L: L.linalg.cholesky(-t(L, np.eye(3))), "LinAlgError",
                        "linalg.cholesky: The factorization could not be completed because the input is not "
                        "positive-definite (the leading minor of order 1 is not positive-definite)."),
    "det_not_square": (lambda L: L.linalg.det(t(L, TALL)), "RuntimeError",
                       "linalg.det: A must be batches of square matrices, but they are 4 by 3 matrices"),
    "det_vector": (lambda L: L.linalg.det(t(L, VEC)), "RuntimeError",
                   "linalg.det: The input tensor A must have at least 2 dimensions."),
    "solve_shapes": (lambda L: L.linalg.solve(t(L, SQ), t(L, np.ones(4))), "RuntimeError",
                     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x1)"),
    "solve_dtypes": (lambda L: L.linalg.solve(t(L, SQ).float(), t(L, RHS)), "RuntimeError",
                     "linalg.solve: Expected A and B to have the same dtype, but found A of type Float and B of type "
                     "Double instead"),
    "solve_triangular_shapes": (lambda L: L.linalg.solve_triangular(t(L, SQ), t(L, RHS), upper=True, left=False),
                                "RuntimeError", "linalg.solve_triangular: Incompatible shapes of A and B for the "
                                "equation XA = B (3x3 and 3x2)"),
    "qr_mode": (lambda L: L.linalg.qr(t(L, SQ), mode="x"), "RuntimeError",
                "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'"),
    "eigh_uplo": (lambda L: L.linalg.eigh(t(L, SQ), UPLO="X"), "RuntimeError",
                  "Expected UPLO argument to be 'L' or 'U', but got X"),
    "pinv_vector": (lambda L: L.linalg.pinv(t(L, VEC).float()), "RuntimeError",
                    "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, double, cfloat or "
                    "cdouble types"),
    "qr_r_backward": (lambda L: L.linalg.qr(t(L, SQ, grad=True), mode="r")[1].sum().backward(), "RuntimeError",
                      "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                      "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr."),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    fn, kind, text = ERRORS[name]
    for lib in (torch, graft):
        with pytest.raises(RuntimeError) as info:
            fn(lib)
        assert str(info.value) == text
        assert kind == "RuntimeError" or isinstance(info.value, lib.linalg.LinAlgError)


# PyTorch 2.x refuses integer and 16-bit matrices with NotImplementedError (1.13: RuntimeError)
DTYPE_ERRORS = {
    "det_long": (lambda: graft.linalg.det(graft.ones(2, 2, dtype=graft.int64)),
                 "linalg.det: Expected a floating point or complex tensor as input. Got Long"),
    "det_half": (lambda: graft.linalg.det(graft.ones(2, 2, dtype=graft.float16)),
                 "\"lu_cpu\" not implemented for 'Half'"),
    "inv_half": (lambda: graft.linalg.inv(graft.ones(2, 2, dtype=graft.float16)),
                 "linalg.inv: Low precision dtypes not supported. Got Half"),
    "eigh_long": (lambda: graft.linalg.eigh(graft.ones(2, 2, dtype=graft.int64)),
                  "\"linalg_eigh_cpu\" not implemented for 'Long'"),
    "svd_half": (lambda: graft.linalg.svd(graft.ones(2, 2, dtype=graft.float16)),
                 "\"linalg_svd_cpu\" not implemented for 'Half'"),
    "solve_triangular_long": (lambda: graft.linalg.solve_triangular(graft.ones(2, 2, dtype=graft.int64),
                                                                    graft.ones(2, 1, dtype=graft.int64), upper=True),
                              "\"triangular_solve_cpu\" not implemented for 'Long'"),
}


@pytest.mark.parametrize("name", sorted(DTYPE_ERRORS))
def test_dtype_refusals_are_pytorch_2s(name):
    fn, text = DTYPE_ERRORS[name]
    with pytest.raises(NotImplementedError) as info:
        fn()
    assert str(info.value) == text


def test_removed_and_deprecated_legacy_functions_behave_as_pytorch_2s():
    with pytest.raises(RuntimeError, match="This function was deprecated since version 1.9 and is now removed. "
                                           "`torch.cholesky`"):
        graft.cholesky(graft.eye(2))
    with pytest.raises(RuntimeError, match="Since `some` was set to False, use mode='complete'."):
        graft.eye(2).qr(False)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        import importlib
        importlib.import_module("graft._composites.linalg")._warned.clear()
        graft.triangular_solve(graft.ones(2, 1), graft.eye(2))


def test_linalg_error_is_a_runtime_error_named_as_pytorchs():
    assert issubclass(graft.linalg.LinAlgError, RuntimeError)
    assert graft.linalg.LinAlgError.__name__ == "LinAlgError"

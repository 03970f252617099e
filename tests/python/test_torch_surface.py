"""The parts of PyTorch's Python surface that programs touch without computing with them:
torch.jit, torch.onnx, torch.compile, torch.backends and RNN.flatten_parameters. graft has no
compiler, exporter or accelerator library: what would need one raises NotImplementedError, the
rest behaves as PyTorch's on a CPU-only build (torch 1.13 as the reference where it has the
name; PyTorch 2.x where 1.13 differs or lacks it)."""
import importlib
import re
import subprocess
import sys
import warnings

import pytest

torch = pytest.importorskip("torch", reason="parity tier: PyTorch (Debian python3-torch) is not installed")

import graft  # noqa: E402
import graft._compile  # noqa: E402
import graft.backends.cudnn as cudnn  # noqa: E402  (the import form PyTorch programs use)
import graft.jit  # noqa: E402
import graft.onnx  # noqa: E402


def test_jit_and_onnx_import_as_submodules():
    assert importlib.import_module("graft.jit") is graft.jit and importlib.import_module("graft.onnx") is graft.onnx
    from graft.jit import script
    from graft.onnx import export
    assert script is graft.jit.script and export is graft.onnx.export


def test_submodules_import_under_the_torch_alias():
    # a separate process: graft._as_torch.install() takes the name `torch` from PyTorch
    script = (
        "import graft._as_torch\n"
        "graft._as_torch.install()\n"
        "import torch, torch.onnx, torch.jit\n"
        "import torch.backends.cudnn as cudnn\n"
        "from torch.backends.cuda import matmul\n"
        "cudnn.benchmark = True\n"
        "assert torch.backends.cudnn.benchmark is True and matmul.allow_tf32 is False\n"
        "assert not torch.onnx.is_in_onnx_export() and not torch.jit.is_scripting()\n"
        "print(torch.__name__, cudnn.__name__, torch.LongTensor([1]).type())\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["graft", "graft.backends.cudnn", "torch.LongTensor"]


@pytest.mark.parametrize("name,call", [
    ("script", lambda jit: jit.script(graft.nn.Linear(2, 2))),
    ("trace", lambda jit: jit.trace(graft.nn.Linear(2, 2), graft.zeros(1, 2))),
    ("trace_module", lambda jit: jit.trace_module(graft.nn.Linear(2, 2), {"forward": graft.zeros(1, 2)})),
    ("save", lambda jit: jit.save(graft.nn.Linear(2, 2), "m.pt")),
    ("load", lambda jit: jit.load("m.pt")),
    ("freeze", lambda jit: jit.freeze(graft.nn.Linear(2, 2))),
    ("optimize_for_inference", lambda jit: jit.optimize_for_inference(graft.nn.Linear(2, 2))),
    ("ScriptModule", lambda jit: jit.ScriptModule()),
])
def test_jit_compiling_functions_raise_a_clear_error(name, call):
    with pytest.raises(NotImplementedError, match=f"^graft does not implement torch\\.jit\\.{name}: TorchScript "):
        call(graft.jit)


def test_jit_decorators_are_no_ops_outside_scripting():
    def f(x):
        return x + 1

    for decorate in (graft.jit.ignore, graft.jit.ignore(), graft.jit.ignore(drop=False), graft.jit.unused,
                     graft.jit.export, graft.jit.script_if_tracing):
        assert decorate(f) is f
    prop = property(lambda self: 1)
    assert graft.jit.unused(prop) is prop

    class M(graft.nn.Module):
        @graft.jit.export
        def helper(self, x):
            return x * 2

        @graft.jit.ignore
        def debug(self, x):
            return x

        def forward(self, x):
            return self.debug(self.helper(x))

    assert M()(graft.ones(2)).tolist() == [2.0, 2.0]
    for lib in (torch, graft):
        with pytest.raises(RuntimeError, match="^Argument to @torch.jit.ignore must be a bool or a function but got x"):
            lib.jit.ignore("x")
    assert graft.jit.is_scripting() is torch.jit.is_scripting() is False
    assert graft.jit.is_tracing() is torch.jit.is_tracing() is False
    assert graft.jit.annotate(list, [1]) == [1]
    assert not isinstance(graft.nn.Linear(1, 1), graft.jit.ScriptModule)
    assert not isinstance(f, graft.jit.ScriptFunction)

    class WithFinal(graft.nn.Module):  # annotations are evaluated: torch.jit.Final must exist
        scale: graft.jit.Final[int]

    assert WithFinal.__annotations__["scale"] == graft.jit.Final[int]


def test_onnx():
    with pytest.raises(NotImplementedError, match="^graft does not implement torch.onnx.export: "):
        graft.onnx.export(graft.nn.Linear(2, 2), (graft.zeros(1, 2),), "m.onnx")
    assert graft.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False


@pytest.fixture
def fresh_compile_warning(monkeypatch):
    monkeypatch.setattr(graft._compile, "_warned", False)


def test_compile_returns_its_argument_and_warns_once(fresh_compile_warning):
    model = graft.nn.Linear(3, 2)
    with pytest.warns(UserWarning, match="^graft.compile: graft has no graph compiler; the model or function is "
                                         "returned unchanged and runs eagerly$"):
        assert graft.compile(model) is model
    x = graft.ones(1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process: no second warning
        assert graft.compile(model, mode="max-autotune", fullgraph=True, dynamic=False) is model

        @graft.compile
        def f(x):
            return x * 2

        @graft.compile(mode="reduce-overhead")
        def g(x):
            return x + 1

    assert f(x).tolist() == [[2.0, 2.0, 2.0]] and g(x).tolist() == [[2.0, 2.0, 2.0]]
    assert f.__name__ == "f" and g.__name__ == "g"


def test_compile_argument_errors(fresh_compile_warning):
    with pytest.raises(RuntimeError, match="^Either mode or options can be specified, but both can't be specified at "
                                           "the same time.$"):
        graft.compile(lambda x: x, mode="default", options={})
    with pytest.raises(RuntimeError, match="^Model can't be None$"):
        graft.compile()(None)
    with pytest.raises(AssertionError, match="^A callable function is expected, but <class 'int'> is provided.$"):
        graft.compile(123)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        graft.compile(lambda x: x, disable=True)  # disabled: nothing to say


def test_backends_defaults_match_a_cpu_build_of_pytorch():
    assert graft.backends.cudnn is cudnn
    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cudnn, name) is getattr(torch.backends.cudnn, name), name
    assert cudnn.is_available() is torch.backends.cudnn.is_available() is False
    assert cudnn.version() is torch.backends.cudnn.version() is None
    assert cudnn.benchmark_limit is None and cudnn.is_acceptable(graft.zeros(1)) is False
    matmul = graft.backends.cuda.matmul
    assert matmul.allow_tf32 is torch.backends.cuda.matmul.allow_tf32 is False
    assert matmul.allow_fp16_reduced_precision_reduction is True
    assert torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction is True
    assert matmul.allow_bf16_reduced_precision_reduction is True  # PyTorch 2.x's flag
    assert graft.backends.cuda.is_built() is torch.backends.cuda.is_built() is False
    assert graft.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert graft.backends.mps.is_built() is torch.backends.mps.is_built() is False
    # graft uses none of these libraries (PyTorch's answer depends on how it was built)
    assert graft.backends.mkldnn.is_available() is False and graft.backends.mkldnn.enabled is True
    assert graft.backends.mkl.is_available() is False and graft.backends.openmp.is_available() is False
    assert graft.backends.opt_einsum.is_available() is False and graft.backends.opt_einsum.get_opt_einsum() is None
    assert graft.backends.opt_einsum.enabled is False and graft.backends.opt_einsum.strategy is None


def test_backend_flags_can_be_set_and_restored():
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        assert graft.backends.cudnn.benchmark is True and graft.backends.cudnn.deterministic is True
        with cudnn.flags(enabled=False):
            assert cudnn.enabled is False and cudnn.benchmark is False and cudnn.allow_tf32 is True
        assert cudnn.enabled is True and cudnn.benchmark is True
        graft.backends.cuda.matmul.allow_tf32 = True
        assert graft.backends.cuda.matmul.allow_tf32 is True
        graft.backends.mkldnn.enabled = False
        with graft.backends.mkldnn.flags(enabled=True):
            assert graft.backends.mkldnn.enabled is True
        assert graft.backends.mkldnn.enabled is False
    finally:
        cudnn.benchmark = cudnn.deterministic = False
        graft.backends.cuda.matmul.allow_tf32 = False
        graft.backends.mkldnn.enabled = True


def test_backend_flag_errors():
    for lib in (torch, graft):
        with pytest.raises(RuntimeError, match="^set_benchmark_cudnn expects a bool, but got int$"):
            lib.backends.cudnn.benchmark = 1
        with pytest.raises(RuntimeError, match="^set_allow_tf32_cublas expects a bool, but got int$"):
            lib.backends.cuda.matmul.allow_tf32 = 1
    assert cudnn.benchmark is False
    # PyTorch 2.x: AttributeError (1.13 raised AssertionError), so hasattr() works
    with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
        graft.backends.cuda.matmul.foo
    with pytest.raises(AttributeError, match="^Unknown attribute foo$"):
        graft.backends.cuda.matmul.foo = True
    assert not hasattr(graft.backends.cuda.matmul, "foo")
    with pytest.raises(ValueError, match=re.escape("opt_einsum is not available, so setting `enabled` to True will "
                                                   "not reap the benefits")):
        graft.backends.opt_einsum.enabled = True
    with pytest.raises(ValueError, match=re.escape("opt_einsum is not available, so setting `strategy` to auto")):
        graft.backends.opt_einsum.strategy = "auto"
    graft.backends.opt_einsum.enabled = False
    assert graft.backends.opt_einsum.enabled is False


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_rnn_flatten_parameters_is_a_no_op(name):
    graft.manual_seed(0)
    rnn = getattr(graft.nn, name)(3, 4, num_layers=2, bidirectional=True)
    assert hasattr(getattr(torch.nn, name), "flatten_parameters")
    x = graft.randn(5, 2, 3)
    before = rnn(x)[0]
    params = [(p, p.data_ptr(), p.clone()) for p in rnn.parameters()]
    assert rnn.flatten_parameters() is None
    assert all(q is p and q.data_ptr() == ptr and graft.equal(q, copy)
               for (p, ptr, copy), q in zip(params, rnn.parameters()))
    assert graft.equal(rnn(x)[0], before)

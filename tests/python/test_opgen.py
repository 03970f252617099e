"""The op generator (tools/opgen/gen_ops.py): what it refuses in a declaration, what a node
saves, and that an unchanged declaration rewrites no file (so it rebuilds nothing)."""
import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("yaml", reason="the op generator needs PyYAML (Debian's python3-yaml)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
GEN = ROOT / "tools" / "opgen" / "gen_ops.py"

TANH = """
  - name: tanh
    doc: Hyperbolic tangent.
    kernel: std::tanh(x)
    derivative: grad * (1 - result * result)
    node: TanhBackward0
    reference: std::tanh(x)
    domain: Any
"""
SIN = """
  - name: sin
    doc: Sine.
    kernel: std::sin(x)
    derivative: grad * cos(self)
    node: SinBackward0
    reference: std::sin(x)
    domain: Any
"""


def run(tmp_path, text):
    decl = tmp_path / "ops.yaml"
    decl.write_text(text)
    return subprocess.run([sys.executable, str(GEN), "--decl", str(decl), "--out", str(tmp_path / "gen")],
                          capture_output=True, text=True)


def assert_refused(tmp_path, text, message):
    """The generator refuses the declaration `text`, saying `message`."""
    r = run(tmp_path, text)
    assert r.returncode != 0
    assert message in r.stderr


def test_a_node_saves_exactly_what_its_formula_names(tmp_path):
    r = run(tmp_path, "unary_float:" + TANH + SIN)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    tanh_node = code[code.index("struct TanhBackward0"):code.index("struct SinBackward0")]
    sin_node = code[code.index("struct SinBackward0"):code.index("}  // namespace\n")]
    assert "SavedVariable result_;" in tanh_node and "self_" not in tanh_node
    assert "SavedVariable self_;" in sin_node and "result_" not in sin_node
    assert 'v.saved(self_, "self");' in sin_node and "self_.reset_data();" in sin_node
    assert "return {grad * cos(self)};" in sin_node
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "Tensor tanh(const Tensor& self);" in header and "Tensor& sin_(Tensor& self);" in header
    rows = (tmp_path / "gen/include/graft/ops/unary_float_ops.def").read_text()
    assert "GRAFT_UNARY_FLOAT_OP(tanh)\nGRAFT_UNARY_FLOAT_OP(sin)" in rows


def test_an_unchanged_declaration_rewrites_no_file(tmp_path):
    assert run(tmp_path, "unary_float:" + TANH).returncode == 0
    files = sorted(p for p in (tmp_path / "gen").rglob("*") if p.is_file())
    before = {p: p.stat().st_mtime_ns for p in files}
    for p in files:
        os.utime(p, ns=(1, 1))  # so a rewrite would show
    assert run(tmp_path, "unary_float:" + TANH).returncode == 0
    assert all(p.stat().st_mtime_ns == 1 for p in files), before
    assert run(tmp_path, "unary_float:" + TANH + SIN).returncode == 0  # a new op rewrites
    assert (tmp_path / "gen/src/autograd/generated_functions.cpp").stat().st_mtime_ns != 1


@pytest.mark.parametrize("text, message", [
    ("unary_float:" + TANH.replace("    domain: Any\n", ""), "unary_float op 'tanh' lacks ['domain']"),
    ("unary_float:" + TANH + TANH, "op 'tanh' is declared twice"),
    ("unary_float:" + TANH.replace("grad * (1", "(1"), "op 'tanh': the derivative does not use grad"),
    ("unary_float:" + TANH.replace("domain: Any", "domain: Everywhere"), "domain 'Everywhere' is not one of"),
    ("unary_float:" + TANH + "    colour: red\n", "unary_float op 'tanh' has unknown fields ['colour']"),
    ("binary_magic:" + TANH, "unknown op families ['binary_magic']"),
])
def test_a_bad_declaration_is_refused_with_a_reason(tmp_path, text, message):
    assert_refused(tmp_path, text, message)


DIST = """
  - name: dist
    doc: The p-norm of self - other.
    args: [const Tensor& self, const Tensor& other, double p = 2.0]
    defined_in: reduce.cpp
    differentiable: true
    method: true
    python: both
"""
LOGSUMEXP = """
  - name: logsumexp
    doc: log(sum(exp(self))) over dim.
    args: [const Tensor& self, IntArrayRef dim, bool keepdim = false]
    forward_in: reduce.cpp
    derivatives:
      self: logsumexp_backward(grad, self, result, dim, keepdim)
    node: LogsumexpBackward0
    method: true
    python: torch
"""


def test_python_bindings_follow_the_declaration(tmp_path):
    r = run(tmp_path, "composite:" + DIST + "function:" + LOGSUMEXP)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    # python: both -> graft.dist and Tensor.dist through the argument parser, from the op's
    # PyTorch-style signature (the C++ names and defaults; self is `input`)
    assert '{"dist", "both", {"dist(Tensor input, Tensor other, float p=2.0)"}, &parsed_dist},' in bindings
    assert "py::object parsed_dist(const ParsedArgs& p, const Tensor* self) {" in bindings
    # the method's self, or the function's first argument, parsed as the others are
    assert "const auto a_self = self ? *self : p.tensor(0);" in bindings
    assert "const auto a_p = p.float64(o + 1);" in bindings
    # python: torch -> graft.logsumexp only; an IntArrayRef is PyTorch's int[1] (an int or a sequence)
    assert '{"logsumexp", "torch", {"logsumexp(Tensor input, int[1] dim, bool keepdim=False)"}, &parsed_logsumexp},' \
        in bindings
    assert "return graft::logsumexp(a_self, a_dim, a_keepdim);" in bindings
    assert bindings.index('{"logsumexp", ') < bindings.index('{"dist", ')  # functions first
    # a composite op: declared and a method, with no node
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "Tensor dist(const Tensor& self, const Tensor& other, double p = 2.0);" in header
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    assert "Tensor Tensor::dist(const Tensor& other, double p) const { return graft::dist(*this, other, p); }" in code
    assert "DistBackward" not in code
    rows = (tmp_path / "gen/include/graft/ops/composite_ops.def").read_text()
    assert "GRAFT_COMPOSITE_OP(dist, Differentiable)" in rows
    # python: none (C++ only) and hand bind nothing here
    for py in ("none", "hand\n    hand: a reason"):
        r = run(tmp_path, "composite:" + DIST.replace("python: both", f"python: {py}"))
        assert r.returncode == 0, r.stderr
        assert "dist" not in (tmp_path / "gen/python/op_bindings.inc").read_text()


SUM = """
  - name: sum
    overload: all
    doc: Sum of all elements.
    args: [const Tensor& self, "*", std::optional<DType> dtype = std::nullopt]
    forward_in: reduce.cpp
    derivatives:
      self: grad.expand(self_sizes)
    node: SumBackward0
    method: true
    python: both

  - name: sum
    overload: dim
    doc: Sum over dims.
    args: [const Tensor& self, IntArrayRef dim, bool keepdim = false, "*", std::optional<DType> dtype = std::nullopt]
    forward_in: reduce.cpp
    derivatives:
      self: sum_backward(grad, self_sizes, dim, keepdim)
    node: SumBackward1
    method: true
    python: both
"""
CONVOLUTION = """
  - name: conv
    doc: A convolution.
    args: [const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
           Reduction reduction = Reduction::Mean, const Tensor& scale = Tensor()]
    defined_in: conv.cpp
    differentiable: true
    method: false
    python: torch
    python_none: [bias]
    python_sequences: [stride]
"""


def test_python_defaults_give_an_overload_defaults_that_cpp_cannot_have(tmp_path):
    padded = CONVOLUTION.replace("    python_none: [bias]\n", "    overload: padding\n    python_none: [bias]\n").replace(
        "IntArrayRef padding", "std::string_view padding") + \
        "    python_defaults: {bias: \"Tensor()\", stride: \"{1}\", padding: '\"valid\"'}\n"
    numbers = CONVOLUTION.replace("    python_none: [bias]\n", "    overload: default\n    python_none: [bias]\n")
    r = run(tmp_path, "composite:" + numbers + padded)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    assert ('"conv(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=[1], str padding=\'valid\', '
            'str reduction=\'mean\', Tensor? scale=None)"') in bindings
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "IntArrayRef stride, std::string_view padding, Reduction reduction = Reduction::Mean," in header
    for bad, message in ((padded.replace("stride: \"{1}\"", "strides: \"{1}\""), "python_defaults maps arguments"),
                         (padded.replace("python: torch", "python: none").replace("    python_none: [bias]\n", "")
                          .replace("    python_sequences: [stride]\n", ""),
                          "python_defaults maps arguments"),
                         (padded.replace("'\"valid\"'", "'valid()'"), "the default 'valid()' has no Python spelling")):
        assert_refused(tmp_path, "composite:" + numbers + bad, message)


def test_overloads_are_bound_once_with_their_signatures_in_order(tmp_path):
    r = run(tmp_path, "function:" + SUM)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    # one binding, the overloads tried in declaration order; `*` makes dtype keyword-only in
    # Python, and C++ never sees it
    assert ('{"sum", "both", {"sum(Tensor input, *, ScalarType? dtype=None)", '
            '"sum(Tensor input, int[1] dim, bool keepdim=False, *, ScalarType? dtype=None)"}, &parsed_sum},') in bindings
    assert "case 0: {" in bindings and "case 1: {" in bindings
    assert "return graft::sum(a_self, a_dim, a_keepdim, a_dtype);" in bindings
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert ("Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false, "
            "std::optional<DType> dtype = std::nullopt);") in header
    r = run(tmp_path, "function:" + SUM.replace("python: both", "python: method", 1))
    assert "its overloads are bound alike" in r.stderr


def test_none_sequences_and_reduction_strings_are_declared(tmp_path):
    r = run(tmp_path, "composite:" + CONVOLUTION)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    # python_none and a Tensor() default are Tensor? (None: an undefined Tensor); python_sequences
    # are int[] (a single int refused); a Reduction is PyTorch's string
    assert ('"conv(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[1] padding, str reduction=\'mean\', '
            'Tensor? scale=None)"') in bindings
    # (a function's only overload: no self, every argument at its own place)
    assert "const auto a_bias = p.optional_tensor(2);" in bindings
    assert "const auto a_reduction = reduction_from_string(p.string(5));" in bindings
    assert "(a_bias.defined() && is_heavy(a_bias))" in bindings
    r = run(tmp_path, "composite:" + CONVOLUTION.replace("python: torch", "python: method"))
    assert "python 'method' binds Tensor.conv, so it takes a 'const Tensor& self'" in r.stderr


@pytest.mark.parametrize("text, message", [
    ("composite:" + DIST.replace("python: both", "python: hand"), "python: hand needs `hand:`"),
    ("composite:" + DIST.replace("python: both", "python: hand\n    hand: ''"), "python: hand needs `hand:`"),
    ("composite:" + DIST + "    hand: a reason\n", "`hand:` gives the reason for python: hand, and python is both"),
    ("composite:" + DIST.replace("python: both", "python: everywhere"), "python must be one of"),
    ("composite:" + DIST.replace("method: true", "method: false").replace("Tensor& self", "Tensor& input"),
     "python 'both' binds Tensor.dist, so it takes a 'const Tensor& self'"),
    ("composite:" + DIST.replace("double p = 2.0", "Device p"), "has no generated Python binding"),
    ("composite:" + DIST.replace("python: both", "python: both\n    python_none: [p]"), "python_none names const Tensor&"),
    ("composite:" + DIST.replace("python: both", "python: both\n    python_sequences: [other]"),
     "python_sequences names IntArrayRef"),
    ("composite:" + DIST.replace("const Tensor& self,", "const Tensor& a,"), "a method's first argument"),
    ("function:" + LOGSUMEXP.replace("    python: torch\n", ""), "function op 'logsumexp' lacks ['python']"),
])
def test_a_bad_binding_declaration_is_refused(tmp_path, text, message):
    assert_refused(tmp_path, text, message)


MUL = """
  - name: mul
    overload: Tensor
    doc: self * other.
    args: [const Tensor& self, const Tensor& other]
    forward_in: elementwise.cpp
    derivatives:
      self: grad * other
      other: grad * self
    node: MulBackward0
    method: true
    python: hand
    hand: the test says why
"""
MUL_SCALAR = """
  - name: mul
    overload: Scalar
    doc: self * other for a number other.
    args: [const Tensor& self, const Scalar& other]
    forward_in: elementwise.cpp
    derivatives:
      self: grad * other
      other: ~
    node: MulBackward0
    method: true
    python: hand
    hand: the test says why
"""
RSUB = """
  - name: sub
    overload: Scalar_Tensor
    doc: self - alpha * other for a number self.
    args: [const Scalar& self, const Tensor& other, const Scalar& alpha = 1]
    forward_in: elementwise.cpp
    derivatives:
      other: neg(maybe_multiply(grad, alpha))
    node: RsubBackward1
    method: false
    python: hand
    hand: the test says why
"""


def test_a_number_self_overload_is_the_functions_and_a_hidden_one_is_never_named(tmp_path):
    both = "python: hand\n    hand: the test says why"
    rsub_first = RSUB.replace("name: sub", "name: mul").replace(", const Scalar& alpha = 1]", "]").replace(
        "neg(maybe_multiply(grad, alpha))", "neg(grad)")
    text = ("function:" + MUL.replace(both, "python: both") + MUL_SCALAR.replace(both, "python: both\n    python_hidden: true")
            + rsub_first.replace(both, "python: both"))
    r = run(tmp_path, text)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    # PyTorch's order (a number self before a number elsewhere); a number self keeps its name
    # (the method's parser leaves that overload out); "[hidden] " keeps one out of TypeErrors
    assert ('{"mul", "both", {"mul(Tensor input, Tensor other)", "mul(Scalar self, Tensor other)", '
            '"[hidden] mul(Tensor input, Scalar other)"}, &parsed_mul},') in bindings
    assert "const auto a_self = p.scalar(0);" in bindings
    for bad, message in ((text.replace("python_hidden: true", "python_hidden: 1"), "python_hidden is true"),
                         (text.replace("method: false\n    python: both", "method: false\n    python: method"),
                          "binds Tensor.mul, so it takes a 'const Tensor& self'")):
        assert_refused(tmp_path, bad, message)


def test_overloads_are_one_op_with_a_node_each(tmp_path):
    r = run(tmp_path, "function:" + MUL + MUL_SCALAR + RSUB)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "Tensor mul(const Tensor& self, const Tensor& other);" in header
    assert "Tensor mul(const Tensor& self, const Scalar& other);" in header
    assert "Tensor sub(const Scalar& self, const Tensor& other, const Scalar& alpha = 1);" in header
    rows = (tmp_path / "gen/include/graft/ops/function_ops.def").read_text()
    assert rows.count("GRAFT_FUNCTION_OP(mul)") == 1 and "GRAFT_FUNCTION_OP(sub)" in rows
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    # one node name shown by both overloads: a struct each, both named MulBackward0
    assert "struct MulBackward0_Tensor final" in code and "struct MulBackward0_Scalar final" in code
    assert code.count('return "MulBackward0";') == 2
    # the wrapped number: an empty edge, saved as PyTorch's 0-d tensor because the formula names it
    scalar_fn = code[code.index("Tensor mul(const Tensor& self, const Scalar& other) {"):]
    scalar_fn = scalar_fn[:scalar_fn.index("\n}\n")]
    assert "autograd::any_requires_grad({&self})" in scalar_fn
    assert "make_node<MulBackward0_Scalar>({&self, &no_edge})" in scalar_fn
    assert "SavedVariable(detail::wrapped_number(other, self.device()), false)" in scalar_fn
    # a number before the tensor: no edge for it, kept as a number only when a formula names it
    rsub = code[code.index("struct RsubBackward1"):]
    rsub = rsub[:rsub.index("\n};")]
    assert "Scalar alpha_{};" in rsub and "self_" not in rsub
    assert "make_node<RsubBackward1>({&other})" in code
    # no method for it (self is not a tensor); methods for the others
    assert "Tensor Tensor::mul(const Scalar& other) const { return graft::mul(*this, other); }" in code
    assert "Tensor::sub(" not in code


@pytest.mark.parametrize("text, message", [
    ("function:" + MUL + MUL, "op 'mul' is declared twice"),
    ("function:" + MUL + MUL_SCALAR.replace("    overload: Scalar\n", ""), "op 'mul' is declared twice"),
    ("function:" + MUL + "composite:" + DIST.replace("name: dist", "name: mul"), "op 'mul' is declared twice"),
    ("function:" + MUL + "unary_float:" + TANH.replace("name: tanh", "name: mul"), "declared in one family"),
    ("function:" + MUL_SCALAR.replace("other: ~", "other: grad"), "the number 'other' gets no gradient"),
    ("function:" + MUL.replace("other: grad * self", "other: ~"), "the derivative for other is missing"),
    ("function:" + RSUB.replace("method: false", "method: true"), "a method's first argument"),
])
def test_a_bad_overload_is_refused(tmp_path, text, message):
    assert_refused(tmp_path, text, message)


WHERE = """
  - name: where
    overload: self
    doc: self where condition, other elsewhere.
    args: [const Tensor& condition, const Tensor& self, const Tensor& other]
    forward_in: elementwise.cpp
    derivatives:
      self: where(condition, grad, 0)
      other: where(condition, 0, grad)
    node: WhereBackward0
    method: false
    python: both
"""
WHERE_CONDITION = """
  - name: where
    overload: condition
    returns: TensorList
    doc: The indices where condition holds.
    args: [const Tensor& condition]
    defined_in: indexing.cpp
    differentiable: false
    method: false
    python: both
    python_first: true
"""


def test_the_methods_tensor_is_the_argument_named_self_wherever_it_stands(tmp_path):
    # Tensor.where(condition, other): self is where's second argument; an overload without a
    # tensor self is the function's only; python_first lists and tries one first
    r = run(tmp_path, "function:" + WHERE + "composite:" + WHERE_CONDITION)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    assert ('{"where", "both", {"where(Tensor condition)", '
            '"where(Tensor condition, Tensor input, Tensor other)"}, &parsed_where}') in bindings
    assert "const auto a_condition = p.tensor(0);" in bindings
    assert "const auto a_self = self ? *self : p.tensor(1);" in bindings
    assert "const auto a_other = p.tensor(o + 1);" in bindings
    assert_refused(tmp_path, "function:" + WHERE + "composite:" + WHERE_CONDITION.replace(
        "python_first: true", "python_first: 1"), "python_first is true")


def test_a_function_op_takes_composite_overloads_bound_with_it(tmp_path):
    # PyTorch's max(input, other) is maximum: a composite overload beside the function ones,
    # one Python binding for all (the function's overloads first)
    other = DIST.replace("name: dist", "name: mul").replace("    doc:", "    overload: Other\n    doc:")
    r = run(tmp_path, "function:" + MUL.replace("python: hand\n    hand: the test says why", "python: both")
            + "composite:" + other)
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    assert ('{"mul", "both", {"mul(Tensor input, Tensor other)", '
            '"mul(Tensor input, Tensor other, float p=2.0)"}, &parsed_mul}') in bindings
    assert "Tensor mul(const Tensor& self, const Tensor& other, double p = 2.0);" in \
        (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    # one op-table row: the function's
    assert "GRAFT_COMPOSITE_OP(mul" not in (tmp_path / "gen/include/graft/ops/composite_ops.def").read_text()
    assert "GRAFT_FUNCTION_OP(mul)" in (tmp_path / "gen/include/graft/ops/function_ops.def").read_text()


def test_a_python_only_overload_is_bound_but_not_declared_for_cpp(tmp_path):
    # PyTorch's var(bool unbiased): in C++ it would take var(x, {1}) (a braced 1 converts to bool),
    # so it is graft::detail::mul_Flag, with no Tensor method, and the binding calls that
    flag = DIST.replace("name: dist", "name: mul").replace("    doc:", "    overload: Flag\n    doc:").replace(
        "const Tensor& other, double p = 2.0", "bool flag").replace("python: both", "python: both\n    python_only: true")
    r = run(tmp_path, "function:" + MUL.replace("python: hand\n    hand: the test says why", "python: both")
            + "composite:" + flag)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "namespace detail {\n/// The p-norm of self - other.\nTensor mul_Flag(const Tensor& self, bool flag);" in header
    assert "Tensor mul(const Tensor& self, bool flag)" not in header
    assert "bool flag" not in (tmp_path / "gen/include/graft/core/tensor_generated_methods.inc").read_text()
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    assert "graft::detail::mul_Flag(a_self, a_flag)" in bindings and '"mul(Tensor input, bool flag)"' in bindings
    assert_refused(tmp_path, "composite:" + DIST.replace("python: both", "python: both\n    python_only: true"),
                   "python_only is true (an overload of a generated binding, no in-place form) or left out")


LT = """
  - name: lt
    doc: Whether self < other, elementwise.
    scalar: true
    operator: '<'
    kernel: x < y
    reference: x < y
"""


def test_a_comparison_declares_its_operator(tmp_path):
    r = run(tmp_path, "binary_predicate:" + LT)
    assert r.returncode == 0, r.stderr
    operators = (tmp_path / "gen/include/graft/core/tensor_generated_operators.inc").read_text()
    assert "Tensor operator<(const Tensor& self, const Tensor& other);" in operators
    assert "Tensor operator<(const Tensor& self, const Scalar& other);" in operators
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    assert "Tensor operator<(const Tensor& self, const Scalar& other) { return lt(self, other); }" in code
    for bad in (LT.replace("'<'", "'<=>'"), LT.replace("scalar: true", "scalar: false")):
        assert_refused(tmp_path, "binary_predicate:" + bad, "operator must be one of")


TRANSPOSE = """
  - name: transpose
    view: true
    doc: self with dims dim0 and dim1 swapped.
    args: [const Tensor& self, int64_t dim0, int64_t dim1]
    forward_in: views.cpp
    derivatives:
      self: grad.transpose(dim0, dim1)
    node: TransposeBackward0
    method: true
    python: hand
    hand: the test says why
"""


def test_a_view_is_made_from_its_geometry(tmp_path):
    r = run(tmp_path, "function:" + TRANSPOSE)
    assert r.returncode == 0, r.stderr
    forwards = (tmp_path / "gen/include/graft/ops/generated_forwards.h").read_text()
    assert "ViewGeometry transpose_geometry(const Tensor& self, int64_t dim0, int64_t dim1);" in forwards
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    fn = code[code.index("Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {"):]
    fn = fn[:fn.index("\n}\n")]
    assert "detail::transpose_geometry(self, dim0, dim1)" in fn
    assert "autograd::make_view(self, geometry.sizes, geometry.strides, geometry.offset)" in fn
    assert "MemoryOpScope" not in fn  # a view allocates nothing
    for bad in (TRANSPOSE.replace("view: true", "view: 1"),
                TRANSPOSE.replace("const Tensor& self,", "const Tensor& input,").replace("self: grad", "input: grad")
                .replace("method: true", "method: false")):
        assert_refused(tmp_path, "function:" + bad, "a view (view: true)")


CAT = """
  - name: cat
    doc: The tensors joined along dim.
    args: [const TensorList& tensors, int64_t dim = 0]
    forward_in: views.cpp
    derivatives:
      tensors: cat_tensors_backward(grad, tensors_sizes, dim)
    node: CatBackward0
    method: false
    python: hand
    hand: the test says why
"""
SPLIT = """
  - name: split
    view: true
    returns: TensorList
    doc: self cut into pieces of split_size along dim.
    args: [const Tensor& self, int64_t split_size, int64_t dim = 0]
    forward_in: views.cpp
    derivatives:
      self: split_backward(grads, split_size, dim, self_sizes, self_dtype, self_device)
    node: SplitBackward0
    method: true
    python: hand
    hand: the test says why
"""
MAX_DIM = """
  - name: max
    returns: [values, indices]
    doc: (values, indices) of the largest element along dim.
    args: [const Tensor& self, int64_t dim, bool keepdim = false]
    forward_in: reduce.cpp
    derivatives:
      self: value_selecting_reduction_backward(grad, dim, indices, self_sizes, keepdim)
    node: MaxBackward0
    method: true
    python: hand
    hand: the test says why
"""


def fn_text(code, signature):
    """The generated function that starts with `signature`."""
    fn = code[code.index(signature):]
    return fn[:fn.index("\n}\n")]


def test_a_list_argument_gives_an_edge_per_tensor_and_a_gradient_list(tmp_path):
    r = run(tmp_path, "function:" + CAT)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    node = code[code.index("struct CatBackward0"):]
    node = node[:node.index("\n};")]
    # the node keeps the tensors' sizes only, and its formula's list is the gradient list
    assert "std::vector<Shape> tensors_sizes_{};" in node and "SavedVariable" not in node
    assert "return cat_tensors_backward(grad, tensors_sizes, dim);" in node
    fn = fn_text(code, "Tensor cat(const TensorList& tensors, int64_t dim) {")
    assert "autograd::any_requires_grad(tensors)" in fn
    assert "autograd::collect_next_edges(node.get(), tensors);" in fn
    assert "node->tensors_sizes_ = detail::sizes_of(tensors);" in fn
    assert "Tensor cat_forward(const TensorList& tensors, int64_t dim);" in \
        (tmp_path / "gen/include/graft/ops/generated_forwards.h").read_text()


def test_a_view_with_a_list_result_is_one_node_for_all_outputs(tmp_path):
    r = run(tmp_path, "function:" + SPLIT)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);" in header
    assert "std::vector<ViewGeometry> split_geometry(const Tensor& self, int64_t split_size, int64_t dim);" in \
        (tmp_path / "gen/include/graft/ops/generated_forwards.h").read_text()
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    node = code[code.index("struct SplitBackward0"):]
    node = node[:node.index("\n};")]
    # the formula takes the list of the outputs' gradients; self's dtype and device are kept, not self
    assert "grads[0]" not in node and "SavedVariable" not in node
    assert "DType self_dtype_{};" in node and "Device self_device_{};" in node
    fn = fn_text(code, "std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {")
    assert 'detail::make_multi_output_views(self, geometries, "SplitBackward0")' in fn
    assert "node->self_dtype_ = self.dtype();" in fn and "node->self_device_ = self.device();" in fn
    assert "for (const Tensor& output : result) autograd::set_history(output, node);" in fn
    assert "std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const" in code


def test_two_outputs_record_the_first_and_may_save_the_second(tmp_path):
    r = run(tmp_path, "function:" + MAX_DIM)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    fn = fn_text(code, "std::pair<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {")
    assert "auto [values, indices] = detail::max_forward(self, dim, keepdim);" in fn
    assert "autograd::set_history(values, node);" in fn
    assert "node->indices_ = SavedVariable(indices, false);" in fn  # integers: no history of their own
    assert "return {values, indices};" in fn


@pytest.mark.parametrize("text, message", [
    ("function:" + CAT.replace("grad, tensors_sizes", "grad, tensors"), "not its tensors"),
    ("function:" + CAT.replace("int64_t dim = 0]", "const Tensor& w]").replace(
        "      tensors: cat", "      w: grad\n      tensors: cat"), "a list argument is the op's one"),
    ("function:" + SPLIT.replace("grads, split_size", "grads, result"), "cannot name `result`"),
    ("function:" + SPLIT.replace("(grads,", "(grad,"), "the derivative for self does not use grads"),
    ("function:" + SPLIT.replace("returns: TensorList", "returns: Tuple"), "returns must be one of"),
    ("function:" + MAX_DIM.replace("[values, indices]", "[values, dim]"), "returns names two outputs"),
])
def test_a_bad_list_or_pair_declaration_is_refused(tmp_path, text, message):
    assert_refused(tmp_path, text, message)


CONV = """
  - name: convolution
    doc: Convolution.
    args: [const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& scale, int64_t groups]
    forward_in: conv.cpp
    derivatives:
      input, weight, bias: convolution_backward(grad, input, weight, groups, grad_input_mask)
      scale: grad * input
    node: ConvolutionBackward0
    method: false
    python: none
"""


def test_a_joint_formula_gives_several_gradients_at_once(tmp_path):
    r = run(tmp_path, "function:" + CONV)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    node = code[code.index("struct ConvolutionBackward0"):]
    node = node[:node.index("\n};")]
    # computed once when any of the three is needed, told which by grad_input_mask
    assert ("if (should_compute_output(0) || should_compute_output(1) || should_compute_output(2)) {\n"
            "      const std::array<bool, 3> grad_input_mask{should_compute_output(0), should_compute_output(1), "
            "should_compute_output(2)};\n"
            "      TensorList joint = convolution_backward(grad, input, weight, groups, grad_input_mask);\n"
            "      grad_inputs[0] = std::move(joint[0]);\n"
            "      grad_inputs[1] = std::move(joint[1]);\n"
            "      grad_inputs[2] = std::move(joint[2]);\n    }") in node
    assert "if (should_compute_output(3)) grad_inputs[3] = grad * input;" in node
    assert "grad_input_mask_" not in node  # not an argument the node keeps
    fn = fn_text(code, "Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, "
                       "const Tensor& scale, int64_t groups) {")
    assert "make_node<ConvolutionBackward0>({&input, &weight, &bias, &scale});" in fn
    # weight, named by the joint formula only, is saved when it may run (any of its three);
    # input, which scale's formula names too, whenever any gradient is needed
    assert ("    if (node->should_compute_output(0) || node->should_compute_output(1) || "
            "node->should_compute_output(2)) node->weight_ = SavedVariable(weight, false);") in fn
    assert "    node->input_ = SavedVariable(input, false);" in fn


@pytest.mark.parametrize("text, message", [
    ("function:" + CONV.replace("input, weight, bias:", "input, input:"), "two or more different inputs"),
    ("function:" + CONV.replace("scale: grad * input", "weight: grad"), "the derivative for 'weight' is given twice"),
    ("function:" + CONV.replace("scale: grad * input", "scale: grad * grad_input_mask"),
     "grad_input_mask is for a joint formula"),
    ("function:" + CONV.replace("input, weight, bias:", "input, weight, groups:"), "which is not a tensor argument"),
])
def test_a_bad_joint_formula_is_refused(tmp_path, text, message):
    assert_refused(tmp_path, text, message)


INDEX = """
  - name: index
    doc: Advanced indexing.
    args: [const Tensor& self, const std::vector<std::optional<Tensor>>& indices]
    forward_in: indexing.cpp
    derivatives:
      self: index_backward(grad, self_sizes, indices)
    node: IndexBackward0
    method: true
    python: both
"""


def test_an_index_list_is_saved_tensor_by_tensor_and_bound_from_a_sequence(tmp_path):
    r = run(tmp_path, "function:" + INDEX)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    node = code[code.index("struct IndexBackward0"):]
    node = node[:node.index("\n};")]
    # released with the node's saved state and shown to the leak doctor, as SavedVariables are
    assert "detail::SavedTensorList indices_{};" in node and "indices_.reset_data();" in node
    assert 'indices_.visit(v, "indices");' in node
    assert "const std::vector<std::optional<Tensor>> indices = indices_.unpack(this);" in node
    assert "node->indices_.save(indices);" in code
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    assert "const auto a_indices = p.index_list(o + 0);" in bindings
    assert '"index(Tensor input, Tensor?[] indices)"' in bindings
    assert '{"index", "both", {"index(Tensor input, Tensor?[] indices)"}, &parsed_index},' in bindings


def test_an_inplace_form_writes_self_through_the_forward_and_records_the_ops_node(tmp_path):
    tensor = MUL.replace("    method: true\n", "    method: true\n    inplace: true\n")
    scalar = MUL_SCALAR.replace("    method: true\n", "    method: true\n    inplace: true\n")
    r = run(tmp_path, "function:" + tensor + scalar)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "gen/include/graft/ops/generated_ops.h").read_text()
    assert "Tensor& mul_(Tensor& self, const Tensor& other);" in header
    assert "Tensor& mul_(Tensor& self, const Scalar& other);" in header
    assert "Tensor& mul_(const Tensor& other);" in (tmp_path / "gen/include/graft/core/tensor_generated_methods.inc"
                                                    ).read_text()
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    tensor_form = fn_text(code, "Tensor& mul_(Tensor& self, const Tensor& other) {")
    # PyTorch's VariableType order: the in-place rules and whether it records; the node with its
    # edges and what it saves before the write (self's old value as a clone, other as itself or,
    # when it is self, as an alias); the forward writing self; the version bump and the rebase
    lines = [line.strip() for line in tensor_form.splitlines()]
    assert lines[1:10] == [
        'alloc::MemoryOpScope mem_scope("mul_");',
        'const bool record = detail::begin_inplace(self, "mul_", {&other});',
        "intrusive_ptr<MulBackward0_Tensor> node;",
        "if (record) {",
        "node = detail::make_node<MulBackward0_Tensor>({&self, &other});",
        "if (node->should_compute_output(1)) node->self_ = SavedVariable(detail::original_self(self), false);",
        "if (node->should_compute_output(0)) node->other_ = SavedVariable(detail::saved_input(other, self), false);",
        "}",
        "detail::mul_forward(self, other, &self);"]
    assert lines[10:12] == ["detail::finish_inplace(self, node);", "return self;"]
    scalar_form = fn_text(code, "Tensor& mul_(Tensor& self, const Scalar& other) {")
    assert "const Tensor no_edge;" in scalar_form and "detail::mul_forward(self, other, &self);" in scalar_form
    forwards = (tmp_path / "gen/include/graft/ops/generated_forwards.h").read_text()
    assert "Tensor mul_forward(const Tensor& self, const Tensor& other, Tensor* into = nullptr);" in forwards
    rows = (tmp_path / "gen/include/graft/ops/inplace_ops.def").read_text()
    assert rows.count("GRAFT_INPLACE_OP(mul_)") == 1  # one op-table row for both overloads
    for bad in (MUL.replace("    method: true\n", "    method: true\n    inplace: yes please\n"),
                MUL.replace("    method: true\n", "    method: true\n    inplace: direct\n"),
                SPLIT.replace("    method: true\n", "    method: true\n    inplace: true\n")):
        assert_refused(tmp_path, "function:" + bad, "inplace: true is for an op of self returning one tensor")


def test_an_inplace_form_may_record_a_node_of_its_own_name(tmp_path):
    # threshold_ records PyTorch's ThresholdBackward1 with threshold's formulas
    tensor = MUL.replace("    method: true\n", "    method: true\n    inplace: true\n    inplace_node: MulBackward1\n")
    r = run(tmp_path, "function:" + tensor)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    assert "struct MulBackward1 " in code and "struct MulBackward0 " in code
    inplace_form = fn_text(code, "Tensor& mul_(Tensor& self, const Tensor& other) {")
    assert "detail::make_node<MulBackward1>({&self, &other});" in inplace_form
    assert "detail::make_node<MulBackward0>" in fn_text(code, "Tensor mul(const Tensor& self, const Tensor& other) {")
    no_inplace = MUL.replace("    method: true\n", "    method: true\n    inplace_node: MulBackward1\n")
    assert_refused(tmp_path, "function:" + no_inplace,
                   "inplace_node names the node of an in-place form, on an op with inplace: true")


def test_a_unary_inplace_form_saves_its_result_as_self_and_its_input_as_a_clone(tmp_path):
    r = run(tmp_path, "unary_float:" + TANH + SIN)
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    tanh_ = [line.strip() for line in fn_text(code, "Tensor& tanh_(Tensor& self) {").splitlines()]
    # the kernel writes self; TanhBackward0 then keeps self, its output, as PyTorch's does
    assert tanh_[1:] == [
        'const bool record = detail::begin_inplace(self, "tanh_", {});',
        "intrusive_ptr<TanhBackward0> node;",
        "if (record) {",
        "node = detail::make_node<TanhBackward0>({&self});",
        "}",
        'detail::unary_float_forward(self, "tanh", kernel::GeneratedKernel::tanh, &self);',
        "detail::finish_inplace(self, node);",
        "if (node) {",
        "node->result_ = SavedVariable(self, true);",
        "}",
        "return self;"]
    # SinBackward0 reads self's old value: a clone taken before the write (PyTorch's original_self)
    sin_ = fn_text(code, "Tensor& sin_(Tensor& self) {")
    assert sin_.index("node->self_ = SavedVariable(detail::original_self(self), false);") < \
        sin_.index('detail::unary_float_forward(self, "sin", kernel::GeneratedKernel::sin, &self);')
    assert "result_" not in sin_


COPY_ = """
  - name: copy_
    doc: src written into self.
    args: [Tensor& self, const Tensor& src]
    forward_in: inplace_writes.cpp
    derivatives:
      self: zeros_like(grad)
      src: grad
    node: CopyBackwards
    python: hand
    hand: the test says why
"""


def test_an_inplace_only_op_writes_then_rebases_self_onto_its_node(tmp_path):
    r = run(tmp_path, "inplace_only:" + COPY_)
    assert r.returncode == 0, r.stderr
    assert "void copy_write(Tensor& self, const Tensor& src);" in \
        (tmp_path / "gen/include/graft/ops/generated_forwards.h").read_text()
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    fn = fn_text(code, "Tensor& copy_(Tensor& self, const Tensor& src) {")
    lines = [line.strip() for line in fn.splitlines()]
    # PyTorch's in-place checks, told whether the op is recorded, before the write (self with
    # internal overlap refused: copy_ does not declare allows_overlap); the node takes self's
    # history from before the write, then becomes self's
    order = ["const bool record = autograd::any_requires_grad({&self, &src});",
             'detail::check_tensor(self, "copy_", "self");',
             "autograd::check_inplace(self, record, /*check_overlap=*/true);",
             "detail::copy_write(self, src);", "autograd::bump_version(self);",
             "auto node = detail::make_node<CopyBackwards>({&self, &src});  // self's history before the write",
             "autograd::rebase_history(self, node);"]
    assert [lines.index(line) for line in order] == sorted(lines.index(line) for line in order)
    assert "GRAFT_INPLACE_ONLY_OP(copy_)" in (tmp_path / "gen/include/graft/ops/inplace_only_ops.def").read_text()
    for bad, message in ((COPY_.replace("self: zeros_like(grad)", "self: grad * self"), "cannot name self"),
                         (COPY_.replace("name: copy_", "name: copy"), "is named name_"),
                         (COPY_.replace("python: hand\n    hand: the test says why", "python: both"),
                          "python must be method (Tensor.copy_, returning the tensor itself), hand or none"),
                         (COPY_.replace("python: hand\n    hand: the test says why", "python: method")
                          .replace("const Tensor& src]", "const Tensor& src, Device where]"), "has no generated Python binding"),
                         (COPY_ + "    allows_overlap: false\n", "allows_overlap is true or left out")):
        assert_refused(tmp_path, "inplace_only:" + bad, message)


def test_an_inplace_only_method_is_bound_through_its_self_handle(tmp_path):
    r = run(tmp_path, "inplace_only:" + COPY_.replace("python: hand\n    hand: the test says why", "python: method"))
    assert r.returncode == 0, r.stderr
    bindings = (tmp_path / "gen/python/op_bindings.inc").read_text()
    # Tensor.copy_ only; self is written through a non-const handle to the method's tensor, whose
    # Python object the binding then returns (pybind11 finds the registered instance)
    assert '{"copy_", "method", {"copy_(Tensor input, Tensor src)"}, &parsed_copy_},' in bindings
    assert "auto a_self = self ? *self : p.tensor(0);" in bindings
    assert "return graft::copy_(a_self, a_src);" in bindings


def test_an_inplace_only_op_may_write_an_expanded_self(tmp_path):
    r = run(tmp_path, "inplace_only:" + COPY_ + "    allows_overlap: true\n")
    assert r.returncode == 0, r.stderr
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    fn = fn_text(code, "Tensor& copy_(Tensor& self, const Tensor& src) {")
    assert "autograd::check_inplace(self, record, /*check_overlap=*/false);" in fn


TANH_BACKWARD = """
  - name: tanh_backward
    doc: tanh's gradient from its result.
    result: floating_only
    kernel: x * (T(1) - y * y)
    self: tanh_backward(grad, other)
    other: grad * self * other * -2
    node: TanhBackwardBackward0
    reference: x * (1 - y * y)
"""


def test_a_binary_op_may_stay_out_of_python(tmp_path):
    r = run(tmp_path, "binary:" + TANH_BACKWARD)
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "gen/include/graft/ops/binary_ops.def").read_text()
    assert "GRAFT_BINARY_OP(tanh_backward, Python)" in rows
    r = run(tmp_path, "binary:" + TANH_BACKWARD + "    python: none\n")
    assert r.returncode == 0, r.stderr
    rows = (tmp_path / "gen/include/graft/ops/binary_ops.def").read_text()
    assert "GRAFT_BINARY_OP(tanh_backward, NoPython)" in rows
    # still a C++ op with its node, wired like any binary op
    code = (tmp_path / "gen/src/autograd/generated_functions.cpp").read_text()
    assert "struct TanhBackwardBackward0 final : Node {" in code
    assert "Tensor tanh_backward(const Tensor& self, const Tensor& other) {" in code
    assert_refused(tmp_path, "binary:" + TANH_BACKWARD + "    python: both\n", "python is none or left out")

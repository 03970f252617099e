#!/usr/bin/env python3
"""Generates graft's op code from the op declarations (src/ops/ops.yaml).

CMake runs it at configure time (and again whenever ops.yaml or this script changes):

    gen_ops.py --decl src/ops/ops.yaml --out <build>/generated

Each output is rewritten only when its text changes, so an unchanged declaration rebuilds
nothing. What comes out (docs/notes/ops.md):

  include/graft/ops/generated_ops.h       graft::name(self), graft::name_(self) for the unary
                                          differentiable families, graft::name(self, other) (and a
                                          Scalar other) for the binary ones, documented; ops.h
                                          includes it
  include/graft/core/tensor_generated_methods.inc
                                          the Tensor methods (included inside class Tensor)
  include/graft/core/tensor_generated_operators.inc
                                          the comparison operators (a < b), after class Tensor
  include/graft/ops/<family>_ops.def      X-macro rows, GRAFT_<FAMILY>_OP(name): the op table
                                          and the Python bindings expand them
  include/graft/ops/inplace_ops.def       GRAFT_INPLACE_OP(name_): the in-place forms of function
                                          and composite ops (`inplace:`), for the op table
  src/autograd/generated_functions.cpp    backward nodes, forwards with their autograd wiring,
                                          in-place forms, Tensor methods: the autograd layer's
                                          (PyTorch's generated VariableType), over the ops
                                          layer's forwards
  include/graft/backend/generated_kernel_ids.h
                                          GeneratedKernel / GeneratedBinaryKernel: each op's
                                          number in a backend's tables of generated kernels
                                          (kernels.h)
  src/backend/cpu/generated_kernels.{h,cpp}
                                          the CPU kernel of each op, and the CPU table of them
  tests/<family>_registry.def             the registry's rows: GRAFT_<FAMILY>_CASE(name, ...,
                                          (reference))

Families:
  unary_float      elementwise, floating result (integer/bool inputs give the default dtype),
                   differentiable, with an in-place form
  unary_rounding   elementwise, result of the input's dtype: floats through the kernel,
                   integers copied or refused, bool refused; differentiable; in-place form
  unary_predicate  elementwise, bool result, any input dtype, not differentiable
  unary_keep       elementwise, result of the input's dtype for every dtype (bool allowed or
                   refused with PyTorch's text), differentiable, with an in-place form
  binary           elementwise over two broadcast tensors with type promotion, a derivative
                   formula per input; the result promoted, floating, or floating only
  binary_predicate elementwise comparison/logic of two tensors (or a tensor and a number),
                   bool result, not differentiable
  binary_bitwise   elementwise bit operations of integer or bool tensors (or a tensor and a
                   number), the promoted dtype, floats refused, not differentiable
  function         any signature: the forward is written by hand (checks and kernels, no
                   autograd, in src/ops/<file>.cpp as detail::<name>_forward); the declaration
                   gives the derivative of each differentiable tensor argument (or one joint
                   formula for several: convolution's), from which come
                   the node, the wiring, the public declaration and the Tensor method; tensor
                   lists and index lists as arguments, a list or a pair of tensors as result,
                   views (view: true), overloads and in-place forms (inplace:)
  composite        any signature, no node of its own: written by hand in other graft ops
                   (PyTorch's CompositeImplicitAutograd), or not differentiable (argmax,
                   nonzero); the declaration gives the public declaration, the Tensor method,
                   the op-table row and the Python binding
  activation       elementwise over a floating tensor with named number arguments (defaults
                   included), result of its dtype, differentiable, in-place form optional;
                   bound in Python's _C._nn (and graft.name, Tensor.name where PyTorch has them)
  inplace_only     ops that exist only in place (fill_, zero_, copy_): PyTorch's in-place rules,
                   a hand-written write of self (detail::<name>write), then the version bump
                   and, when recording, the node from the formulas on self's history before the
                   write

Also written: include/graft/ops/generated_forwards.h (the hand-written forwards, geometries,
in-place forms (`into`) and in-place-only writes: what the ops layer gives the generated functions of
the autograd layer), python/activation_bindings.inc (the activation ops'
pybind11 definitions) and python/op_bindings.inc (the function and composite ops' ones), both
included by python/csrc/tensor_ops.cpp.
"""
import argparse
import json
import os
import re
import sys

import yaml

HEADER = "// Generated by tools/opgen/gen_ops.py from src/ops/ops.yaml. Do not edit.\n"
DOMAINS = {"Any", "Positive", "NonZero", "Unit", "AboveOne", "Wide"}
FIELDS = {
    "unary_float": {"name", "doc", "kernel", "derivative", "node", "reference", "domain"},
    "unary_rounding": {"name", "doc", "kernel", "integers", "refused_as", "derivative", "node", "reference", "kinks"},
    "unary_predicate": {"name", "doc", "kernel", "reference"},
    "unary_keep": {"name", "doc", "kernel", "bool_refusal", "derivative", "node", "reference", "domain"},
    "binary": {"name", "doc", "result", "kernel", "self", "other", "node", "reference"},
    "binary_predicate": {"name", "doc", "scalar", "kernel", "reference"},
    "binary_bitwise": {"name", "doc", "kernel", "reference"},
    "function": {"name", "doc", "args", "forward_in", "derivatives", "node", "method", "python"},
    "composite": {"name", "doc", "args", "defined_in", "differentiable", "method", "python"},
    "activation": {"name", "doc", "args", "check", "refused_as", "kernel", "derivative", "node", "reference", "domain",
                   "kinks", "tests", "inplace", "python"},
    "inplace_only": {"name", "doc", "args", "forward_in", "derivatives", "node", "python"},
}
# fields a declaration may leave out: `overload` names one of several declarations of an op
# (PyTorch's overload names: add.Tensor, add.Scalar), which become C++ overloads of one
# function; `view: true` makes a function op a view (its forward computes a geometry only);
# `operator` is the C++ operator a comparison also is (`a < b`)
# `returns: TensorList` makes a function or composite op return a list of tensors (split, unbind):
# its formulas take `grads`, one gradient per output (undefined for an output that got none).
# `returns: [values, indices]` names two outputs, returned as a std::pair: the first is the
# differentiable one (its gradient is `grad`), the second an integer tensor; a formula may name
# either (max(dim) saves its indices). With `output_grads: true` the op has two or three outputs
# (a std::pair or std::tuple), every floating one recorded as an output of the node, and the
# formulas take one gradient per output, `grad_<output>` (undefined for one that got none), as
# PyTorch's derivatives.yaml does for linalg_svd's grad_U, grad_S, grad_Vh
# `inplace: true` gives a function or composite op its in-place form name_ (graft::name_, the
# method, an op-table row). A function op's forward then takes a last `Tensor* into`: given (an
# in-place form's self), its kernel writes into it (detail::ElementwiseOutput), and the generated
# name_ records the op's own node around that write (src/autograd/inplace.cpp), or the node named
# by `inplace_node` (the same formulas; PyTorch's name for the in-place form: threshold_'s
# ThresholdBackward1). A composite's name_ is written by hand next to it (square_ is pow_(self, 2),
# as PyTorch's).
# An activation's `inplace_node` and `inplace_derivative` give its in-place form the node
# PyTorch records there, with a formula of `result` (the value written over self) instead of
# self: leaky_relu_'s LeakyReluBackward1, elu_'s EluBackward1
# `allows_overlap: true` lets an in-place-only op write a self with internal overlap (an
# expanded tensor: fill_, zero_ give every alias the same value, as PyTorch lets them)
# `python_none` lists tensor or int-list arguments that Python may give as None (PyTorch's
# `Tensor?`, `int[1]?`; an argument defaulting to Tensor() may be None anyway); C++ gets an
# undefined Tensor, an empty list
# `python_sequences` lists IntArrayRef arguments that Python must give as a sequence (PyTorch's
# `int[]`: convolution's stride); the others take a single int too (PyTorch's `int[1] dim`)
# `python_defaults` gives defaults Python has where C++ has none, written as C++ defaults: an
# overload's C++ defaults may not make a call ambiguous (conv2d's padding string overload), its
# Python ones may, as the parser tries the overloads in order
# `python_hidden: true` keeps an overload out of the parser's TypeError (tried in its turn, never
# named), as PyTorch's errors for add, sub and mul name only their Tensor overload
# `python_first: true` tries and lists an overload before the others, where PyTorch declares a
# composite overload first (where(condition), view(dtype))
# `python_only: true` (a composite overload) is Python's and not C++'s: PyTorch's var(bool unbiased)
# would make C++ read var(x, {1}) or var(x, 1) as var(x, unbiased=true) (a braced or plain int
# converts to bool before it converts to IntArrayRef). It is declared as graft::detail::<name>_<overload>
# (generated_ops.h), with no Tensor method, and the binding calls that
# `hand` is the reason an op with `python: hand` is bound by hand (what its Python signature has
# that a declaration cannot say); every such op gives one, and no other op does
PYTHON_FIELDS = {"python_none", "python_sequences", "python_defaults", "python_hidden", "python_first"}
# `autocast: lower_precision | float32` puts a function op on one of autocast's lists (PyTorch's
# CPU autocast lists): inside an enabled autocast region its tensor arguments are cast first
# (graft/ops/autocast.h); composites on a list call autocast::run in their hand-written body
AUTOCAST_POLICIES = {"lower_precision": "LowerPrecision", "float32": "Float32"}
OPTIONAL_FIELDS = {"function": {"overload", "view", "returns", "inplace", "inplace_node", "hand", "autocast",
                                "output_grads"} |
                   PYTHON_FIELDS,
                   "composite": {"overload", "returns", "inplace", "hand", "python_only"} | PYTHON_FIELDS,
                   "binary_predicate": {"operator"},
                   "inplace_only": {"allows_overlap", "overload", "hand"} | PYTHON_FIELDS,
                   "binary": {"python", "hand"}, "activation": {"inplace_node", "inplace_derivative", "hand"}}
INPLACE = (True,)
RETURNS = {"Tensor": "Tensor", "TensorList": "std::vector<Tensor>"}
COMPARISON_OPERATORS = ("==", "!=", "<", "<=", ">", ">=")
BINARY_RESULTS = {"promote": "Promote", "float": "Float", "floating_only": "FloatingOnly"}
DIFFERENTIABLE = ("unary_float", "unary_rounding", "unary_keep", "activation")
# a list of optional tensors (advanced indexing's indices: none stands for ':'), not
# differentiable; a node that names it saves its tensors (SavedVariables, as PyTorch's)
INDEX_LIST = "const std::vector<std::optional<Tensor>>&"
SAVED_INDEX_LIST = "detail::SavedTensorList"
# the function family's argument types: how the node stores one that a derivative names
ARG_STORAGE = {"const Tensor&": None, "const TensorList&": None, "double": "double", "int64_t": "int64_t", "bool": "bool",
               "IntArrayRef": "Shape", "const Scalar&": "Scalar", "std::optional<int64_t>": "std::optional<int64_t>",
               "std::optional<Scalar>": "std::optional<Scalar>", "std::optional<double>": "std::optional<double>",
               "std::optional<DType>": "std::optional<DType>",
               "const std::string&": "std::string", "std::optional<std::string_view>": "std::optional<std::string>",
               "Reduction": "Reduction", "DType": "DType", "Device": "Device", INDEX_LIST: SAVED_INDEX_LIST,
               "std::optional<MemoryFormat>": "std::optional<MemoryFormat>", "MemoryFormat": "MemoryFormat",
               "std::optional<Generator>": "std::optional<Generator>"}
# what a formula may name of a tensor argument `t` without the node saving the tensor:
# `t_sizes`, `t_strides`, `t_offset` (its storage offset), `t_dtype`, `t_device` (its type in
# the node, and how it is read from t)
TENSOR_ATTRIBUTES = {"sizes": ("Shape", "sizes().shape()"), "strides": ("Shape", "strides().shape()"),
                     "offset": ("int64_t", "storage_offset()"), "dtype": ("DType", "dtype()"),
                     "device": ("Device", "device()")}
# of a list argument, only its tensors' sizes, as a std::vector<Shape> (`tensors_sizes`)
LIST_SIZES = ("std::vector<Shape>", "detail::sizes_of({})")
# how a generated Python binding takes an argument of each C++ type (python/csrc/arg_parser.h):
# its type in the op's PyTorch-style signature, and the ParsedArgs call converting it. An
# IntArrayRef takes an int or a sequence (PyTorch's int[1]); a Scalar, a Python number; a
# Reduction, PyTorch's string ('mean', 'sum', 'none').
PY_ARGS = {"const Tensor&": ("Tensor", "tensor"), "Tensor&": ("Tensor", "tensor"), "double": ("float", "float64"),
           "int64_t": ("int", "int64"), "bool": ("bool", "boolean"), "std::optional<int64_t>": ("int?", "optional_int64"),
           "IntArrayRef": ("int[1]", "int_list"), "const Scalar&": ("Scalar", "scalar"),
           "std::optional<Scalar>": ("Scalar?", "optional_scalar"),
           "std::optional<double>": ("float?", "optional_float64"),
           "std::optional<DType>": ("ScalarType?", "optional_dtype"), "DType": ("ScalarType", "dtype"),
           "std::optional<MemoryFormat>": ("MemoryFormat?", "optional_memory_format"),
           "MemoryFormat": ("MemoryFormat", "memory_format"),
           "const std::string&": ("str", "string"), "std::string_view": ("str", "string"),
           "std::optional<std::string_view>": ("str?", "optional_string"),
           "Reduction": ("str", "reduction"), "const TensorList&": ("Tensor[]", "tensor_list"),
           INDEX_LIST: ("Tensor?[]", "index_list"), "std::optional<Generator>": ("Generator?", "optional_generator")}
# where a generated op is bound: both (graft.name and Tensor.name), torch (graft.name only),
# method (Tensor.name only), nn (_C._nn.name: torch.nn.functional's), hand (bound by hand in python/csrc, for the reason the
# declaration's `hand:` field gives) or none (not a PyTorch function: C++ only)
PYTHON_BINDINGS = ("both", "torch", "method", "nn", "hand", "none")
GENERATED_BINDINGS = ("both", "torch", "method", "nn")
# the differentiable unary families, each op with an in-place form
UNARY_WITH_INPLACE = ("unary_float", "unary_rounding", "unary_keep")


class Joint(str):
    """One input's share of a joint formula: a `derivatives` key naming several inputs ("input,
    weight, bias", as PyTorch's derivatives.yaml) maps them to one formula returning a TensorList,
    a gradient per name, computed once when any of them is needed (convolution's one backward for
    all three). Each named input gets a Joint: the formula's text (so `uses` reads it as any
    other), the names of the group and its position in it. The formula may name
    `grad_input_mask`, a std::array<bool, N> of which of the N gradients are needed."""

    def __new__(cls, formula, names, index):
        joint = super().__new__(cls, formula)
        joint.names, joint.index = names, index
        return joint


def expand_joint_formulas(op):
    """`op`'s derivatives with each joint key ("a, b: f") split into its inputs, each a Joint of
    f; refused when a joint key names fewer than two inputs, a name twice, or gives no formula,
    and when a formula that is not joint names grad_input_mask."""
    expanded = {}
    for key, formula in op["derivatives"].items():
        names = tuple(n.strip() for n in str(key).split(","))
        for n in set(names) & set(expanded):
            fail(f"op '{op['name']}': the derivative for '{n}' is given twice")
        if len(names) == 1:
            if formula is not None and uses(formula, "grad_input_mask"):
                fail(f"op '{op['name']}': grad_input_mask is for a joint formula (a key naming several inputs)")
            expanded[names[0]] = formula
            continue
        if formula is None or len(set(names)) != len(names) or not all(re.fullmatch(r"\w+", n) for n in names):
            fail(f"op '{op['name']}': a joint key names two or more different inputs and gives their formula")
        for i, n in enumerate(names):
            expanded[n] = Joint(formula, names, i)
    op["derivatives"] = expanded


def fail(msg):
    sys.exit(f"gen_ops.py: {msg}")


def uses(formula, var):
    """Whether the derivative formula names `var` as an identifier (not as part of another)."""
    return re.search(rf"(?<![\w.]){var}(?!\w)", formula) is not None


def check(family, ops, seen):
    for op in ops:
        name = op.get("name", "?")
        missing = FIELDS[family] - set(op)
        extra = set(op) - FIELDS[family] - OPTIONAL_FIELDS.get(family, set())
        if missing:
            fail(f"{family} op '{name}' lacks {sorted(missing)}")
        if extra:
            fail(f"{family} op '{name}' has unknown fields {sorted(extra)}")
        if not re.fullmatch(r"_?[a-z][a-z0-9_]*", name):  # a leading _ as PyTorch's internal ops (_linalg_svd)
            fail(f"op name '{name}' is not a lower-case identifier")
        overloads = seen.setdefault(name, [])
        # one family per op, but for a function op's composite overloads (PyTorch's
        # CompositeImplicitAutograd ones over another op: max(self, other) is maximum)
        if overloads and (None in overloads or op.get("overload") is None
                          or op["overload"] in [o for _, o in overloads]
                          or any(f != family and {f, family} != {"function", "composite"} for f, _ in overloads)):
            fail(f"op '{name}' is declared twice (overloads of one op are declared in one family, or as a "
                 f"function op's composite overloads, each with its own `overload` name)")
        overloads.append((family, op.get("overload")))
        if op.get("python") == "hand" and not (isinstance(op.get("hand"), str) and op["hand"].strip()):
            fail(f"op '{name}': python: hand needs `hand:`, the reason the binding cannot be generated")
        if "hand" in op and op.get("python") != "hand":
            fail(f"op '{name}': `hand:` gives the reason for python: hand, and python is {op.get('python', 'none')}")
        if family in ("unary_float", "unary_keep", "activation") and op["domain"] not in DOMAINS:
            fail(f"op '{name}': domain '{op['domain']}' is not one of {sorted(DOMAINS)}")
        if family == "unary_rounding" and op["integers"] not in ("copy", "refuse"):
            fail(f"op '{name}': integers must be 'copy' or 'refuse'")
        if family in DIFFERENTIABLE and not uses(op["derivative"], "grad"):
            fail(f"op '{name}': the derivative does not use grad")
        if family == "binary":
            if op["result"] not in BINARY_RESULTS:
                fail(f"op '{name}': result must be one of {sorted(BINARY_RESULTS)}")
            if op.get("python", "none") != "none":
                fail(f"op '{name}': python is none or left out")
            for arg in ("self", "other"):
                if not uses(op[arg], "grad"):
                    fail(f"op '{name}': the derivative for {arg} does not use grad")
        if family == "binary_predicate" and not isinstance(op["scalar"], bool):
            fail(f"op '{name}': scalar must be true or false")
        if "operator" in op and (op["operator"] not in COMPARISON_OPERATORS or not op.get("scalar")):
            fail(f"op '{name}': operator must be one of {list(COMPARISON_OPERATORS)}, on an op with scalar: true")
        if family == "activation":
            check_activation(op)
        if family == "function":
            check_function(op)
        if family == "composite":
            check_composite(op)
        if family == "inplace_only":
            check_inplace_only(op)


def parse_args(op, any_type=False):
    """The `args` of a function or composite op ("const Tensor& self", "int64_t dim = 0", ...)
    as (type, name, default or None) triples. A function op's types are those its node can
    store (ARG_STORAGE); a composite op's may be any C++ type."""
    out = []
    for text in op["args"]:
        if text.strip() == "*":  # what follows is keyword-only in Python (keyword_only)
            continue
        m = re.fullmatch(r"(.+?)\s+(\w+)(?:\s*=\s*(.+))?", text.strip())
        if not m or (not any_type and m.group(1) not in ARG_STORAGE):
            fail(f"op '{op['name']}': argument '{text}' is not 'type name [= default]' with a type of "
                 f"{sorted(ARG_STORAGE)}")
        out.append((m.group(1), m.group(2), m.group(3)))
    return out


def cpp_args(op):
    """An op's `args` as C++ parameters (the Python-only `*` mark left out)."""
    return [text for text in op["args"] if text.strip() != "*"]


def keyword_only(op):
    """The arguments after a `*` in an op's args: keyword-only in Python, as after PyTorch's `*`
    (C++ has no such mark and ignores it)."""
    marks = [i for i, text in enumerate(op["args"]) if text.strip() == "*"]
    if not marks:
        return set()
    return {re.fullmatch(r"(.+?)\s+(\w+)(?:\s*=\s*(.+))?", text.strip()).group(2)
            for text in op["args"][marks[0] + 1:]}


def python_none(op):
    """The tensor arguments Python may give as None (PyTorch's `Tensor?`), passed on as an
    undefined Tensor: those defaulting to Tensor() and those `python_none` lists."""
    defaults = op.get("python_defaults", {})
    return set(op.get("python_none", [])) | {a for t, a, d in parse_args(op, any_type=True)
                                             if t == "const Tensor&" and defaults.get(a, d) is not None
                                             and defaults.get(a, d).strip() == "Tensor()"}


def returns(op):
    """The C++ type an op returns (Tensor unless `returns` says otherwise)."""
    if isinstance(op.get("returns"), list):
        return "std::pair<Tensor, Tensor>" if len(op["returns"]) == 2 else "std::tuple<Tensor, Tensor, Tensor>"
    return RETURNS[op.get("returns", "Tensor")]


def output_names(op):
    """What the formulas call the op's outputs: `result`, or the names `returns` gives."""
    return op["returns"] if isinstance(op.get("returns"), list) else ["result"]


def check_returns(op, args, composite=False):
    """A function op names two outputs (three with output_grads), a composite two or three."""
    name, value = op["name"], op.get("returns", "Tensor")
    sizes = (2, 3) if op.get("output_grads") or composite else (2,)
    if isinstance(value, list):
        if len(value) not in sizes or not all(isinstance(v, str) and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", v)
                                              for v in value) \
                or set(value) & ({a for _, a, _ in args} | {"grad", "grads", "result"}):
            fail(f"op '{name}': returns names two outputs, [first, second] (three with output_grads), "
                 "unlike the arguments")
    elif value not in RETURNS:
        fail(f"op '{name}': returns must be one of {sorted(RETURNS)} or two output names")
    if op.get("output_grads") not in (None, True) or (op.get("output_grads") and not isinstance(value, list)):
        fail(f"op '{name}': output_grads is true, for an op that names its outputs in returns")


def grad_name(op):
    """What a function op's formulas name as the incoming gradient: `grad`, or `grads` when the
    op returns a list, `grad_<output>` each (several names) with output_grads."""
    if op.get("output_grads"):
        return [f"grad_{v}" for v in op["returns"]]
    return "grads" if op.get("returns") == "TensorList" else "grad"


def check_function(op):
    name, args = op["name"], parse_args(op)
    tensors = [a for t, a, _ in args if t in ("const Tensor&", "const TensorList&")]
    lists = [a for t, a, _ in args if t == "const TensorList&"]
    if not tensors or args[0][0] not in ("const Tensor&", "const Scalar&", "const TensorList&"):
        fail(f"op '{name}': the first argument must be a const Tensor& or TensorList& (or a const Scalar& before one)")
    check_returns(op, args)
    check_inplace(op, args)
    if lists and list(op["derivatives"]) != lists[:1]:
        fail(f"op '{name}': a list argument is the op's one differentiable input (its formula gives a gradient list)")
    if op.get("returns") == "TensorList" and any(f is not None and uses(f, "result") for f in op["derivatives"].values()):
        fail(f"op '{name}': a formula of an op returning a list cannot name `result`")
    for arg, formula in op["derivatives"].items():
        if arg in lists and formula is not None and uses(formula, arg):
            fail(f"op '{name}': a formula may name a list argument's sizes ({arg}_sizes), not its tensors")
    if op["method"] and args[0][:2] != ("const Tensor&", "self"):
        fail(f"op '{name}': a method's first argument must be 'const Tensor& self'")
    if not isinstance(op["derivatives"], dict) or not op["derivatives"]:
        fail(f"op '{name}': derivatives must map tensor arguments to formulas")
    numbers = wrapped_numbers(op)
    for arg, formula in op["derivatives"].items():
        if arg in numbers:
            if formula is not None:
                fail(f"op '{name}': the number '{arg}' gets no gradient (~ makes it a wrapped number)")
            continue
        if arg not in tensors:
            fail(f"op '{name}': derivative for '{arg}', which is not a tensor argument")
        if formula is None:
            fail(f"op '{name}': the derivative for {arg} is missing")
        grads = grad_name(op) if isinstance(grad_name(op), list) else [grad_name(op)]
        if not any(uses(formula, g) for g in grads):
            fail(f"op '{name}': the derivative for {arg} does not use {' or '.join(grads)}")
    for _, arg, _ in args:
        for attr in TENSOR_ATTRIBUTES:
            if arg.endswith(f"_{attr}") and arg[:-len(attr) - 1] in tensors:
                fail(f"op '{name}': argument '{arg}' would shadow the {attr} of tensor '{arg[:-len(attr) - 1]}'")
    if not isinstance(op["method"], bool):
        fail(f"op '{name}': method must be true or false")
    if "view" in op and (op["view"] is not True or args[0][:2] != ("const Tensor&", "self")
                         or list(op["derivatives"]) != ["self"]):
        fail(f"op '{name}': a view (view: true) is of 'const Tensor& self', its one derivative for self")
    check_python(op, args)


def wrapped_numbers(op):
    """The Scalar arguments of a function op that its `derivatives` list with `~`: PyTorch's
    wrapped numbers (`x * 2` multiplies by a 0-d tensor that never requires grad). Each is an
    input of the node with no gradient (an empty edge, as PyTorch's `next_functions` shows),
    saved as that 0-d tensor when a formula names it."""
    return [a for t, a, _ in parse_args(op) if t == "const Scalar&" and a in op["derivatives"]]


def check_composite(op):
    name, args = op["name"], parse_args(op, any_type=True)
    for field in ("method", "differentiable"):
        if not isinstance(op[field], bool):
            fail(f"op '{name}': {field} must be true or false")
    if op["method"] and (not args or args[0][:2] != ("const Tensor&", "self")):
        fail(f"op '{name}': a method's first argument must be 'const Tensor& self'")
    if op.get("python_only", False) is not False and (op.get("python_only") is not True or "overload" not in op
                                                      or op["python"] not in GENERATED_BINDINGS or op.get("inplace")):
        fail(f"op '{name}': python_only is true (an overload of a generated binding, no in-place form) or left out")
    check_returns(op, args, composite=True)
    check_inplace(op, args)
    check_python(op, args)


def cpp_name(op):
    """What C++ calls an op: graft::<name>, or detail::<name>_<overload> for a python_only overload."""
    return f"detail::{op['name']}_{op['overload']}" if op.get("python_only") else op["name"]


def check_inplace_only(op):
    name, args = op["name"], parse_args(op, any_type=True)
    if not name.endswith("_") or not args or args[0][:2] != ("Tensor&", "self"):
        fail(f"op '{name}': an in-place-only op is named name_ and its first argument is 'Tensor& self'")
    tensors = ["self"] + [a for t, a, _ in args[1:] if t == "const Tensor&"]
    for t, a, _ in args[1:]:
        if t != "const Tensor&" and t not in ARG_STORAGE:
            fail(f"op '{name}': argument '{a}' has a type the node cannot keep")
    if not isinstance(op["derivatives"], dict) or not op["derivatives"]:
        fail(f"op '{name}': derivatives must map tensor arguments to formulas")
    for arg, formula in op["derivatives"].items():
        if arg not in tensors or formula is None or not uses(formula, "grad"):
            fail(f"op '{name}': the derivative for '{arg}' must be a formula of grad for a tensor argument")
        if uses(formula, "self") or uses(formula, "result"):
            fail(f"op '{name}': a formula cannot name self, which the op overwrites")
    if op["python"] not in ("method", "hand", "none"):
        fail(f"op '{name}': python must be method (Tensor.{name}, returning the tensor itself), hand or none")
    check_python(op, args)
    if op.get("allows_overlap", True) is not True:
        fail(f"op '{name}': allows_overlap is true or left out")


def check_inplace(op, args):
    if "inplace_node" in op and not op.get("inplace"):
        fail(f"op '{op['name']}': inplace_node names the node of an in-place form, on an op with inplace: true")
    if "inplace" not in op:
        return
    if op["inplace"] not in INPLACE or op.get("view") or returns(op) != "Tensor" or args[0][1] != "self":
        fail(f"op '{op['name']}': inplace: true is for an op of self returning one tensor, not a view")


def inplace_ops(decl):
    """The function and composite declarations with an in-place form, in declaration order."""
    return [op for op in decl["function"] + decl["composite"] if "inplace" in op]


def check_python(op, args):
    name = op["name"]
    if op["python"] not in PYTHON_BINDINGS:
        fail(f"op '{name}': python must be one of {list(PYTHON_BINDINGS)}")
    # the method's tensor is the argument named self (where(condition, self, other): the second);
    # an overload of a number self (2 - x: sub(Scalar self, Tensor other)) or of none
    # (where(condition)) is graft.name's only
    self_type = next((t for t, a, _ in args if a == "self"), None)
    if op["python"] in ("both", "method") and self_type not in ("const Tensor&", "Tensor&") \
            and not (op["python"] == "both" and self_type in ("const Scalar&", None) and "overload" in op):
        fail(f"op '{name}': python '{op['python']}' binds Tensor.{name}, so it takes a 'const Tensor& self'")
    if op.get("python_hidden", False) is not False and (op.get("python_hidden") is not True
                                                        or op["python"] not in GENERATED_BINDINGS):
        fail(f"op '{name}': python_hidden is true (an overload the parser's TypeError does not name) or left out")
    if op.get("python_first", False) is not False and (op.get("python_first") is not True or "overload" not in op
                                                       or op["python"] not in GENERATED_BINDINGS):
        fail(f"op '{name}': python_first is true (an overload tried and listed before the others) or left out")
    for field, kinds in (("python_none", ("const Tensor&", "IntArrayRef")), ("python_sequences", ("IntArrayRef",))):
        for a in op.get(field, []):
            if not any((t, a) in [(k, n) for k in kinds] for t, n, _ in args) or op["python"] in ("hand", "none"):
                fail(f"op '{name}': {field} names {' or '.join(kinds)} arguments of an op whose binding is generated")
    defaults = op.get("python_defaults", {})
    if "python_defaults" in op and (not isinstance(defaults, dict) or set(defaults) - {a for _, a, _ in args}
                                    or op["python"] in ("hand", "none")):
        fail(f"op '{name}': python_defaults maps arguments of an op whose binding is generated to C++ defaults")
    if op["python"] in GENERATED_BINDINGS:
        for t, a, d in args:
            if t not in PY_ARGS:
                fail(f"op '{name}': argument '{a}' of type {t} has no generated Python binding (python: hand)")
            if defaults.get(a, d) is not None:
                python_default(name, defaults.get(a, d))


def check_activation(op):
    name = op["name"]
    if not isinstance(op["args"], dict):
        fail(f"op '{name}': args must be a mapping of argument names to default numbers")
    for arg, default in op["args"].items():
        if not re.fullmatch(r"[a-z][a-z0-9_]*", arg) or arg in ("self", "result", "grad", "x"):
            fail(f"op '{name}': argument name '{arg}' is not usable")
        if not isinstance(default, (int, float)) or isinstance(default, bool):
            fail(f"op '{name}': argument '{arg}' needs a number as its default")
    if op["check"] is not None and not (isinstance(op["check"], list) and len(op["check"]) == 2):
        fail(f"op '{name}': check must be ~ or [condition, error text with {{argument}} fields]")
    if op["python"] not in ("nn", "torch"):
        fail(f"op '{name}': python must be 'nn' (_C._nn only) or 'torch' (also graft.{name} and the method)")
    if not isinstance(op["inplace"], bool):
        fail(f"op '{name}': inplace must be true or false")
    if ("inplace_node" in op) != ("inplace_derivative" in op) or ("inplace_node" in op and not op["inplace"]):
        fail(f"op '{name}': inplace_node and inplace_derivative come together, on an op with inplace: true")
    if "inplace_derivative" in op and (uses(op["inplace_derivative"], "self") or not uses(op["inplace_derivative"], "grad")):
        fail(f"op '{name}': inplace_derivative is a formula of grad and result, not of self (overwritten)")
    for test in op["tests"]:
        unknown = set(test) - set(op["args"]) - {"kinks"}
        if not isinstance(test, dict) or unknown:
            fail(f"op '{name}': a test names unknown arguments {sorted(unknown)}")


def cpp_number(v):
    """A number of the declarations as a C++ double literal (0.01, 20.0, 1e-05)."""
    return repr(float(v))


def act_params(op, defaults):
    """An activation's argument list after self: ", double beta = 1.0, double threshold = 20.0"."""
    return "".join(f", double {a}" + (f" = {cpp_number(d)}" if defaults else "") for a, d in op["args"].items())


def act_names(op):
    return "".join(f", {a}" for a in op["args"])


def substitute(expr, values):
    """`expr` with each argument name replaced by its value (a parenthesised literal)."""
    for arg, v in values.items():
        expr = re.sub(rf"(?<![\w.]){arg}(?!\w)", f"({cpp_number(v)})", expr)
    return expr


def error_parts(text):
    """An error text with {argument} fields as GRAFT_CHECK's message parts:
    "found {lambd}." -> "found ", lambd, "."."""
    parts = []
    for i, piece in enumerate(re.split(r"\{(\w+)\}", text)):
        if i % 2:
            parts.append(piece)
        elif piece:
            parts.append(json.dumps(piece))
    return ", ".join(parts)


def explicit_prefix(op, explicit):
    """The values to pass positionally so that the `explicit` arguments are given: every
    argument up to the last explicit one (the earlier ones at their defaults)."""
    names = list(op["args"])
    last = max((names.index(a) for a in explicit), default=-1)
    return [explicit.get(a, op["args"][a]) for a in names[:last + 1]]


def act_variants(op):
    """The registry's argument sets of an activation: its defaults, then each of `tests`, as
    (variant name, the values of all arguments, the explicit arguments, kinks)."""
    out = [("", dict(op["args"]), {}, op["kinks"])]
    for test in op["tests"]:
        explicit = {a: v for a, v in test.items() if a != "kinks"}
        variant = ",".join(f"{a}={v}" for a, v in explicit.items())
        out.append((variant, {**op["args"], **explicit}, explicit, test.get("kinks", op["kinks"])))
    return out


BINARY_DTYPE_DOC = {
    "promote": "the promoted dtype (any, bool and integers included)",
    "float": "a floating result (integer and bool operands compute in the default dtype)",
    "floating_only": "floating operands only (integers and bool are refused)",
}


def gen_public_header(decl):
    lines = [HEADER, "#pragma once", "// The ops declared in src/ops/ops.yaml. Included by graft/ops/ops.h.",
             '#include "graft/core/tensor.h"', '#include "graft/ops/reduction.h"', "", "namespace graft {", "",
             "// ---- unary_float ----"]
    for op in decl["unary_float"]:
        lines.append(f"/// {op['doc']} Integer and bool inputs give the default float dtype.")
        lines.append(f"Tensor {op['name']}(const Tensor& self);")
        lines.append(f"/// In-place {op['name']}: self must be floating point.")
        lines.append(f"Tensor& {op['name']}_(Tensor& self);")
    lines += ["", "// ---- unary_rounding ----"]
    for op in decl["unary_rounding"]:
        ints = "integers are copied" if op["integers"] == "copy" else "integers are refused"
        lines.append(f"/// {op['doc']} Keeps self's dtype ({ints}; bool is refused).")
        lines.append(f"Tensor {op['name']}(const Tensor& self);")
        lines.append(f"/// In-place {op['name']}.")
        lines.append(f"Tensor& {op['name']}_(Tensor& self);")
    lines += ["", "// ---- unary_keep ----"]
    for op in decl["unary_keep"]:
        bools = "bool is refused" if op["bool_refusal"] else "bool included"
        lines.append(f"/// {op['doc']} Keeps self's dtype ({bools}).")
        lines.append(f"Tensor {op['name']}(const Tensor& self);")
        lines.append(f"/// In-place {op['name']}.")
        lines.append(f"Tensor& {op['name']}_(Tensor& self);")
    lines += ["", "// ---- unary_predicate ----"]
    for op in decl["unary_predicate"]:
        lines.append(f"/// {op['doc']} A bool tensor of self's shape, for any dtype; not differentiable.")
        lines.append(f"Tensor {op['name']}(const Tensor& self);")
    lines += ["", "// ---- binary ----"]
    for op in decl["binary"]:
        lines.append(f"/// {op['doc']} Broadcast; {BINARY_DTYPE_DOC[op['result']]}.")
        lines.append(f"Tensor {op['name']}(const Tensor& self, const Tensor& other);")
    lines += ["", "// ---- binary_predicate ----"]
    for op in decl["binary_predicate"]:
        lines.append(f"/// {op['doc']} Broadcast, compared in the promoted dtype; a bool tensor, not differentiable.")
        lines.append(f"Tensor {op['name']}(const Tensor& self, const Tensor& other);")
        if op["scalar"]:
            lines.append(f"Tensor {op['name']}(const Tensor& self, const Scalar& other);")
    lines += ["", "// ---- binary_bitwise ----"]
    for op in decl["binary_bitwise"]:
        lines.append(f"/// {op['doc']} Broadcast, integer and bool operands (logical on bool) in the promoted "
                     f"dtype; floats are refused (\"{op['name']}_cpu\" not implemented for 'Float').")
        lines.append(f"Tensor {op['name']}(const Tensor& self, const Tensor& other);")
        lines.append(f"Tensor {op['name']}(const Tensor& self, const Scalar& other);")
        lines.append(f"/// In-place {op['name']}: self's dtype must hold the promoted result.")
        lines.append(f"Tensor& {op['name']}_(Tensor& self, const Tensor& other);")
        lines.append(f"Tensor& {op['name']}_(Tensor& self, const Scalar& other);")
    lines += ["", "// ---- function ----"]
    for op in decl["function"]:
        lines.append(f"/// {op['doc']}")
        lines.append(f"{returns(op)} {op['name']}({', '.join(cpp_args(op))});")
    lines += ["", "// ---- composite ----"]
    for op in decl["composite"]:
        if not op.get("python_only"):
            lines.append(f"/// {op['doc']}")
            lines.append(f"{returns(op)} {op['name']}({', '.join(cpp_args(op))});")
    lines += ["", "// ---- composite overloads Python has and C++ does not (python_only) ----", "namespace detail {"]
    for op in decl["composite"]:
        if op.get("python_only"):
            lines.append(f"/// {op['doc']}")
            lines.append(f"{returns(op)} {op['name']}_{op['overload']}({', '.join(cpp_args(op))});")
    lines.append("}  // namespace detail")
    lines += ["", "// ---- inplace_only ----"]
    for op in decl["inplace_only"]:
        lines.append(f"/// {op['doc']}")
        lines.append(f"Tensor& {op['name']}({', '.join(cpp_args(op))});")
    lines += ["", "// ---- the in-place forms of function and composite ops ----"]
    for op in inplace_ops(decl):
        lines.append(f"/// In-place {op['name']}: self = {op['name']}(self, ...), written into self and recorded as its history.")
        lines.append(f"Tensor& {op['name']}_({', '.join(['Tensor& self'] + cpp_args(op)[1:])});")
    lines += ["", "// ---- activation ----"]
    for op in decl["activation"]:
        lines.append(f"/// {op['doc']} Floating self only (integers and bool are refused, as PyTorch).")
        lines.append(f"Tensor {op['name']}(const Tensor& self{act_params(op, True)});")
        if op["inplace"]:
            lines.append(f"/// In-place {op['name']}.")
            lines.append(f"Tensor& {op['name']}_(Tensor& self{act_params(op, True)});")
    lines += ["", "}  // namespace graft", ""]
    return "\n".join(lines)


def first_declarations(ops):
    """The ops with each name's first declaration only (an op with overloads is one op)."""
    names = set()
    return [op for op in ops if not (op["name"] in names or names.add(op["name"]))]


def gen_operators(decl):
    lines = [HEADER, "// The comparison operators of src/ops/ops.yaml (a < b is graft::lt(a, b)); included by",
             "// graft/core/tensor.h after class Tensor."]
    for op in decl["binary_predicate"]:
        if "operator" in op:
            lines.append(f"/// self {op['operator']} other elementwise: graft::{op['name']}, a bool tensor.")
            lines += [f"Tensor operator{op['operator']}(const Tensor& self, const {t}& other);" for t in ("Tensor", "Scalar")]
    return "\n".join(lines) + "\n"


def gen_def(family, ops):
    ops = first_declarations(ops)
    macro = f"GRAFT_{family.upper()}_OP"
    lines = [HEADER, f"// X-macro rows, one per {family} op: {macro}(name).",
             "// (No include guard: include it with the macro defined.)"]
    if family == "binary_predicate":
        lines[1] = f"// X-macro rows, one per {family} op: {macro}(name, WithScalar | TensorOnly)."
        lines += [f"{macro}({op['name']}, {'WithScalar' if op['scalar'] else 'TensorOnly'})" for op in ops]
    elif family == "composite":
        lines[1] = f"// X-macro rows, one per {family} op: {macro}(name, Differentiable | NonDifferentiable)."
        lines += [f"{macro}({op['name']}, {'Differentiable' if op['differentiable'] else 'NonDifferentiable'})"
                  for op in ops]
    elif family == "binary":
        lines[1] = f"// X-macro rows, one per {family} op: {macro}(name, Python | NoPython)."
        lines += [f"{macro}({op['name']}, {'NoPython' if op.get('python') == 'none' else 'Python'})" for op in ops]
    elif family == "activation":
        lines[1] = f"// X-macro rows, one per {family} op: {macro}(name, WithInplace | NoInplace)."
        lines += [f"{macro}({op['name']}, {'WithInplace' if op['inplace'] else 'NoInplace'})" for op in ops]
    else:
        lines += [f"{macro}({op['name']})" for op in ops]
    return "\n".join(lines) + "\n"


def gen_inplace_def(decl):
    lines = [HEADER, "// X-macro rows, one per in-place form of a function or composite op: GRAFT_INPLACE_OP(name_).",
             "// (No include guard: include it with the macro defined.)"]
    lines += [f"GRAFT_INPLACE_OP({op['name']}_)" for op in first_declarations(inplace_ops(decl))]
    return "\n".join(lines) + "\n"


def gen_methods(decl):
    lines = [HEADER, "// Tensor's methods for the ops of src/ops/ops.yaml; included inside class Tensor (tensor.h)."]
    for op in unary_with_inplace(decl):
        lines.append(f"Tensor {op['name']}() const;")
        lines.append(f"Tensor& {op['name']}_();")
    for op in decl["unary_predicate"]:
        lines.append(f"Tensor {op['name']}() const;")
    for op in decl["binary"] + decl["binary_predicate"] + decl["binary_bitwise"]:
        lines.append(f"Tensor {op['name']}(const Tensor& other) const;")
        if op.get("scalar", op in decl["binary_bitwise"]):
            lines.append(f"Tensor {op['name']}(const Scalar& other) const;")
    for op in decl["binary_bitwise"]:
        lines += [f"Tensor& {op['name']}_(const Tensor& other);", f"Tensor& {op['name']}_(const Scalar& other);"]
    for op in decl["function"] + decl["composite"]:
        if op["method"] and not op.get("python_only"):
            lines.append(f"{returns(op)} {op['name']}({', '.join(cpp_args(op)[1:])}) const;")
    for op in inplace_ops(decl):
        if op["method"]:
            lines.append(f"Tensor& {op['name']}_({', '.join(cpp_args(op)[1:])});")
    for op in decl["inplace_only"]:
        lines.append(f"Tensor& {op['name']}({', '.join(cpp_args(op)[1:])});")
    for op in decl["activation"]:
        if op["python"] == "torch":
            lines.append(f"Tensor {op['name']}({act_params(op, True)[2:]}) const;")
            if op["inplace"]:
                lines.append(f"Tensor& {op['name']}_({act_params(op, True)[2:]});")
    return "\n".join(lines) + "\n"


def gen_node(node, inputs, formulas, args=(), tensors=None, storage=None, struct=None, grad="grad", lists=(),
             outputs=("result",)):
    """The backward node `node` of an op whose differentiable tensor inputs are `inputs`
    ("self"[, "other"]), one derivative formula each (None: an input that gets no gradient, a
    wrapped number). A formula may also name `result`, the tensors in `tensors` (default:
    `inputs`) and the number arguments `args`, stored as `storage` says (default double). The
    node saves exactly what the formulas name; returns its C++ and the list of saved names.
    `struct` is the C++ name when several overloads' nodes show the same `node` name. `grad` is
    what the formulas call the incoming gradient (`grads`, the list, for an op with several
    outputs); `lists` are the list arguments among `inputs`, whose formula gives a gradient each;
    `outputs` the names of the op's outputs a formula may name."""
    tensors = inputs if tensors is None else tensors
    storage = dict(storage or {})
    named = [f for f in formulas if f is not None]
    saved = [v for v in (*tensors, *outputs) if any(uses(f, v) for f in named)]
    # a tensor's sizes, dtype or device (`self_sizes`) are kept without saving the tensor
    attributes = [f"{t}_{k}" for t in tensors for k in TENSOR_ATTRIBUTES if any(uses(f, f"{t}_{k}") for f in named)]
    storage.update({v: TENSOR_ATTRIBUTES[v.rsplit("_", 1)[1]][0] for v in attributes})
    storage.update({f"{t}_sizes": LIST_SIZES[0] for t in lists})
    kept = [a for a in (*args, *attributes) if any(uses(f, a) for f in named)]
    out = [f"struct {struct or node} final : Node {{",
           f'  std::string name() const override {{ return "{node}"; }}']
    for v in saved:
        out.append(f"  SavedVariable {v}_;")
    for a in kept:
        out.append(f"  {storage.get(a, 'double')} {a}_{{}};")
    # what the node holds of tensors: SavedVariables, and lists of them (an index list)
    held = saved + [a for a in kept if storage.get(a) == SAVED_INDEX_LIST]
    if held:
        out.append("  void release_variables() override {")
        out += [f"    {v}_.reset_data();" for v in held]
        out.append("  }")
        out.append("  void visit_held(HeldVisitor& v) const override {")
        out += [f'    v.saved({s}_, "{s}");' for s in saved]
        out += [f'    {a}_.visit(v, "{a}");' for a in held if a not in saved]
        out.append("  }")
    out.append("  TensorList apply(TensorList&& grads) override {")
    if grad == "grad":
        out.append("    const Tensor& grad = grads[0];")
    elif isinstance(grad, list):  # output_grads: one per output, in the order the outputs were recorded
        out += [f"    const Tensor {g} = grads.size() > {i} ? grads[{i}] : Tensor();" for i, g in enumerate(grad)]
    for v in saved:
        out.append(f"    const Tensor {v} = {v}_.unpack(this);")
    for a in kept:
        if storage.get(a) == SAVED_INDEX_LIST:
            out.append(f"    const std::vector<std::optional<Tensor>> {a} = {a}_.unpack(this);")
            continue
        by_ref = storage.get(a, "double") in ("Shape", "Scalar", "std::string", "std::optional<Scalar>",
                                              "std::optional<std::string>", LIST_SIZES[0])
        ref = "const auto&" if by_ref else f"const {storage.get(a, 'double')}"
        out.append(f"    {ref} {a} = {a}_;")
    if lists:
        out.append(f"    return {formulas[0]};")
    elif len(formulas) == 1:
        out.append(f"    return {{{formulas[0]}}};")
    else:
        out.append(f"    TensorList grad_inputs({len(formulas)});")
        for i, f in enumerate(formulas):
            if isinstance(f, Joint):
                if f.index == 0:
                    out += joint_gradients(f, [inputs.index(n) for n in f.names])
            elif f is not None:
                out.append(f"    if (should_compute_output({i})) grad_inputs[{i}] = {f};")
        out.append("    return grad_inputs;")
    out.append("  }")
    out.append("};")
    return "\n".join(out), saved + kept


def joint_gradients(formula, positions):
    """The lines of a node's apply computing a joint formula's gradients (Joint) for the inputs
    at `positions`: once, when any of them is needed, told which by grad_input_mask."""
    needed = [f"should_compute_output({i})" for i in positions]
    return [f"    if ({' || '.join(needed)}) {{",
            f"      const std::array<bool, {len(positions)}> grad_input_mask{{{', '.join(needed)}}};",
            f"      TensorList joint = {formula};",
            *[f"      grad_inputs[{i}] = std::move(joint[{k}]);" for k, i in enumerate(positions)],
            "    }"]


def guard_saved(formulas, v, line):
    """`line` saving `v`, kept only when a gradient whose formula names `v` will be computed
    (with several inputs: mm saves self only for mat2's gradient)."""
    named = [f for f in formulas if f is not None]
    need = [i for i, f in enumerate(formulas) if f is not None and uses(f, v)]
    if len(named) == 1 or len(need) == len(named):
        return [f"    {line}"]
    return [f"    if ({' || '.join(f'node->should_compute_output({i})' for i in need)}) {line}"]


def saved_arguments(saved, tensors, names, sources=None, lists=()):
    """The lines keeping what the node saves that is not a tensor input or an output: number
    arguments, a tensor's attributes (`self_sizes`), a list's sizes, an index list."""
    lines = []
    for v in saved:
        if v not in tensors and v not in names:
            tensor, _, attr = v.rpartition("_")
            source = f"{tensor}.{TENSOR_ATTRIBUTES[attr][1]}" if attr in TENSOR_ATTRIBUTES and tensor in tensors else v
            if tensor in lists:
                source = LIST_SIZES[1].format(tensor)
            source = (sources or {}).get(v, source)
            if (sources or {}).get(v) == INDEX_LIST:
                lines.append(f"    node->{v}_.save({v});")
                continue
            lines.append(f"    node->{v}_ = {source};")
    return lines


def gen_wiring(node, inputs, saved, formulas, tensors=None, sources=None, wrapped=(), lists=(), outputs="one",
               names=("result",)):
    """The autograd wiring of a generated forward: when an input requires grad, `node` with
    edges to `inputs`, its saved tensors and arguments, the history of `result`, then the saved
    result. With several inputs a saved tensor is kept only when a gradient that names it will
    be computed (guard_saved). A `wrapped` number's edge is empty;
    saved, it is the 0-d tensor PyTorch wraps it in, on the device of the op's first tensor. A
    list input (`lists`) gives the node an edge per tensor; `outputs="list"` records the node as
    the history of every tensor of the result list. `names` are the outputs' names: the node is
    the history of the first; a saved second output (an integer tensor) has no history to keep.
    `outputs="named"` (output_grads) records the node as the history of every named output."""
    tensors = inputs if tensors is None else tensors
    needed = [v for v in inputs if v not in wrapped]
    edges = ", ".join("&no_edge" if v in wrapped else f"&{v}" for v in inputs)
    if lists:  # the op's one differentiable input (check_function)
        wire = [f"  if (autograd::any_requires_grad({lists[0]})) {{",
                f"    auto node = make_intrusive<{node}>();",
                f"    autograd::collect_next_edges(node.get(), {lists[0]});"]
    else:
        wire = [f"  if (autograd::any_requires_grad({{{', '.join(f'&{v}' for v in needed)}}})) {{"]
    if wrapped:
        wire.append("    const Tensor no_edge;  // a wrapped number's input: no gradient flows to it")
    if not lists:
        wire.append(f"    auto node = detail::make_node<{node}>({{{edges}}});")
    device_of = next(v for v in tensors if v not in wrapped)
    for v in tensors:
        if v in saved:
            value = (f"detail::wrapped_number({v}, {device_of}.device())"
                     if v in wrapped else v)
            wire += guard_saved(formulas, v, f"node->{v}_ = SavedVariable({value}, false);")
    wire += saved_arguments(saved, tensors, names, sources, lists)
    recorded = names if outputs == "named" else names[:1]
    if outputs == "list":
        wire.append("    for (const Tensor& output : result) autograd::set_history(output, node);")
    else:
        wire += [f"    autograd::set_history({v}, node);" for v in recorded]
    for v in names:
        if v in saved:
            wire += guard_saved(formulas, v, f"node->{v}_ = SavedVariable({v}, {'true' if v in recorded else 'false'});")
    wire.append("  }")
    return wire


def gen_inplace_wiring(node, name, inputs, saved, formulas, tensors=None, sources=None, wrapped=()):
    """The autograd half of the in-place form `name` (src/autograd/inplace.cpp), as the lines
    before the forward writes self and the lines after. Before: whether the op records (self or
    another input of `inputs` requires grad, under PyTorch's leaf and view rules), then the node
    with its edges to the inputs' histories before the write and what the formulas save of the
    inputs: self's old value as a clone (original_self), an input that is self as an alias
    (saved_input). After: the version bump, self's history rebased onto the node, and self saved
    as the node's `result` when a formula names it."""
    tensors = inputs if tensors is None else tensors
    others = ", ".join(f"&{v}" for v in inputs if v not in wrapped and v != "self")
    edges = ", ".join("&no_edge" if v in wrapped else f"&{v}" for v in inputs)
    before = [f'  const bool record = detail::begin_inplace(self, "{name}", {{{others}}});',
              f"  intrusive_ptr<{node}> node;",
              "  if (record) {"]
    if wrapped:
        before.append("    const Tensor no_edge;  // a wrapped number's input: no gradient flows to it")
    before.append(f"    node = detail::make_node<{node}>({{{edges}}});")
    for v in tensors:
        if v in saved:
            value = ("detail::wrapped_number({v}, self.device())".format(v=v) if v in wrapped
                     else "detail::original_self(self)" if v == "self" else f"detail::saved_input({v}, self)")
            before += guard_saved(formulas, v, f"node->{v}_ = SavedVariable({value}, false);")
    before += saved_arguments(saved, tensors, ("result",), sources)
    before.append("  }")
    after = ["  detail::finish_inplace(self, node);"]
    if "result" in saved:
        after += ["  if (node) {", *guard_saved(formulas, "result", "node->result_ = SavedVariable(self, true);"), "  }"]
    return before, after


def gen_unary_cpp(decl, nodes, fns):
    """The unary families' graft::<name> (and name_, with its node's in-place wiring) and methods;
    the predicates have no node."""
    for op in unary_with_inplace(decl):
        name = op["name"]
        node, saved = gen_node(op["node"], ("self",), [op["derivative"]])
        if "bool_refusal" in op:
            refusal = json.dumps(op["bool_refusal"]) if op["bool_refusal"] else "nullptr"
            forward = f'detail::unary_keep_forward(self, "{name}", {kernel_id(name)}, {refusal})'
        elif "integers" in op:
            forward = (f'detail::unary_rounding_forward(self, "{name}", {kernel_id(name)}, "{op["refused_as"]}", '
                       f'/*copy_integers=*/{"true" if op["integers"] == "copy" else "false"})')
        else:
            forward = f'detail::unary_float_forward(self, "{name}", {kernel_id(name)})'
        nodes.append(node)
        wire = gen_wiring(op["node"], ("self",), saved, [op["derivative"]])
        before, after = gen_inplace_wiring(op["node"], f"{name}_", ("self",), saved, [op["derivative"]])
        fns.append("\n".join([
            f"Tensor {name}(const Tensor& self) {{",
            f"  Tensor result = {forward};",
            *wire,
            "  return result;",
            "}",
            f"Tensor& {name}_(Tensor& self) {{",
            *before,
            f"  {forward[:-1]}, &self);",
            *after,
            "  return self;",
            "}",
            f"Tensor Tensor::{name}() const {{ return graft::{name}(*this); }}",
            f"Tensor& Tensor::{name}_() {{ return graft::{name}_(*this); }}",
        ]))
    for op in decl["unary_predicate"]:
        name = op["name"]
        fns.append("\n".join([
            f"Tensor {name}(const Tensor& self) {{",
            f'  return detail::unary_predicate_forward(self, "{name}", {kernel_id(name)});',
            "}",
            f"Tensor Tensor::{name}() const {{ return graft::{name}(*this); }}",
        ]))


def gen_binary_cpp(decl, nodes, fns):
    """The binary, comparison and bitwise families' graft::<name> (number overloads, in-place
    forms and operators where declared) and methods."""
    for op in decl["binary"]:
        name = op["name"]
        node, saved = gen_node(op["node"], ("self", "other"), [op["self"], op["other"]])
        nodes.append(node)
        wire = gen_wiring(op["node"], ("self", "other"), saved, [op["self"], op["other"]])
        fns.append("\n".join([
            f"Tensor {name}(const Tensor& self, const Tensor& other) {{",
            f'  Tensor result = detail::binary_generated_forward(self, other, "{name}", {binary_kernel_id(name)}, '
            f"detail::BinaryResult::{BINARY_RESULTS[op['result']]});",
            *wire,
            "  return result;",
            "}",
            f"Tensor Tensor::{name}(const Tensor& other) const {{ return graft::{name}(*this, other); }}",
        ]))
    for op in decl["binary_bitwise"]:  # integer and bool tensors: the in-place forms never record
        name, k = op["name"], binary_kernel_id(op["name"])
        fns.append("\n".join(
            line for t in ("Tensor", "Scalar") for line in (
                f"Tensor& {name}_(Tensor& self, const {t}& other) {{",
                f'  detail::begin_inplace(self, "{name}_", {{{"&other" if t == "Tensor" else ""}}});',
                f'  detail::binary_bitwise_forward(self, other, "{name}", {k}, &self);',
                "  detail::finish_inplace(self, nullptr);",
                "  return self;",
                "}",
                f"Tensor& Tensor::{name}_(const {t}& other) {{ return graft::{name}_(*this, other); }}")))
    for op in decl["binary_predicate"] + decl["binary_bitwise"]:
        name = op["name"]
        forward = "binary_bitwise_forward" if op in decl["binary_bitwise"] else "binary_predicate_forward"
        lines = [f"Tensor {name}(const Tensor& self, const Tensor& other) {{",
                 f'  return detail::{forward}(self, other, "{name}", {binary_kernel_id(name)});',
                 "}",
                 f"Tensor Tensor::{name}(const Tensor& other) const {{ return graft::{name}(*this, other); }}"]
        if op.get("scalar", True):
            lines += [f"Tensor {name}(const Tensor& self, const Scalar& other) {{",
                      f'  return detail::{forward}(self, other, "{name}", {binary_kernel_id(name)});',
                      "}",
                      f"Tensor Tensor::{name}(const Scalar& other) const {{ return graft::{name}(*this, other); }}"]
        if "operator" in op:
            lines += [f"Tensor operator{op['operator']}(const Tensor& self, const {t}& other) {{ "
                      f"return {name}(self, other); }}" for t in ("Tensor", "Scalar")]
        fns.append("\n".join(lines))


def gen_activation_cpp(decl, nodes, fns):
    """The activations' graft::<name>, with their argument checks, in-place forms and methods."""
    for op in decl["activation"]:
        name, params, names = op["name"], act_params(op, False), act_names(op)
        node, saved = gen_node(op["node"], ("self",), [op["derivative"]], tuple(op["args"]))
        nodes.append(node)
        wire = gen_wiring(op["node"], ("self",), saved, [op["derivative"]])
        values = f"const std::array<double, {len(op['args'])}> args{{{names[2:]}}};" if op["args"] else ""
        lines = [f"Tensor {name}(const Tensor& self{params}) {{"]
        if op["check"]:
            lines.append(f"  GRAFT_CHECK({op['check'][0]}, RuntimeError, {error_parts(op['check'][1])});")
        if values:
            lines.append(f"  {values}")
        lines += [f'  Tensor result = detail::activation_forward(self, "{name}", "{op["refused_as"]}", {kernel_id(name)}, '
                  f'{"args.data()" if values else "nullptr"});',
                  *wire,
                  "  return result;",
                  "}"]
        if op["inplace"]:
            lines += gen_activation_inplace(op, nodes, saved, values)
        if op["python"] == "torch":
            lines.append(f"Tensor Tensor::{name}({params[2:]}) const {{ return graft::{name}(*this{names}); }}")
            if op["inplace"]:
                lines.append(f"Tensor& Tensor::{name}_({params[2:]}) {{ return graft::{name}_(*this{names}); }}")
        fns.append("\n".join(lines))


def function_forward(op, names, outputs):
    """The lines of a function op's graft::<name> that make its result: views of self over the
    geometries its forward computes (no data of their own), or its forward's result(s)."""
    name = op["name"]
    if op.get("view") and outputs == "list":  # views of self, one per geometry, outputs of one node
        return [f"  const std::vector<detail::ViewGeometry> geometries = detail::{name}_geometry({names});",
                   f'  std::vector<Tensor> result = detail::make_multi_output_views(self, geometries, "{op["node"]}");']
    elif op.get("view"):  # a view of self over the geometry its forward computes: no data of its own
        return [f"  const detail::ViewGeometry geometry = detail::{name}_geometry({names});",
                   "  Tensor result = autograd::make_view(self, geometry.sizes, geometry.strides, geometry.offset);"]
    elif isinstance(op.get("returns"), list):
        return [f'  alloc::MemoryOpScope mem_scope("{name}");',
                   f"  auto [{', '.join(op['returns'])}] = detail::{name}_forward({names});"]
    else:
        return [f'  alloc::MemoryOpScope mem_scope("{name}");',
                   f"  {returns(op)} result = detail::{name}_forward({names});"]


def autocast_prologue(op, args):
    """The first lines of a function op on an autocast list: inside an autocast region, the op
    called again on its tensor arguments cast by the list's policy, nested ops suspended."""
    if "autocast" not in op:
        return []
    policy = AUTOCAST_POLICIES.get(op["autocast"])
    if policy is None:
        fail(f"op '{op['name']}': autocast is one of {sorted(AUTOCAST_POLICIES)}")
    call = ", ".join(f"autocast::cast({a}, autocast::CastPolicy::{policy})" if t == "const Tensor&" else a
                     for t, a, _ in args)
    return ["  if (autocast::active()) [[unlikely]] {",
            "    const autocast::Suspend suspend;",
            f"    return {op['name']}({call});",
            "  }"]


def gen_function_cpp(op, shared_nodes, nodes):
    """One function op: its node (appended to `nodes`), graft::<name> with its autograd wiring,
    its method and its in-place form."""
    name, args, wrapped = op["name"], parse_args(op), wrapped_numbers(op)
    lists = tuple(a for t, a, _ in args if t == "const TensorList&")
    tensors = [a for t, a, _ in args if t in ("const Tensor&", "const TensorList&") or a in wrapped]
    inputs = tuple(op["derivatives"])
    formulas = [op["derivatives"][a] for a in inputs]
    numbers = tuple(a for t, a, _ in args if a not in tensors)
    storage = {a: ARG_STORAGE[t] for t, a, _ in args}
    # overloads showing one node name (AddBackward0 for add.Tensor and add.Scalar) get a struct each
    struct = f"{op['node']}_{op.get('overload', name)}" if op["node"] in shared_nodes else op["node"]
    node, saved = gen_node(op["node"], inputs, formulas, numbers, tensors, storage, struct, grad_name(op), lists,
                           output_names(op))
    nodes.append(node)
    # an IntArrayRef argument is kept as a Shape (a copy: the caller's array does not outlive the call)
    sources = {a: f"{a}.shape()" for t, a, _ in args if t == "IntArrayRef"}
    sources.update({a: INDEX_LIST for t, a, _ in args if t == INDEX_LIST})  # saved tensor by tensor
    outputs = "list" if op.get("returns") == "TensorList" else "named" if op.get("output_grads") else "one"
    wire = gen_wiring(struct, inputs, saved, formulas, tensors, sources, wrapped, lists, outputs, output_names(op))
    params = ", ".join(f"{t} {a}" for t, a, _ in args)  # without the defaults the header gives
    names = ", ".join(a for _, a, _ in args)
    forward = function_forward(op, names, outputs)
    result = "{" + ", ".join(op["returns"]) + "}" if isinstance(op.get("returns"), list) else "result"
    lines = [f"{returns(op)} {name}({params}) {{",
             *autocast_prologue(op, args),
             *forward,
             *wire,
             f"  return {result};",
             "}"]
    if op["method"]:
        lines.append(f"{returns(op)} Tensor::{name}({', '.join(f'{t} {a}' for t, a, _ in args[1:])}) const {{ "
                     f"return graft::{name}(*this{''.join(', ' + a for _, a, _ in args[1:])}); }}")
    if op.get("inplace"):
        if "inplace_node" in op:  # the in-place form's own node name, with the same formulas
            struct = op["inplace_node"]
            node, saved = gen_node(struct, inputs, formulas, numbers, tensors, storage, struct, grad_name(op), lists,
                                   output_names(op))
            nodes.append(node)
        lines += gen_inplace(op, struct, saved, formulas, tensors, sources, wrapped)
        if op["method"]:
            lines.append(inplace_method(op))
    return "\n".join(lines)


def gen_ops_cpp(decl):
    nodes, fns = [], []
    gen_unary_cpp(decl, nodes, fns)
    gen_binary_cpp(decl, nodes, fns)
    gen_activation_cpp(decl, nodes, fns)
    shared_nodes = {n for n in (op["node"] for op in decl["function"])
                    if sum(op["node"] == n for op in decl["function"]) > 1}
    for op in decl["function"]:
        fns.append(gen_function_cpp(op, shared_nodes, nodes))
    for op in decl["composite"]:  # a composite's graft::<name>_ is written by hand next to graft::<name>
        if op.get("inplace") and op["method"]:
            fns.append(inplace_method(op))
    for op in decl["inplace_only"]:
        node, _ = gen_node(op["node"], tuple(op["derivatives"]), list(op["derivatives"].values()))
        nodes.append(node)
        fns.append(gen_inplace_only(op))
    for op in decl["composite"]:  # graft::<name> itself is written by hand (its defined_in file)
        if op["method"] and not op.get("python_only"):
            args = parse_args(op, any_type=True)
            fns.append(f"{returns(op)} Tensor::{op['name']}({', '.join(f'{t} {a}' for t, a, _ in args[1:])}) const {{ "
                       f"return graft::{op['name']}(*this{''.join(', ' + a for _, a, _ in args[1:])}); }}")
    return "\n".join([
        HEADER,
        "// The ops of src/ops/ops.yaml: backward nodes (derivatives in graft ops, so double backward",
        "// works), forwards with their autograd wiring, in-place forms and Tensor methods.",
        "#include <array>",
        "#include <cmath>",
        "",
        '#include "autograd/node_util.h"',
        '#include "graft/alloc/memory_history.h"',
        '#include "graft/backend/generated_kernel_ids.h"',
        '#include "graft/ops/autocast.h"',
        '#include "graft/ops/derivatives.h"',
        '#include "graft/ops/generated_forwards.h"',
        "",
        "namespace graft {",
        "namespace {",
        "using namespace derivatives;  // the formulas' helpers (graft/ops/derivatives.h)",
        "",
        "\n\n".join(nodes),
        "",
        "}  // namespace",
        "",
        "\n\n".join(fns),
        "",
        "}  // namespace graft",
        "",
    ])


def gen_activation_inplace(op, nodes, saved, values):
    """An activation's in-place form: the op's own node (saving a clone of self where its formula
    reads self), or the `inplace_node` whose formula reads the result written over self."""
    name, params = op["name"], act_params(op, False)
    node, formula = op["node"], op["derivative"]
    if "inplace_node" in op:
        node, formula = op["inplace_node"], op["inplace_derivative"]
        code, saved = gen_node(node, ("self",), [formula], tuple(op["args"]))
        nodes.append(code)
    before, after = gen_inplace_wiring(node, f"{name}_", ("self",), saved, [formula])
    return [f"Tensor& {name}_(Tensor& self{params}) {{",
            *before,
            *([f"  {values}"] if values else []),
            f'  detail::activation_forward(self, "{name}", "{op["refused_as"]}", {kernel_id(name)}, '
            f'{"args.data()" if values else "nullptr"}, &self);',
            *after,
            "  return self;",
            "}"]


def inplace_method(op):
    """Tensor::name_(...), calling graft::name_(*this, ...)."""
    rest = parse_args(op, any_type=True)[1:]
    return (f"Tensor& Tensor::{op['name']}_({', '.join(f'{t} {a}' for t, a, _ in rest)}) {{ "
            f"return graft::{op['name']}_({', '.join(['*this'] + [a for _, a, _ in rest])}); }}")


def gen_inplace(op, struct, saved, formulas, tensors, sources, wrapped):
    """The in-place form name_ of a function op: its forward writes self (`into`), between the
    in-place wiring's two halves (gen_inplace_wiring)."""
    name, args = op["name"], parse_args(op, any_type=True)
    inputs = tuple(op["derivatives"])
    before, after = gen_inplace_wiring(struct, f"{name}_", inputs, saved, formulas, tensors, sources, wrapped)
    params = ", ".join(["Tensor& self"] + [f"{t} {a}" for t, a, _ in args[1:]])
    return [f"Tensor& {name}_({params}) {{",
            f'  alloc::MemoryOpScope mem_scope("{name}_");',
            *before,
            f"  detail::{name}_forward({', '.join(a for _, a, _ in args)}, &self);",
            *after,
            "  return self;",
            "}"]


def gen_inplace_only(op):
    """An op that only exists in place (fill_, zero_, copy_): PyTorch's in-place rules (told
    whether the op is recorded), then the hand-written detail::<name>write checks its arguments and
    writes self; then the version bump and, when recording, the node on self's old history,
    rebased onto self."""
    name, args = op["name"], parse_args(op, any_type=True)
    tensors = ["self"] + [a for t, a, _ in args[1:] if t == "const Tensor&"]
    names = ", ".join(a for _, a, _ in args)
    edges = ", ".join(f"&{a}" for a in op["derivatives"])
    rest = ", ".join(f"{t} {a}" for t, a, _ in args[1:])
    return "\n".join([
        f"Tensor& {name}({', '.join(f'{t} {a}' for t, a, _ in args)}) {{",
        f"  const bool record = autograd::any_requires_grad({{{', '.join('&' + t for t in tensors)}}});",
        f'  detail::check_tensor(self, "{name}", "self");',
        f"  autograd::check_inplace(self, record, /*check_overlap=*/{'false' if op.get('allows_overlap') else 'true'});",
        f"  detail::{name}write({names});",
        "  autograd::bump_version(self);",
        "  if (record && is_floating_point(self.dtype())) {",
        f"    auto node = detail::make_node<{op['node']}>({{{edges}}});  // self's history before the write",
        "    node->add_input_metadata(self);",
        "    autograd::rebase_history(self, node);",
        "  }",
        "  return self;",
        "}",
        f"Tensor& Tensor::{name}({rest}) {{ return graft::{name}({', '.join(['*this'] + [a for _, a, _ in args[1:]])}); }}",
    ])


def unary_with_inplace(decl):
    return [op for family in UNARY_WITH_INPLACE for op in decl[family]]


def all_ops(decl):
    """The ops with a unary kernel (GeneratedKernel), in table order."""
    return unary_with_inplace(decl) + decl["unary_predicate"] + decl["activation"]


def all_binary_ops(decl):
    """The ops with a binary kernel (GeneratedBinaryKernel), in table order."""
    return decl["binary"] + decl["binary_predicate"] + decl["binary_bitwise"]


def kernel_id(name):
    return f"kernel::GeneratedKernel::{name}"


def binary_kernel_id(name):
    return f"kernel::GeneratedBinaryKernel::{name}"


def gen_kernel_ids(decl):
    lines = [HEADER, "#pragma once", "/// The generated ops' numbers in a backend's table of generated kernels",
             "/// (KernelTable::generated, graft/backend/kernels.h).", "", "namespace graft::kernel {", "",
             "enum class GeneratedKernel : int {"]
    lines += [f"  {op['name']}," for op in all_ops(decl)]
    lines += ["};", f"inline constexpr int kNumGeneratedKernels = {len(all_ops(decl))};", "",
              "/// The generated binary ops' numbers in a backend's table of them (KernelTable::generated_binary).",
              "enum class GeneratedBinaryKernel : int {"]
    lines += [f"  {op['name']}," for op in all_binary_ops(decl)]
    lines += ["};", f"inline constexpr int kNumGeneratedBinaryKernels = {len(all_binary_ops(decl))};", "",
              "}  // namespace graft::kernel", ""]
    return "\n".join(lines)


def gen_kernels_h(decl):
    lines = [HEADER, "#pragma once", "// CPU kernels of the ops of src/ops/ops.yaml.",
             '#include "graft/backend/generated_kernel_ids.h"', '#include "graft/backend/kernels.h"', "",
             "namespace graft::cpu {", "", "// unary_float: out (floating) = f(a), a already of out's dtype"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* args);" for op in decl["unary_float"]]
    lines += ["// unary_rounding: out = f(a), both floating"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* args);" for op in decl["unary_rounding"]]
    lines += ["// unary_keep: out = f(a), both of a's dtype"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* args);" for op in decl["unary_keep"]]
    lines += ["// unary_predicate: out (bool) = f(a), any dtype of a"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* args);" for op in decl["unary_predicate"]]
    lines += ["// activation: out = f(a; args), both floating"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* args);" for op in decl["activation"]]
    lines += ["// binary: out = f(a, b), broadcast, a and b of out's dtype"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const Tensor& b);" for op in decl["binary"]]
    lines += ["// binary_predicate: out (bool) = f(a, b), broadcast, a and b of one dtype (any)"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const Tensor& b);"
              for op in decl["binary_predicate"]]
    lines += ["// binary_bitwise: out = f(a, b), broadcast, all three integer or bool"]
    lines += [f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const Tensor& b);"
              for op in decl["binary_bitwise"]]
    lines += ["// The CPU tables of them, indexed by GeneratedKernel and GeneratedBinaryKernel",
              "extern const kernel::UnaryKernelFn generated_kernels[kernel::kNumGeneratedKernels];",
              "extern const kernel::BinaryKernelFn generated_binary_kernels[kernel::kNumGeneratedBinaryKernels];"]
    lines += ["", "}  // namespace graft::cpu", ""]
    return "\n".join(lines)


def unary_kernel_defs(decl):
    """The CPU kernels of the unary families and the activations: one elementwise loop each over
    the declared kernel expression, dispatched over the dtypes the op takes."""
    lines = []
    for op in decl["unary_float"] + decl["unary_rounding"]:
        lines += [
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* /*args*/) {{",
            f'  GRAFT_DISPATCH_FLOATING(out.dtype(), "{op["name"]}", [&] {{',
            "    using T = scalar_t;",
            f"    elementwise<T, T>(out, [](T x) -> T {{ return {op['kernel']}; }}, a);",
            "  });",
            "}",
        ]
    for op in decl["unary_keep"]:
        # the forward refuses bool before the kernel runs: the loop is not built for it (a
        # function template, so `if constexpr` discards it)
        skip = "std::is_same_v<T, bool>" if op["bool_refusal"] else "false"
        lines += [
            f"template <class T> void {op['name']}_loop(const Tensor& out, const Tensor& a) {{",
            f"  if constexpr (!{skip}) elementwise<T, T>(out, [](T x) -> T {{ return {op['kernel']}; }}, a);",
            "}",
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* /*args*/) {{",
            f'  GRAFT_DISPATCH_ALL(out.dtype(), "{op["name"]}", [&] {{ {op["name"]}_loop<scalar_t>(out, a); }});',
            "}",
        ]
    for op in decl["unary_predicate"]:
        lines += [
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* /*args*/) {{",
            f'  GRAFT_DISPATCH_ALL(a.dtype(), "{op["name"]}", [&] {{',
            "    using T = scalar_t;",
            f"    elementwise<bool, T>(out, [](T x) -> bool {{ return {op['kernel']}; }}, a);",
            "  });",
            "}",
        ]
    for op in decl["activation"]:
        # the arguments as T, named as the declaration names them, for the kernel expression
        unpack = "".join(f"    [[maybe_unused]] const T {a} = static_cast<T>(args[{i}]);\n"
                         for i, a in enumerate(op["args"]))
        lines += [
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const double* args) {{",
            f'  GRAFT_DISPATCH_FLOATING(out.dtype(), "{op["name"]}", [&] {{',
            "    using T = scalar_t;",
            *([unpack.rstrip("\n")] if unpack else ["    (void)args;"]),
            f"    elementwise<T, T>(out, [=](T x) -> T {{ return {op['kernel']}; }}, a);",
            "  });",
            "}",
        ]
    return lines


def binary_kernel_defs(decl):
    """The CPU kernels of the binary, comparison and bitwise families."""
    lines = []
    for op in decl["binary"]:
        dispatch = "GRAFT_DISPATCH_ALL" if op["result"] == "promote" else "GRAFT_DISPATCH_FLOATING"
        lines += [
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const Tensor& b) {{",
            f'  {dispatch}(out.dtype(), "{op["name"]}", [&] {{',
            "    using T = scalar_t;",
            f"    elementwise<T, T, T>(out, [](T x, T y) -> T {{ return {op['kernel']}; }}, a, b);",
            "  });",
            "}",
        ]
    for op in decl["binary_predicate"]:
        lines += [
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const Tensor& b) {{",
            f'  GRAFT_DISPATCH_ALL(a.dtype(), "{op["name"]}", [&] {{',
            "    using T = scalar_t;",
            f"    elementwise<bool, T, T>(out, [](T x, T y) -> bool {{ return {op['kernel']}; }}, a, b);",
            "  });",
            "}",
        ]
    for op in decl["binary_bitwise"]:  # the forward refuses floats: no loop is built for them
        lines += [
            f"template <class T> void {op['name']}_loop(const Tensor& out, const Tensor& a, const Tensor& b) {{",
            "  if constexpr (!std::is_floating_point_v<T>)",
            f"    elementwise<T, T, T>(out, [](T x, T y) -> T {{ return {op['kernel']}; }}, a, b);",
            "}",
            f"void {op['name']}_kernel(const Tensor& out, const Tensor& a, const Tensor& b) {{",
            f'  GRAFT_DISPATCH_ALL(out.dtype(), "{op["name"]}", [&] {{ {op["name"]}_loop<scalar_t>(out, a, b); }});',
            "}",
        ]
    return lines


def gen_kernels_cpp(decl):
    lines = [HEADER, "#include <cmath>", "#include <cstdlib>", "#include <type_traits>", "", '#include "backend/cpu/generated_kernels.h"', '#include "backend/cpu/loops.h"',
             "", "namespace graft::cpu {", ""]
    lines += unary_kernel_defs(decl) + binary_kernel_defs(decl)
    lines += ["", "const kernel::UnaryKernelFn generated_kernels[kernel::kNumGeneratedKernels] = {"]
    lines += [f"    &{op['name']}_kernel," for op in all_ops(decl)]
    lines += ["};", "const kernel::BinaryKernelFn generated_binary_kernels[kernel::kNumGeneratedBinaryKernels] = {"]
    lines += [f"    &{op['name']}_kernel," for op in all_binary_ops(decl)]
    lines += ["};", "", "}  // namespace graft::cpu", ""]
    return "\n".join(lines)


def gen_registry_def(family, ops):
    macro = f"GRAFT_{family.upper()}_CASE"
    if family == "unary_float":
        lines = [HEADER, "// The op registry's rows for the unary_float ops:",
                 f"// {macro}(name, Domain, reference expression of a double x)."]
        lines += [f"{macro}({op['name']}, {op['domain']}, ({op['reference']}))" for op in ops]
    elif family == "unary_rounding":
        lines = [HEADER, "// The op registry's rows for the unary_rounding ops:",
                 f"// {macro}(name, copies integers (bool), (reference expression of a double x), kinks...)."]
        lines += [f"{macro}({op['name']}, {'true' if op['integers'] == 'copy' else 'false'}, ({op['reference']}), "
                  f"{', '.join(str(k) for k in op['kinks'])})" for op in ops]
    elif family == "unary_keep":
        lines = [HEADER, "// The op registry's rows for the unary_keep ops:",
                 f"// {macro}(name, Domain, refuses bool (bool), (reference expression of a double x))."]
        lines += [f"{macro}({op['name']}, {op['domain']}, {'true' if op['bool_refusal'] else 'false'}, "
                  f"({op['reference']}))" for op in ops]
    elif family == "binary":
        lines = [HEADER, "// The op registry's rows for the binary ops:",
                 f"// {macro}(name, Promote | Float | FloatingOnly, (reference expression of doubles x, y))."]
        lines += [f"{macro}({op['name']}, {BINARY_RESULTS[op['result']]}, ({op['reference']}))" for op in ops]
    elif family == "binary_predicate":
        lines = [HEADER, "// The op registry's rows for the binary_predicate ops:",
                 f"// {macro}(name, WithScalar | TensorOnly, (reference: a bool expression of doubles x, y))."]
        lines += [f"{macro}({op['name']}, {'WithScalar' if op['scalar'] else 'TensorOnly'}, ({op['reference']}))"
                  for op in ops]
    elif family == "binary_bitwise":
        lines = [HEADER, "// The op registry's rows for the binary_bitwise ops:",
                 f"// {macro}(name, (reference expression of int64_t x, y))."]
        lines += [f"{macro}({op['name']}, ({op['reference']}))" for op in ops]
    elif family == "activation":
        lines = [HEADER, "// The op registry's rows for the activation ops, one per argument set (the defaults first):",
                 f"// {macro}(name, \"variant\", Domain, WithInplace | NoInplace, (self[, explicit arguments]),",
                 "//     (reference expression of a double x, the arguments substituted), kinks...)."]
        for op in ops:
            inplace = "WithInplace" if op["inplace"] else "NoInplace"
            for variant, values, explicit, kinks in act_variants(op):
                call = "".join(f", {cpp_number(v)}" for v in explicit_prefix(op, explicit))
                lines.append(f'{macro}({op["name"]}, "{variant}", {op["domain"]}, {inplace}, (self{call}), '
                             f'({substitute(op["reference"], values)}){"".join(f", {k}" for k in kinks)})')
    else:
        lines = [HEADER, "// The op registry's rows for the unary_predicate ops:",
                 f"// {macro}(name, reference: a bool expression of a double x)."]
        lines += [f"{macro}({op['name']}, ({op['reference']}))" for op in ops]
    return "\n".join(lines) + "\n"


def gen_forwards_h(decl):
    lines = [HEADER, "#pragma once",
             "/// The hand-written halves of the ops of src/ops/ops.yaml, in the ops layer: the function",
             "/// family's forwards (checks and kernels, no autograd; a view's forward is its geometry:",
             "/// sizes, strides, offset into self's storage; an op with an in-place form writes `into`",
             "/// when given) and the in-place-only ops' writes. graft::<name> (src/autograd/generated_functions.cpp) records",
             "/// the backward around them. Internal to graft.",
             '#include "graft/ops/forwards.h"', '#include "graft/ops/ops.h"', "", "namespace graft::detail {", ""]
    for op in decl["function"]:
        params = ", ".join(f"{t} {a}" for t, a, _ in parse_args(op))
        if op.get("inplace"):  # given, the forward writes into it: an in-place form's self
            params += ", Tensor* into = nullptr"
        if op.get("view"):
            geometry = "std::vector<ViewGeometry>" if op.get("returns") == "TensorList" else "ViewGeometry"
            lines.append(f"{geometry} {op['name']}_geometry({params});")
        else:
            lines.append(f"{returns(op)} {op['name']}_forward({params});")
    for op in decl["inplace_only"]:
        params = ", ".join(f"{t} {a}" for t, a, _ in parse_args(op, any_type=True))
        lines.append(f"void {op['name']}write({params});")
    lines += ["", "}  // namespace graft::detail", ""]
    return "\n".join(lines)


def gen_activation_bindings(decl):
    """pybind11 definitions of the activation ops, included by python/csrc/nn_functional.cpp
    inside its module function, where `nn` is _C._nn, `m` is _C and `cls` is _C.Tensor."""
    lines = [HEADER, "// The activation ops' Python bindings: _C._nn.<name> (and <name>_ in place), plus graft.<name>",
             "// and Tensor.<name> where PyTorch has them; _C._activation_ops lists (name, \"nn\" | \"torch\",",
             "// ((arg, default), ...))."]
    lines.append("{")
    lines.append("  py::list activation_ops;")
    for op in decl["activation"]:
        name = op["name"]
        # the arguments arrive as Python objects and pass through number_arg (PyTorch's Number
        # checks: a tensor is refused)
        params = "".join(f", py::handle {a}" for a in op["args"])
        names = "".join(f', number_arg("{name}", "{a}", {a})' for a in op["args"])
        pyargs = "".join(f', py::arg("{a}") = {cpp_number(d)}' for a, d in op["args"].items())
        lines.append(f'  nn.def("{name}", [](const Tensor& self{params}) {{ return graft::{name}(self{names}); }}, '
                     f'py::arg("input"){pyargs});')
        if op["inplace"]:
            lines.append(f'  nn.def("{name}_", [](py::handle s{params}) {{ Tensor t = self_of(s, "{name}_"); '
                         f'graft::{name}_(t{names}); return s; }}, py::arg("input"){pyargs});')
        if op["python"] == "torch":
            lines.append(f'  def_both(m, cls, "{name}", [](const Tensor& self{params}) {{ return graft::{name}(self{names}); }}'
                         f'{pyargs});')
        defaults = "".join(f'py::make_tuple("{a}", {cpp_number(d)}), ' for a, d in op["args"].items())
        lines.append(f'  activation_ops.append(py::make_tuple("{name}", "{op["python"]}", '
                     f'py::make_tuple({defaults.rstrip(", ")})));')
    lines.append('  m.attr("_activation_ops") = py::tuple(activation_ops);')
    lines.append("}")
    return "\n".join(lines) + "\n"


def python_default(name, d):
    """A C++ default as the default of a PyTorch-style signature."""
    d = d.strip()
    if d in ("false", "true"):
        return d.capitalize()
    if d in ("std::nullopt", "Tensor()"):
        return "None"
    if d.startswith("{") and d.endswith("}"):
        return "[" + d[1:-1] + "]"
    if re.fullmatch(r"-?[0-9]+(\.[0-9]*)?(e-?[0-9]+)?", d):
        return d
    if re.fullmatch(r'"\w*"', d):
        return "'" + d[1:-1] + "'"
    m = re.fullmatch(r"Reduction::(\w+)", d)
    if m:
        return "'" + m.group(1).lower() + "'"
    m = re.fullmatch(r"MemoryFormat::(\w+)", d)
    if m:  # Python's name of the format (contiguous_format)
        return {"Contiguous": "contiguous_format", "Preserve": "preserve_format", "ChannelsLast": "channels_last",
                "ChannelsLast3d": "channels_last_3d"}[m.group(1)]
    return fail(f"op '{name}': the default '{d}' has no Python spelling")


def python_signature(op):
    """The op's PyTorch-style signature, as the generated binding's parser reads it and its
    TypeError lists it: "sum(Tensor input, *, ScalarType? dtype=None)" (self is `input`)."""
    args, optional, star = parse_args(op, any_type=True), python_none(op), keyword_only(op)
    params = []
    for i, (t, a, d) in enumerate(args):
        if a in star and "*" not in params:
            params.append("*")
        kind = PY_ARGS[t][0]
        if a in op.get("python_sequences", []):
            kind = "int[]"
        if a in optional:
            kind += "?"
        d = op.get("python_defaults", {}).get(a, d)
        default = "" if d is None else "=" + python_default(op["name"], d)
        tensor_self = a == "self" and t in ("const Tensor&", "Tensor&")  # a number self stays self
        params.append(f"{kind} {'input' if tensor_self else a}{default}")
    return f"{'[hidden] ' if op.get('python_hidden') else ''}{op['name']}({', '.join(params)})"


def overload_case(i, op):
    """The lines of one overload in a generated binding's switch: its arguments converted (the
    tensor `self` is the method's self, or the function's argument at its place; the ones after
    it are the method's one place earlier: `o` is 1 for the function, 0 for the method), then
    graft::<name> called, without the GIL when a tensor is large."""
    args, optional = parse_args(op, any_type=True), python_none(op)
    names = [a for t, a, _ in args if a == "self" and t in ("const Tensor&", "Tensor&")]
    at_self = [a for _, a, _ in args].index(names[0]) if names else len(args)
    lines = [f"    case {i}: {{"]
    for k, (t, a, _) in enumerate(args):
        conv = "optional_tensor" if t == "const Tensor&" and a in optional else PY_ARGS[t][1]
        index = str(k) if k <= at_self else f"o + {k - 1}"
        expr = f"reduction_from_string(p.string({index}))" if conv == "reduction" else f"p.{conv}({index})"
        if k == at_self:
            expr = f"self ? *self : {expr}"
        # an in-place op's self is written through its handle (the Python object returned is self's)
        lines.append(f"      {'auto' if t == 'Tensor&' else 'const auto'} a_{a} = {expr};")
    heavy = " || ".join(f"(a_{a}.defined() && is_heavy(a_{a}))" if a in optional else f"is_heavy(a_{a})"
                        for t, a, _ in args if t in ("const Tensor&", "Tensor&")) or "false"
    call = ", ".join(f"a_{a}" for _, a, _ in args)
    result = f"py::cast(maybe_without_gil({heavy}, [&] {{ return graft::{cpp_name(op)}({call}); }}))"
    if returns(op) == RETURNS["TensorList"]:  # a tuple, as PyTorch returns a list of tensors
        result = f"py::tuple({result})"
    elif isinstance(op.get("returns"), list) and len(op["returns"]) == 3:  # graft.return_types.<name>
        result = (f'[&] {{ auto [a, b, c] = maybe_without_gil({heavy}, [&] {{ return graft::{cpp_name(op)}({call}); }});'
                  f' return make_return_tuple("{op["name"]}", {{std::move(a), std::move(b), std::move(c)}}); }}()')
    elif isinstance(op.get("returns"), list) and op["python"] != "nn":  # graft.return_types.<name>
        result = (f'[&] {{ auto [first, second] = maybe_without_gil({heavy}, [&] {{ return graft::{cpp_name(op)}({call}); }});'
                  f' return make_return_pair("{op["name"]}", std::move(first), std::move(second)); }}()')
    lines.append(f"      return {result};")
    lines.append("    }")
    return lines


def overload_rank(op):
    """Where PyTorch lists an overload: by its number of Scalar arguments (optional ones too:
    clamp's tensor bounds before its numbers), and among as many, a number self (pow(Number
    self, Tensor exponent), where(condition, Number self, Tensor other)) before a number
    elsewhere."""
    args = parse_args(op, any_type=True)
    number_self = any(a == "self" and t == "const Scalar&" for t, a, _ in args)
    return sum(t in ("const Scalar&", "std::optional<Scalar>") for t, _, _ in args), not number_self


# the in-place forms bound by hand in python/csrc/tensor_ops.cpp (a Python number or a tensor
# in one argument, through the operators' shared helpers); every other in-place form of a bound
# op is bound from its declaration as Tensor.<name>_
HAND_INPLACE_BINDINGS = {"add_", "sub_", "mul_", "div_", "remainder_", "pow_", "clamp_", "index_put_",
                         "masked_fill_", "threshold_", "tril_", "triu_", "floor_divide_", "square_"}


def inplace_method_bound(op):
    return bool(op.get("inplace")) and op["python"] in ("both", "method") \
        and op["name"] + "_" not in HAND_INPLACE_BINDINGS


def inplace_binding_op(op):
    """The declaration of an op's in-place form as a method binding: Tensor.<name>_(...), self
    written through its handle (graft::<name>_ returns it: the Python object itself)."""
    args = ["Tensor& self" if text.strip() == "const Tensor& self" else text for text in op["args"]]
    return {**op, "name": op["name"] + "_", "args": args, "python": "method", "returns": "Tensor",
            "python_only": False}


def binding_groups(decl):
    """The generated bindings' ops by name, each name's overloads in PyTorch's order: the
    `python_first` one, then an overload taking a tensor before the one taking a number in that
    place, so a 0-d tensor goes to the Tensor overload (masked_fill's MaskedFillBackward1); all
    bound alike."""
    groups = {}
    for op in decl["function"] + decl["composite"] + decl["inplace_only"]:
        if op["python"] in GENERATED_BINDINGS:
            groups.setdefault(op["name"], []).append(op)
    for op in decl["function"] + decl["composite"]:
        if inplace_method_bound(op):
            groups.setdefault(op["name"] + "_", []).append(inplace_binding_op(op))
    for name, group in groups.items():
        group.sort(key=lambda op: (not op.get("python_first", False), overload_rank(op)))
        if any(op["python"] != group[0]["python"] for op in group):
            fail(f"op '{name}': its overloads are bound alike (one python value for all)")
    return groups


def gen_op_bindings(decl):
    """The function, composite and in-place-only ops' bindings (python: both | torch | method |
    nn), included by python/csrc/tensor_ops.cpp at namespace scope: a function per op,
    parsed_<name>, that switches on the overload the argument parser (python/csrc/arg_parser.h)
    picked, converts the arguments and calls graft::<name> (letting the GIL go while a large
    input is worked on); and the table kGeneratedBindings of each op's name, where it is bound
    and its overloads' PyTorch-style signatures, which bind_generated_ops binds."""
    lines = [HEADER, "// The function, composite and in-place-only ops' Python bindings: graft.<name>(input, ...)",
             "// and, with python: both | method, Tensor.<name>(...); python: nn ones are _C._nn's",
             "// (torch.nn.functional's). Each parsed_<name> runs the overload the parser picked."]
    groups = binding_groups(decl)
    table = []
    for name, group in groups.items():
        lines += ["", f"py::object parsed_{name}(const ParsedArgs& p, const Tensor* self) {{",
                  "  [[maybe_unused]] const size_t o = self ? 0 : 1;  // shifts the arguments after self",
                  "  switch (p.overload()) {"]
        for i, op in enumerate(group):
            lines += overload_case(i, op)
        lines += ["  }", "  return py::none();  // every overload returns above", "}"]
        signatures = ", ".join(json.dumps(python_signature(op)) for op in group)
        table.append(f'    {{"{name}", "{group[0]["python"]}", {{{signatures}}}, &parsed_{name}}},')
    lines += ["", "/// Each generated op: its name, where it is bound (both, torch, method or nn: _C._nn) and its",
              "/// overloads' signatures in the order the parser tries them.",
              "const GeneratedBinding kGeneratedBindings[] = {"] + table + ["};"]
    return "\n".join(lines) + "\n"


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decl", required=True, help="the op declarations (src/ops/ops.yaml)")
    ap.add_argument("--out", required=True, help="the generated tree (<build>/generated)")
    args = ap.parse_args()
    with open(args.decl, encoding="utf-8") as f:
        decl = yaml.safe_load(f)
    unknown = set(decl) - set(FIELDS)
    if unknown:
        fail(f"unknown op families {sorted(unknown)}")
    seen = {}
    for family in FIELDS:
        decl.setdefault(family, [])
        for op in decl[family]:
            if family in ("function", "inplace_only") and isinstance(op.get("derivatives"), dict):
                expand_joint_formulas(op)
        check(family, decl[family], seen)
    out = args.out
    write_if_changed(f"{out}/include/graft/ops/generated_ops.h", gen_public_header(decl))
    write_if_changed(f"{out}/include/graft/core/tensor_generated_methods.inc", gen_methods(decl))
    write_if_changed(f"{out}/include/graft/core/tensor_generated_operators.inc", gen_operators(decl))
    write_if_changed(f"{out}/src/autograd/generated_functions.cpp", gen_ops_cpp(decl))
    write_if_changed(f"{out}/include/graft/backend/generated_kernel_ids.h", gen_kernel_ids(decl))
    write_if_changed(f"{out}/src/backend/cpu/generated_kernels.h", gen_kernels_h(decl))
    write_if_changed(f"{out}/src/backend/cpu/generated_kernels.cpp", gen_kernels_cpp(decl))
    write_if_changed(f"{out}/python/activation_bindings.inc", gen_activation_bindings(decl))
    write_if_changed(f"{out}/python/op_bindings.inc", gen_op_bindings(decl))
    write_if_changed(f"{out}/include/graft/ops/generated_forwards.h", gen_forwards_h(decl))
    write_if_changed(f"{out}/include/graft/ops/inplace_ops.def", gen_inplace_def(decl))
    function_names = {op["name"] for op in decl["function"]}
    for family in FIELDS:
        # a function op's composite overloads are its row (the op table has one row per op)
        rows = [op for op in decl[family] if family != "composite" or op["name"] not in function_names]
        write_if_changed(f"{out}/include/graft/ops/{family}_ops.def", gen_def(family, rows))
        if family not in ("function", "composite", "inplace_only"):  # their registry entries are written by hand
            write_if_changed(f"{out}/tests/{family}_registry.def", gen_registry_def(family, decl[family]))

if __name__ == "__main__":
    main()

// Math on graft.Tensor: Python operators (+ - * / @ ** // %, comparisons, in-place +=), the
// methods (x.sum(dim, keepdim), x.clamp(min=...), ...) and the same ops as graft.* functions.
// Each op is written once and registered both ways (def_method_and_function).
#include <algorithm>
#include <tuple>
#include <utility>

#include "arg_parser.h"
#include "python_common.h"

namespace graft::python {
namespace {

using TensorClass = py::class_<TensorImpl, intrusive_ptr<TensorImpl>>;

py::object not_implemented() { return py::reinterpret_borrow<py::object>(Py_NotImplemented); }

/// Registers `f` (first parameter: the tensor) as method `name` and as graft.`name`(input, ...).
template <class F, class... Extra>
void def_both(py::module_& m, TensorClass& cls, const char* name, F f, const Extra&... extra) {
  cls.def(name, f, extra...);
  m.def(name, f, py::arg("input"), extra...);
}

/// An index list (index_put_'s indices): a tuple or list of tensors, None standing for ':' as in
/// PyTorch 2.x (1.13 refuses None there).
std::vector<std::optional<Tensor>> index_list(py::handle seq, const char* op) {
  GRAFT_CHECK((py::isinstance<py::tuple>(seq) || py::isinstance<py::list>(seq)), TypeError, op,
              "(): argument 'indices' must be tuple of Tensors, not ",
              std::string(py::str(seq.get_type().attr("__name__"))));
  std::vector<std::optional<Tensor>> out;
  for (py::handle h : seq) {
    GRAFT_CHECK(h.is_none() || is_tensor(h), TypeError, op, "(): expected Tensor as element ", out.size(),
                " in argument 1, but got ", std::string(py::str(h.get_type().attr("__name__"))));
    out.push_back(h.is_none() ? std::nullopt : std::optional<Tensor>(as_tensor_unchecked(h)));
  }
  return out;
}

/// Binary op whose other operand is a tensor or a number; NotImplemented for anything else
/// (so Python can try the reflected operator).
template <class FT, class FS>
py::object binary(const Tensor& self, py::handle other, FT&& ft, FS&& fs) {
  SiteCallScope one_site;
  if (is_tensor(other)) {
    Tensor o = as_tensor_unchecked(other);
    return py::cast(maybe_without_gil(is_heavy(self) || is_heavy(o), [&] { return ft(self, o); }));
  }
  if (is_number(other)) return py::cast(fs(self, to_scalar(other)));
  return not_implemented();
}

/// The same with one generic `f`, called with (Tensor, Tensor) or (Tensor, Scalar).
template <class F>
py::object binary(const Tensor& self, py::handle other, F&& f) {
  return binary(self, other, f, f);
}

/// A generic lambda calling graft::fn(x, y) (x a Tensor, y a Tensor or Scalar), and one calling
/// fn(y, x) for the reflected operators.
#define GRAFT_FN(fn) [](const auto& x, const auto& y) { return fn(x, y); }
#define GRAFT_REFLECTED_FN(fn) [](const auto& x, const auto& y) { return fn(y, x); }

/// The method/function form: TypeError instead of NotImplemented. `f` is generic: it is called
/// with (Tensor, Tensor) or (Tensor, Scalar).
template <class F>
py::object binary_strict(const char* name, const Tensor& self, py::handle other, F&& f) {
  py::object r = binary(self, other, f, f);
  if (r.ptr() == Py_NotImplemented)
    throw TypeError(detail::str(name, "(): argument 'other' must be Tensor or Number, not ",
                                std::string(py::str(other.get_type().attr("__name__")))));
  return r;
}

/// The tensor `other` of a function or method that takes only a tensor there (maximum, atan2,
/// logical_and, ...); PyTorch's TypeError for anything else ("... must be Tensor, not int").
Tensor tensor_arg(const char* name, py::handle other) {
  if (!is_tensor(other))
    throw TypeError(detail::str(name, "(): argument 'other' must be Tensor, not ",
                                std::string(py::str(other.get_type().attr("__name__")))));
  return as_tensor_unchecked(other);
}

/// A number argument of a generated op (PyTorch's Scalar parameters: beta, lambd, ...): a bool,
/// int, float, NumPy number or 0-d tensor that does not require grad, as PyTorch's parser takes;
/// anything else is refused with its TypeError, an int beyond int64 with its "Overflow when
/// unpacking long".
Scalar number_scalar_arg(const char* fn, const char* arg, py::handle v) {
  const bool number_tensor =
      is_tensor(v) && as_tensor_unchecked(v).dim() == 0 && !as_tensor_unchecked(v).requires_grad();
  if (!number_tensor && (is_tensor(v) || !PyNumber_Check(v.ptr())))
    throw TypeError(detail::str(fn, "(): argument '", arg, "' must be Number, not ",
                                std::string(py::str(v.get_type().attr("__name__")))));
  return to_scalar(v);
}
double number_arg(const char* fn, const char* arg, py::handle v) { return number_scalar_arg(fn, arg, v).to_double(); }

/// The tensor behind `self` of a method bound with `py::handle self` (in-place methods return
/// the same Python object); TypeError as Python's own for an unbound call on a non-tensor
/// (`graft.Tensor.zero_(5)`).
Tensor self_of(py::handle self, const char* name) {
  check_self(self, name);
  return as_tensor_unchecked(self);
}

/// An in-place operator (x += y, x **= 2, x &= m): f(self, other) with other a Tensor or a
/// Scalar, returning the same Python object; NotImplemented for any other operand.
template <class F>
py::object inplace(const char* name, py::handle self_obj, py::handle other, F&& f) {
  Tensor self = self_of(self_obj, name);
  if (is_tensor(other))
    f(self, as_tensor_unchecked(other));
  else if (is_number(other))
    f(self, to_scalar(other));
  else
    return not_implemented();
  return py::reinterpret_borrow<py::object>(self_obj);
}
/// `self.fn(other)` for either kind of other, as inplace() calls it.
#define GRAFT_INPLACE_FN(fn) [](Tensor& self, const auto& other) { fn(self, other); }

/// A number as PyTorch's Python wraps it: a 0-d float64, int64 or bool tensor (float64, so a
/// float loses no digits before the op casts it), marked as a wrapped number so that type
/// promotion treats it as the Python scalar it was (`2 // x` keeps x's integer dtype).
Tensor scalar_like(const Scalar& s, const Tensor&) {
  const DType wrapped = s.is_floating_point() ? kFloat64 : s.natural_dtype();
  Tensor t = scalar_tensor(s, TensorOptions(wrapped).device(kCPU));  // goes with any device
  t.impl()->is_wrapped_number = true;
  return t;
}

/// `dim` for reductions: None -> all dims.
std::vector<int64_t> reduce_dims(py::handle dim) { return dims_from_object(dim); }

Tensor reduce_any(const Tensor& t, py::handle dim, bool keepdim) {
  NoGradGuard ng;
  Tensor nz = t.dtype() == kBool ? t : t.ne(0);
  return sum(nz.to(kInt64), reduce_dims(dim), keepdim).gt(0);
}
Tensor reduce_all(const Tensor& t, py::handle dim, bool keepdim) {
  NoGradGuard ng;
  Tensor z = t.dtype() == kBool ? logical_not(t) : t.eq(0);
  return sum(z.to(kInt64), reduce_dims(dim), keepdim).eq(0);
}

/// A Python number or tensor operand as a tensor (numbers as wrapped numbers).
Tensor operand(py::handle o, const Tensor& like) {
  return is_tensor(o) ? as_tensor_unchecked(o) : scalar_like(to_scalar(o), like);
}

enum class BitOp { And, Or, Xor };

/// a & b, a | b, a ^ b: the library's bitwise_and/or/xor (logical on bool, PyTorch's
/// refusal of floats).
Tensor bitwise(BitOp op, const Tensor& a, const Tensor& b) {
  return op == BitOp::And ? bitwise_and(a, b) : op == BitOp::Or ? bitwise_or(a, b) : bitwise_xor(a, b);
}

/// The operator form: NotImplemented for operands that are neither tensors nor numbers.
py::object bitwise_op(BitOp op, const Tensor& self, py::handle other) {
  if (!is_tensor(other) && !is_number(other)) return not_implemented();
  return py::cast(bitwise(op, self, operand(other, self)));
}

/// An in-place method whose other operand is a tensor or a number: f(self, other) with other a
/// Tensor or a Scalar (to_scalar refuses anything else); returns the Python self.
template <class F>
py::handle inplace_with_other(py::handle self_obj, const char* name, py::handle other, F&& f) {
  Tensor self = self_of(self_obj, name);
  if (is_tensor(other))
    f(self, as_tensor_unchecked(other));
  else
    f(self, to_scalar(other));
  return self_obj;
}

/// Number bounds of clamp (None -> nullopt; checks both are given as None at most once).
std::pair<std::optional<Scalar>, std::optional<Scalar>> clamp_bounds(py::handle lo, py::handle hi) {
  GRAFT_CHECK(!lo.is_none() || !hi.is_none(), RuntimeError,
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  std::optional<Scalar> l, h;
  if (!lo.is_none()) l = to_scalar(lo);
  if (!hi.is_none()) h = to_scalar(hi);
  return {l, h};
}

/// clamp with number or tensor bounds (graft::clamp promotes as PyTorch: an integer tensor
/// clamped with a float bound becomes float); tensor bounds keep autograd into the bounds.
Tensor clamp_any(const Tensor& a, py::handle lo, py::handle hi) {
  GRAFT_CHECK(!lo.is_none() || !hi.is_none(), RuntimeError,
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  if (is_tensor(lo) || is_tensor(hi)) {
    Tensor l, h;
    if (!lo.is_none()) l = operand(lo, a);
    if (!hi.is_none()) h = operand(hi, a);
    return clamp(a, l, h);
  }
  auto [l, h] = clamp_bounds(lo, hi);
  return clamp(a, l, h);
}

/// The Python operators (+, -, *, /, //, %, **, comparisons): binary and reflected forms.
void bind_operators(py::module_&, TensorClass& cls) {
  // ---- Python operators ----
  cls.def("__add__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(add)); })
      .def("__radd__",
           [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_REFLECTED_FN(add), GRAFT_FN(add)); })
      .def("__sub__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(sub)); })
      .def("__rsub__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_REFLECTED_FN(sub)); })
      .def("__mul__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(mul)); })
      .def("__rmul__",
           [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_REFLECTED_FN(mul), GRAFT_FN(mul)); })
      .def("__truediv__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(div)); })
      .def("__rtruediv__",
           [](const Tensor& a, py::handle b) {
             return binary(
                 a, b, [](const auto& x, const auto& y) { return div(y, x); },
                 [](const auto& x, const auto& s) { return s / x; });
           })
      .def("__floordiv__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(floor_divide)); })
      .def("__rfloordiv__",
           [](const Tensor& a, py::handle b) {
             return binary(
                 a, b, [](const auto& x, const auto& y) { return floor_divide(y, x); },
                 [](const auto& x, const auto& s) { return floor_divide(scalar_like(s, x), x); });
           })
      .def("__mod__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(remainder)); })
      .def("__rmod__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_REFLECTED_FN(remainder)); })
      .def("__pow__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(pow)); })
      // number ** x: PyTorch's Python wraps the number, so pow.Tensor_Tensor's PowBackward1 with a
      // None input (graft::pow(Scalar, Tensor) is libtorch's pow.Scalar, PowBackward2)
      .def("__rpow__", [](const Tensor& a, py::handle b) {
        return binary(a, b, GRAFT_REFLECTED_FN(pow),
                      [](const Tensor& x, const Scalar& n) { return pow(scalar_like(n, x), x); });
      });
}

/// The Python operators @, unary -, +, abs, ~, &, |, ^ and the augmented assignments.
void bind_more_operators(py::module_&, TensorClass& cls) {
  cls.def("__matmul__",
          [](const Tensor& a, py::handle b) -> py::object {
            if (!is_tensor(b)) return not_implemented();
            Tensor o = as_tensor_unchecked(b);
            return py::cast(maybe_without_gil(is_heavy(a) || is_heavy(o), [&] { return matmul(a, o); }));
          })
      .def("__rmatmul__",
           [](const Tensor& a, py::handle b) -> py::object {
             if (!is_tensor(b)) return not_implemented();
             return py::cast(matmul(as_tensor_unchecked(b), a));
           })
      .def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pos__",
           [](const Tensor& a) {
             GRAFT_CHECK(a.dtype() != kBool, RuntimeError, "The `+` operator, on a bool tensor is not supported.");
             return a;
           })
      .def("__abs__", [](const Tensor& a) { return abs(a); })
      .def("__invert__",
           [](const Tensor& a) {
             GRAFT_CHECK(!a.is_floating_point(), TypeError,
                         "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
             return bitwise_not(a);
           })
      .def("__and__", [](const Tensor& a, py::handle b) { return bitwise_op(BitOp::And, a, b); })
      .def("__rand__", [](const Tensor& a, py::handle b) { return bitwise_op(BitOp::And, a, b); })
      .def("__or__", [](const Tensor& a, py::handle b) { return bitwise_op(BitOp::Or, a, b); })
      .def("__ror__", [](const Tensor& a, py::handle b) { return bitwise_op(BitOp::Or, a, b); })
      .def("__xor__", [](const Tensor& a, py::handle b) { return bitwise_op(BitOp::Xor, a, b); })
      .def("__rxor__", [](const Tensor& a, py::handle b) { return bitwise_op(BitOp::Xor, a, b); })
      .def("__iand__",
           [](py::handle a, py::handle b) { return inplace("__iand__", a, b, GRAFT_INPLACE_FN(bitwise_and_)); })
      .def("__ior__",
           [](py::handle a, py::handle b) { return inplace("__ior__", a, b, GRAFT_INPLACE_FN(bitwise_or_)); })
      .def("__ixor__",
           [](py::handle a, py::handle b) { return inplace("__ixor__", a, b, GRAFT_INPLACE_FN(bitwise_xor_)); })
      .def("__ifloordiv__",
           [](py::handle a, py::handle b) { return inplace("__ifloordiv__", a, b, GRAFT_INPLACE_FN(floor_divide_)); })
      .def("__imod__",
           [](py::handle a, py::handle b) { return inplace("__imod__", a, b, GRAFT_INPLACE_FN(remainder_)); })
      .def("__ipow__", [](py::handle a, py::handle b) { return inplace("__ipow__", a, b, GRAFT_INPLACE_FN(pow_)); })
      .def("__eq__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(eq)); })
      .def("__ne__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(ne)); })
      .def("__lt__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(lt)); })
      .def("__le__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(le)); })
      .def("__gt__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(gt)); })
      .def("__ge__", [](const Tensor& a, py::handle b) { return binary(a, b, GRAFT_FN(ge)); })
      .def("__iadd__", [](py::handle a, py::handle b) { return inplace("__iadd__", a, b, GRAFT_INPLACE_FN(add_)); })
      .def("__isub__", [](py::handle a, py::handle b) { return inplace("__isub__", a, b, GRAFT_INPLACE_FN(sub_)); })
      .def("__imul__", [](py::handle a, py::handle b) { return inplace("__imul__", a, b, GRAFT_INPLACE_FN(mul_)); })
      .def("__itruediv__",
           [](py::handle a, py::handle b) { return inplace("__itruediv__", a, b, GRAFT_INPLACE_FN(div_)); });
}

/// add, sub, mul, div, ... as methods and functions.
void bind_arithmetic(py::module_& m, TensorClass& cls) {
  // ---- arithmetic as methods and functions ----
  /// Binds graft::fn(Tensor, Tensor | Scalar) as the method and function `py_name`.
#define GRAFT_DEF_BINARY(py_name, fn, arg_name)                                                                  \
  def_both(                                                                                                      \
      m, cls, py_name, [](const Tensor& a, py::handle b) { return binary_strict(py_name, a, b, GRAFT_FN(fn)); }, \
      py::arg(arg_name))
  // add, sub, mul, div, remainder, pow and floor_divide are generated (op_bindings.inc); the
  // aliases divide and true_divide are bound here
  auto div_fn = [](const Tensor& a, py::handle b, std::optional<std::string> rounding_mode) {
    if (rounding_mode) {
      const std::string mode = *rounding_mode;
      return binary_strict("div", a, b, [&](const auto& x, const auto& y) { return div(x, y, mode); });
    }
    return binary_strict("div", a, b, GRAFT_FN(div));
  };
  def_both(m, cls, "divide", div_fn, py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  GRAFT_DEF_BINARY("true_divide", div, "other");
}

/// The binary, binary predicate and bitwise ops declared in src/ops/ops.yaml.
void bind_binary_ops(py::module_& m, TensorClass& cls) {
  // the binary ops declared in src/ops/ops.yaml (maximum, atan2, ...) and the binary_predicate
  // ops (eq, lt, ..., logical_and, ...): function and method; `other` a tensor, or also a number
  // for the predicates that take one. Names listed in _C._binary_ops / _C._binary_predicate_ops.
  py::list binary_names, binary_predicate_names;
#define GRAFT_BIND_BINARY_TensorOnly(name)                                                               \
  def_both(                                                                                              \
      m, cls, #name, [](const Tensor& a, py::handle b) { return graft::name(a, tensor_arg(#name, b)); }, \
      py::arg("other"));
#define GRAFT_BIND_BINARY_WithScalar(name)                                                                     \
  def_both(                                                                                                    \
      m, cls, #name, [](const Tensor& a, py::handle b) { return binary_strict(#name, a, b, GRAFT_FN(name)); }, \
      py::arg("other"));
#define GRAFT_BIND_BINARY_OP_Python(name) \
  GRAFT_BIND_BINARY_TensorOnly(name);     \
  binary_names.append(#name);
#define GRAFT_BIND_BINARY_OP_NoPython(name)  // a backward op PyTorch keeps out of Python (tanh_backward)
#define GRAFT_BINARY_OP(name, python) GRAFT_BIND_BINARY_OP_##python(name)
#include "graft/ops/binary_ops.def"
#undef GRAFT_BINARY_OP
#define GRAFT_BINARY_PREDICATE_OP(name, other_kind) \
  GRAFT_BIND_BINARY_##other_kind(name);             \
  binary_predicate_names.append(#name);
#include "graft/ops/binary_predicate_ops.def"
#undef GRAFT_BINARY_PREDICATE_OP
  m.attr("_binary_ops") = py::tuple(binary_names);
  m.attr("_binary_predicate_ops") = py::tuple(binary_predicate_names);
  m.attr("greater") = m.attr("gt");
  m.attr("less") = m.attr("lt");
  m.attr("greater_equal") = m.attr("ge");
  m.attr("less_equal") = m.attr("le");
  m.attr("not_equal") = m.attr("ne");
  // the binary_bitwise ops (bitwise_and, bitwise_or, bitwise_xor): `other` a tensor or a number
  py::list binary_bitwise_names;
#define GRAFT_BINARY_BITWISE_OP(name) \
  GRAFT_BIND_BINARY_WithScalar(name); \
  binary_bitwise_names.append(#name);
#include "graft/ops/binary_bitwise_ops.def"
#undef GRAFT_BINARY_BITWISE_OP
  m.attr("_binary_bitwise_ops") = py::tuple(binary_bitwise_names);
#undef GRAFT_BIND_BINARY_TensorOnly
#undef GRAFT_BIND_BINARY_WithScalar
  def_both(
      m, cls, "allclose",
      [](const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
        return allclose(a, b, rtol, atol, equal_nan);
      },
      py::arg("other"), py::arg("rtol") = 1e-5, py::arg("atol") = 1e-8, py::arg("equal_nan") = false);
  def_both(
      m, cls, "equal", [](const Tensor& a, const Tensor& b) { return equal(a, b); }, py::arg("other"));
}

// ---- the ops of src/ops/ops.yaml with a generated binding (python: both | torch | method | nn) ----
#include "op_bindings.inc"

/// Binds each generated op through the argument parser where its declaration says, and lists
/// the graft.* functions among them in _C._function_ops (graft/__init__.py exports them).
void bind_generated_ops(py::module_& m, TensorClass& cls) {
  py::module_ nn = m.def_submodule("_nn");  // made with the activations
  py::list functions;
  for (const GeneratedBinding& b : kGeneratedBindings) {
    const std::string where = b.where;
    const bool method = where == "both" || where == "method";
    bind_parsed(where == "nn" ? nn : m, method ? &cls : nullptr, where != "method", b.name, b.signatures, b.call);
    if (where == "both" || where == "torch") functions.append(b.name);
  }
  m.attr("_function_ops") = py::tuple(functions);
}

/// The unary ops declared in src/ops/ops.yaml, and its function and composite ops bound from there.
void bind_unary_ops(py::module_& m, TensorClass& cls) {
  // ---- unary math ----
  // the ops declared in src/ops/ops.yaml with an in-place form (unary_float: exp, log, tanh, ...;
  // unary_rounding: floor, ceil, ...): function, method and in-place method, each family's names
  // listed in _C._<family>_ops for graft/__init__.py to export
  py::list unary_float_names, unary_rounding_names, unary_keep_names;
#define GRAFT_BIND_UNARY_WITH_INPLACE(name, names)                         \
  def_both(m, cls, #name, [](const Tensor& a) { return graft::name(a); }); \
  cls.def(#name "_", [](py::handle s) {                                    \
    Tensor t = self_of(s, #name "_");                                      \
    graft::name##_(t);                                                     \
    return s;                                                              \
  });                                                                      \
  names.append(#name);
#define GRAFT_UNARY_FLOAT_OP(name) GRAFT_BIND_UNARY_WITH_INPLACE(name, unary_float_names)
#include "graft/ops/unary_float_ops.def"
#undef GRAFT_UNARY_FLOAT_OP
#define GRAFT_UNARY_ROUNDING_OP(name) GRAFT_BIND_UNARY_WITH_INPLACE(name, unary_rounding_names)
#include "graft/ops/unary_rounding_ops.def"
#undef GRAFT_UNARY_ROUNDING_OP
#define GRAFT_UNARY_KEEP_OP(name) GRAFT_BIND_UNARY_WITH_INPLACE(name, unary_keep_names)
#include "graft/ops/unary_keep_ops.def"
#undef GRAFT_UNARY_KEEP_OP
#undef GRAFT_BIND_UNARY_WITH_INPLACE
  m.attr("_unary_float_ops") = py::tuple(unary_float_names);
  m.attr("_unary_rounding_ops") = py::tuple(unary_rounding_names);
  m.attr("_unary_keep_ops") = py::tuple(unary_keep_names);
  // the unary_predicate ops (isnan, isfinite, ...): function and method
  py::list unary_predicate_names;
#define GRAFT_UNARY_PREDICATE_OP(name)                                     \
  def_both(m, cls, #name, [](const Tensor& a) { return graft::name(a); }); \
  unary_predicate_names.append(#name);
#include "graft/ops/unary_predicate_ops.def"
#undef GRAFT_UNARY_PREDICATE_OP
  m.attr("_unary_predicate_ops") = py::tuple(unary_predicate_names);
  m.attr("negative") = m.attr("neg");
  cls.attr("negative") = cls.attr("neg");
  m.attr("absolute") = m.attr("abs");
  {
    // the activation ops declared in src/ops/ops.yaml (silu, softplus, leaky_relu, elu, ...):
    // _C._nn.<name> (and <name>_), and graft.<name> / Tensor.<name> where PyTorch has them
    py::module_ nn = m.def_submodule("_nn", "torch.nn.functional's C++ ops, torch.nn.init and torch.nn.utils");
#include "activation_bindings.inc"
  }
  bind_generated_ops(m, cls);
  for (auto [alias, name] : {std::pair{"subtract", "sub"}, std::pair{"multiply", "mul"}}) {
    m.attr(alias) = m.attr(name);
    cls.attr(alias) = cls.attr(name);
  }
  // clamp is generated; its alias clip and clamp_min/clamp_max are bound here
  auto clamp_fn = [](const Tensor& a, py::handle lo, py::handle hi) { return clamp_any(a, lo, hi); };
  def_both(m, cls, "clip", clamp_fn, py::arg("min") = py::none(), py::arg("max") = py::none());
  def_both(
      m, cls, "clamp_min", [](const Tensor& a, py::handle lo) { return clamp_any(a, lo, py::none()); }, py::arg("min"));
  def_both(
      m, cls, "clamp_max", [](const Tensor& a, py::handle hi) { return clamp_any(a, py::none(), hi); }, py::arg("max"));
}

/// sum, mean, max, min, ... with PyTorch's dim and keepdim forms.
void bind_reductions(py::module_& m, TensorClass& cls) {
  // ---- reductions ----
  // mean, prod, max, min, var, std, softmax and log_softmax are generated (op_bindings.inc)
  def_both(
      m, cls, "any", [](const Tensor& a, py::object dim, bool keepdim) { return reduce_any(a, dim, keepdim); },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both(
      m, cls, "all", [](const Tensor& a, py::object dim, bool keepdim) { return reduce_all(a, dim, keepdim); },
      py::arg("dim") = py::none(), py::arg("keepdim") = false);
  def_both(
      m, cls, "count_nonzero",
      [](const Tensor& a, py::object dim) {
        NoGradGuard ng;
        return sum(a.ne(0).to(kInt64), reduce_dims(dim));
      },
      py::arg("dim") = py::none());
}

/// mm, bmm, matmul and the indexing-style ops.
void bind_linalg_and_indexing(py::module_& m, TensorClass& cls) {
  // ---- linear algebra (mm, bmm, matmul: op_bindings.inc) ----
  def_both(
      m, cls, "dot",
      [](const Tensor& a, const Tensor& b) {
        GRAFT_CHECK(a.dim() == 1 && b.dim() == 1, RuntimeError, "1D tensors expected, but got ", a.dim(), "D and ",
                    b.dim(), "D tensors");
        return matmul(a, b);
      },
      py::arg("tensor"));

  // ---- indexing-style ops (index_select, index_add, gather, scatter_add: op_bindings.inc) ----
  def_both(
      m, cls, "nonzero",
      [](const Tensor& a, bool as_tuple) -> py::object {
        return as_tuple ? py::object(py::tuple(py::cast(nonzero_numpy(a)))) : py::cast(nonzero(a));
      },
      py::kw_only(), py::arg("as_tuple") = false);
}

/// The in-place methods of arithmetic; they return the Python object itself.
void bind_inplace_arithmetic(py::module_&, TensorClass& cls) {
  // ---- in-place ----
  // square_ (a composite's in-place form, written by hand beside it): the Python object itself
  cls.def("square_", [](py::handle s) {
    self_of(s, "square_").square_();
    return s;
  });
  // the in-place methods of one tensor-or-number operand
#define GRAFT_DEF_INPLACE_OTHER(name, argname)                                                                   \
  cls.def(                                                                                                       \
      #name, [](py::handle s, py::handle o) { return inplace_with_other(s, #name, o, GRAFT_INPLACE_FN(name)); }, \
      py::arg(argname))
  GRAFT_DEF_INPLACE_OTHER(remainder_, "other");
  GRAFT_DEF_INPLACE_OTHER(floor_divide_, "other");
  GRAFT_DEF_INPLACE_OTHER(bitwise_and_, "other");
  GRAFT_DEF_INPLACE_OTHER(bitwise_or_, "other");
  GRAFT_DEF_INPLACE_OTHER(bitwise_xor_, "other");
#undef GRAFT_DEF_INPLACE_OTHER
  cls.def(
         "add_",
         [](py::handle s, py::handle o, const Scalar& alpha) {
           return inplace_with_other(s, "add_", o, [&](Tensor& t, const auto& x) { t.add_(x, alpha); });
         },
         py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def(
          "sub_",
          [](py::handle s, py::handle o, const Scalar& alpha) {
            return inplace_with_other(s, "sub_", o, [&](Tensor& t, const auto& x) { t.sub_(x, alpha); });
          },
          py::arg("other"), py::kw_only(), py::arg("alpha") = 1)
      .def(
          "mul_",
          [](py::handle s, py::handle o) {
            return inplace_with_other(s, "mul_", o, [](Tensor& t, const auto& x) { t.mul_(x); });
          },
          py::arg("other"))
      .def(
          "div_",
          [](py::handle s, py::handle o, std::optional<std::string> rounding_mode) {
            if (rounding_mode)
              return inplace_with_other(s, "div_", o, [&](Tensor& t, const auto& x) { t.div_(x, *rounding_mode); });
            return inplace_with_other(s, "div_", o, [](Tensor& t, const auto& x) { t.div_(x); });
          },
          py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
}

/// clamp_, index_put_, masked_fill_, tril_ and triu_ in place; torch.threshold_ (a function, no
/// method).
void bind_inplace_fills(py::module_& m, TensorClass& cls) {
  cls.def(
         "tril_",
         [](py::handle s, int64_t diagonal) {
           Tensor t = self_of(s, "tril_");
           tril_(t, diagonal);
           return s;
         },
         py::arg("diagonal") = 0)
      .def(
          "triu_",
          [](py::handle s, int64_t diagonal) {
            Tensor t = self_of(s, "triu_");
            triu_(t, diagonal);
            return s;
          },
          py::arg("diagonal") = 0);
  m.def(
      "threshold_",
      [](py::handle s, py::handle threshold, py::handle value) {
        Tensor t = self_of(s, "threshold_");
        threshold_(t, number_scalar_arg("threshold_", "threshold", threshold),
                   number_scalar_arg("threshold_", "value", value));
        return s;
      },
      py::arg("input"), py::arg("threshold"), py::arg("value"));
  // fill_ and copy_ are generated (python: method, returning the Python object itself)
  cls.def(
         "clamp_",
         [](py::handle s, py::handle lo, py::handle hi) {
           Tensor t = self_of(s, "clamp_");
           if (is_tensor(lo) || is_tensor(hi)) {
             Tensor l, h;  // a number bound beside a tensor one is a wrapped number, as PyTorch's
             if (!lo.is_none()) l = operand(lo, t);
             if (!hi.is_none()) h = operand(hi, t);
             GRAFT_CHECK(l.defined() || h.defined(), RuntimeError,
                         "torch.clamp: At least one of 'min' or 'max' must not be None");
             clamp_(t, l, h);
           } else {
             auto [l, h] = clamp_bounds(lo, hi);
             t.clamp_(l, h);  // a bound that would promote t is refused there, as PyTorch refuses it
           }
           return s;
         },
         py::arg("min") = py::none(), py::arg("max") = py::none())
      .def(
          "index_put_",
          [](py::handle s, py::handle indices, const Tensor& values, bool accumulate) {
            Tensor t = self_of(s, "index_put_");
            index_put_(t, index_list(indices, "index_put_"), values, accumulate);
            return s;
          },
          py::arg("indices"), py::arg("values"), py::arg("accumulate") = false)
      .def(
          "masked_fill_",
          [](py::handle s, const Tensor& mask, py::handle v) {
            Tensor t = self_of(s, "masked_fill_");
            if (is_tensor(v))
              masked_fill_(t, mask, as_tensor_unchecked(v));
            else
              masked_fill_(t, mask, to_scalar(v));
            return s;
          },
          py::arg("mask"), py::arg("value"));
}

/// pow_ (a tensor or number exponent); the random fills are generated (python: method in
/// src/ops/ops.yaml).
void bind_inplace_pow(py::module_&, TensorClass& cls) {
  cls.def(
      "pow_",
      [](py::handle s, py::handle e) {
        Tensor t = self_of(s, "pow_");
        if (is_tensor(e))
          pow_(t, as_tensor_unchecked(e));
        else
          pow_(t, to_scalar(e));
        return s;
      },
      py::arg("exponent"));
}

}  // namespace

void init_tensor_ops(py::module_& m, TensorClass& cls) {
  bind_operators(m, cls);
  bind_more_operators(m, cls);
  bind_arithmetic(m, cls);
  bind_binary_ops(m, cls);
  bind_unary_ops(m, cls);
  bind_reductions(m, cls);
  bind_linalg_and_indexing(m, cls);
  bind_inplace_arithmetic(m, cls);
  bind_inplace_fills(m, cls);
  bind_inplace_pow(m, cls);
}

}  // namespace graft::python

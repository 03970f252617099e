// Elementwise ops and their backward nodes. Each backward is written in graft ops, so it
// is itself differentiable (double backward). Broadcast gradients are reduced by the engine.
#include <cmath>
#include <type_traits>

#include "node_util.h"
#include "ops/generated_forwards.h"

namespace graft {
using kernel::BinaryOp;
using kernel::DivMode;
using kernel::UnaryOp;

namespace {

Tensor binary_forward(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, const Scalar& alpha = 1) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(a, name, "self");
  detail::check_tensor(b, name, "other");
  Shape shape = detail::broadcast_shapes(a.sizes(), b.sizes());
  DType ct = detail::result_type(a, b);
  if (op == BinaryOp::Div) ct = detail::float_result(ct);
  if (op == BinaryOp::Add || op == BinaryOp::Sub)
    detail::check_add_sub(a.dtype(), b.dtype(), ct, alpha, op == BinaryOp::Sub);
  const Device dev = a.device();
  Tensor ta, tb;
  if (b.device() != dev) [[unlikely]] {  // a 0-d CPU operand with a tensor of another device
    const Device common = detail::common_device(a, b);
    Tensor out = detail::new_empty(shape, ct, common);
    kernel::binary(op, out, detail::as_operand(a, ct, common, ta), detail::as_operand(b, ct, common, tb), alpha);
    return out;
  }
  Tensor out = detail::new_empty(shape, ct, dev);
  kernel::binary(op, out, detail::as_dtype(a, ct, ta), detail::as_dtype(b, ct, tb), alpha);
  return out;
}

Tensor scalar_forward(BinaryOp op, const Tensor& a, const Scalar& s, const char* name, const Scalar& alpha = 1,
                      bool reverse = false) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(a, name, "self");
  DType ct = detail::result_type(a, s);
  if (op == BinaryOp::Div || (op == BinaryOp::Pow && s.is_floating_point())) ct = detail::float_result(ct);
  if (op == BinaryOp::Add || op == BinaryOp::Sub) {
    DType sd = detail::wrapped_dtype(s);
    if (reverse)
      detail::check_add_sub(sd, a.dtype(), ct, alpha, op == BinaryOp::Sub);
    else
      detail::check_add_sub(a.dtype(), sd, ct, alpha, op == BinaryOp::Sub);
  }
  Tensor out = detail::new_empty(a.sizes(), ct, a.device());
  Tensor ta;
  kernel::binary_scalar(op, out, detail::as_dtype(a, ct, ta), s, alpha, reverse);
  return out;
}

Tensor unary_forward(UnaryOp op, const Tensor& a, const char* name, bool to_float, double p0 = 0, double p1 = 0) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(a, name);
  DType dt = to_float ? detail::float_result(a.dtype()) : a.dtype();
  Tensor out = detail::new_empty(a.sizes(), dt, a.device());
  Tensor ta;
  kernel::unary(op, out, detail::as_dtype(a, dt, ta), p0, p1);
  return out;
}

// PyTorch wraps a Python number in a 0-d double/long tensor; saved by mul/div like any input.
// On `like`'s device (PyTorch keeps wrapped numbers on the CPU and lets them mix with any device).
Tensor wrap(const Scalar& s, const Tensor& like) {
  return detail::wrapped_scalar(s, detail::wrapped_dtype(s), like.device());
}

// ---------------- nodes ----------------
struct AddBackward0 final : Node {
  GRAFT_NODE_NAME("AddBackward0")
  Scalar alpha;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    if (should_compute_output(0)) r[0] = g[0];
    if (should_compute_output(1)) r[1] = (alpha.to_double() == 1.0) ? g[0] : g[0] * alpha;
    return r;
  }
};
struct SubBackward0 final : Node {
  GRAFT_NODE_NAME("SubBackward0")
  Scalar alpha;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    if (should_compute_output(0)) r[0] = g[0];
    if (should_compute_output(1)) r[1] = (alpha.to_double() == 1.0) ? neg(g[0]) : g[0] * neg(wrap(alpha, g[0]));
    return r;
  }
};
struct RsubBackward1 final : Node {  // number - tensor
  GRAFT_NODE_NAME("RsubBackward1")
  Scalar alpha;
  TensorList apply(TensorList&& g) override {
    return {(alpha.to_double() == 1.0) ? neg(g[0]) : g[0] * neg(wrap(alpha, g[0]))};
  }
};
struct MulBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("MulBackward0", self, other)
  SavedVariable self, other;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    if (should_compute_output(0)) r[0] = g[0] * other.unpack(this);
    if (should_compute_output(1)) r[1] = g[0] * self.unpack(this);
    return r;
  }
};
struct DivBackward0 final : Node {
  GRAFT_NODE_BOILERPLATE("DivBackward0", self, other)
  SavedVariable self, other;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    Tensor b = other.unpack(this);
    if (should_compute_output(0)) r[0] = g[0] / b;
    if (should_compute_output(1)) r[1] = neg(g[0]) * self.unpack(this) / (b * b);
    return r;
  }
};
struct PowBackward0 final : Node {  // tensor ** scalar
  GRAFT_NODE_BOILERPLATE("PowBackward0", self)
  SavedVariable self;
  Scalar exponent;
  TensorList apply(TensorList&& g) override {
    Tensor x = self.unpack(this);
    if (exponent.to_double() == 0.0) return {zeros_like(x, TensorOptions(g[0].dtype()).device(g[0].device()))};
    Scalar em1 = exponent.is_floating_point() ? Scalar(exponent.to_double() - 1) : Scalar(exponent.to_long() - 1);
    return {g[0] * exponent * pow(x, em1)};
  }
};
struct PowBackward1 final : Node {  // tensor ** tensor
  GRAFT_NODE_BOILERPLATE("PowBackward1", self, exponent, result)
  SavedVariable self, exponent, result;
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    Tensor x = self.unpack(this), e = exponent.unpack(this);
    if (should_compute_output(0)) {
      Tensor d = g[0] * e * pow(x, e - 1);
      r[0] = where(e == 0, 0, d);
    }
    if (should_compute_output(1)) {
      Tensor d = g[0] * result.unpack(this) * log(x);
      r[1] = where(logical_and(x == 0, e >= 0), zeros_like(d), d);
    }
    return r;
  }
};
struct PowBackward2 final : Node {  // scalar ** tensor
  GRAFT_NODE_BOILERPLATE("PowBackward2", result)
  SavedVariable result;
  double base = 0;
  TensorList apply(TensorList&& g) override {
    if (base == 0.0) {
      // d/de 0**e is 0 for e >= 0 (PyTorch's convention)
      return {zeros_like(g[0])};
    }
    return {g[0] * result.unpack(this) * std::log(base)};
  }
};

#define GRAFT_UNARY_SELF_NODE(Name, formula)    \
  struct Name final : Node {                    \
    GRAFT_NODE_BOILERPLATE(#Name, self)         \
    SavedVariable self;                         \
    TensorList apply(TensorList&& g) override { \
      Tensor x = self.unpack(this);             \
      const Tensor& gr = g[0];                  \
      return {formula};                         \
    }                                           \
  };

struct ClampBackward1 final : Node {
  GRAFT_NODE_BOILERPLATE("ClampBackward1", self)
  SavedVariable self;
  std::optional<Scalar> lo, hi;
  TensorList apply(TensorList&& g) override {
    Tensor x = self.unpack(this);
    Tensor keep = ones_like(x, TensorOptions(kBool));
    if (lo) keep = logical_and(keep, x >= *lo);
    if (hi) keep = logical_and(keep, x <= *hi);
    return {where(keep, g[0], 0)};
  }
};
// ---------------- floor division, remainder ----------------

// out = a // b, a % b or trunc(a / b), broadcast, in the promoted dtype (bool rejected, as PyTorch).
Tensor rounding_div(const Tensor& a, const Tensor& b, DivMode mode, const char* name) {
  const bool rem = mode == DivMode::Remainder;
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(a, name, "self");
  detail::check_tensor(b, name, "other");
  Shape shape = detail::broadcast_shapes(a.sizes(), b.sizes());
  DType ct = detail::result_type(a, b);
  if (ct == kBool)
    detail::kernel_not_implemented(rem                      ? "remainder_cpu"
                                   : mode == DivMode::Trunc ? "div_trunc_cpu"
                                                            : "div_floor_cpu",
                                   kBool);
  const Device dev = detail::common_device(a, b);
  Tensor out = detail::new_empty(shape, ct, dev);
  Tensor ta, tb;
  const Tensor& x = detail::as_operand(a, ct, dev, ta);
  const Tensor& y = detail::as_operand(b, ct, dev, tb);
  const bool zero_div = kernel::rounding_div(mode, out, x, y);
  GRAFT_CHECK(!zero_div, RuntimeError, "ZeroDivisionError");
  return out;
}

struct RemainderBackward0 final : Node {  // tensor % scalar
  GRAFT_NODE_NAME("RemainderBackward0")
  TensorList apply(TensorList&& g) override { return {g[0]}; }
};
struct RemainderBackward1 final : Node {  // tensor % tensor, and scalar % tensor (self unset)
  std::string name() const override { return scalar_self ? "RemainderBackward2" : "RemainderBackward1"; }
  GRAFT_NODE_SAVED(self, other)
  SavedVariable self, other;
  bool scalar_self = false;
  TensorList apply(TensorList&& g) override {
    TensorList r(scalar_self ? 1 : 2);
    const size_t other_nr = scalar_self ? 0 : 1;
    if (!scalar_self && should_compute_output(0)) r[0] = g[0];
    if (should_compute_output(other_nr)) r[other_nr] = neg(g[0]) * floor_divide(self.unpack(this), other.unpack(this));
    return r;
  }
};

template <class N>
Tensor record_unary_self(Tensor out, const Tensor& a) {
  if (any_requires_grad({&a})) {
    auto n = make_node<N>({&a});
    n->self = SavedVariable(a, false);
    set_history(out, n);
  }
  return out;
}
}  // namespace

// ---------------- arithmetic ----------------
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor out = binary_forward(BinaryOp::Add, a, b, "add", alpha);
  if (any_requires_grad({&a, &b})) {
    auto n = make_node<AddBackward0>({&a, &b});
    n->alpha = alpha;
    set_history(out, n);
  }
  return out;
}
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  Tensor out = scalar_forward(BinaryOp::Add, a, b, "add", alpha);
  if (any_requires_grad({&a})) {
    Tensor none;
    auto n = make_node<AddBackward0>({&a, &none});
    set_history(out, n);
  }
  return out;
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor out = binary_forward(BinaryOp::Sub, a, b, "sub", alpha);
  if (any_requires_grad({&a, &b})) {
    auto n = make_node<SubBackward0>({&a, &b});
    n->alpha = alpha;
    set_history(out, n);
  }
  return out;
}
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  Tensor out = scalar_forward(BinaryOp::Sub, a, b, "sub", alpha);
  if (any_requires_grad({&a})) {
    Tensor none;
    auto n = make_node<SubBackward0>({&a, &none});
    set_history(out, n);
  }
  return out;
}
Tensor sub(const Scalar& a, const Tensor& b, const Scalar& alpha) {
  Tensor out = scalar_forward(BinaryOp::Sub, b, a, "rsub", alpha, /*reverse=*/true);
  if (any_requires_grad({&b})) {
    auto n = make_node<RsubBackward1>({&b});
    n->alpha = alpha;
    set_history(out, n);
  }
  return out;
}
Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::Mul, a, b, "mul");
  if (any_requires_grad({&a, &b})) {
    auto n = make_node<MulBackward0>({&a, &b});
    if (n->should_compute_output(0)) n->other = SavedVariable(b, false);
    if (n->should_compute_output(1)) n->self = SavedVariable(a, false);
    set_history(out, n);
  }
  return out;
}
Tensor mul(const Tensor& a, const Scalar& b) {
  Tensor out = scalar_forward(BinaryOp::Mul, a, b, "mul");
  if (any_requires_grad({&a})) {
    Tensor none;
    auto n = make_node<MulBackward0>({&a, &none});
    n->other = SavedVariable(wrap(b, a), false);
    set_history(out, n);
  }
  return out;
}
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = binary_forward(BinaryOp::Div, a, b, "div");
  if (any_requires_grad({&a, &b})) {
    auto n = make_node<DivBackward0>({&a, &b});
    n->other = SavedVariable(b, false);
    if (n->should_compute_output(1)) n->self = SavedVariable(a, false);
    set_history(out, n);
  }
  return out;
}
Tensor div(const Tensor& a, const Scalar& b) {
  Tensor out = scalar_forward(BinaryOp::Div, a, b, "div");
  if (any_requires_grad({&a})) {
    Tensor none;
    auto n = make_node<DivBackward0>({&a, &none});
    n->other = SavedVariable(wrap(b, a), false);
    set_history(out, n);
  }
  return out;
}
namespace {
// div with a rounding mode: piecewise constant, so both gradients are zero (PyTorch's
// DivBackward2 gives zeros of the grad's shape; the engine reduces a broadcast input's).
struct DivBackward2 final : Node {
  GRAFT_NODE_NAME("DivBackward2")
  TensorList apply(TensorList&& g) override {
    TensorList r(2);
    for (size_t i = 0; i < 2; ++i)
      if (should_compute_output(i)) r[i] = zeros_like(g[0]);
    return r;
  }
};
}  // namespace
Tensor div(const Tensor& a, const Tensor& b, std::string_view rounding_mode) {
  GRAFT_CHECK(rounding_mode == "trunc" || rounding_mode == "floor", RuntimeError,
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", rounding_mode, "'");
  detail::check_tensor(a, "div", "self");
  detail::check_tensor(b, "div", "other");
  Tensor out = rounding_div(a, b, rounding_mode == "trunc" ? DivMode::Trunc : DivMode::Floor, "div");
  if (any_requires_grad({&a, &b})) set_history(out, make_node<DivBackward2>({&a, &b}));
  return out;
}
Tensor div(const Tensor& a, const Scalar& b, std::string_view rounding_mode) {
  detail::check_tensor(a, "div", "self");
  return div(a, wrap(b, a), rounding_mode);
}
Tensor detail::unary_keep_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k,
                                  const char* bool_refusal) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  GRAFT_CHECK(!bool_refusal || self.dtype() != kBool, RuntimeError, bool_refusal);
  Tensor out = detail::new_empty(self.sizes(), self.dtype(), self.device());
  kernel::generated(static_cast<int>(k), out, self);
  return out;
}
Tensor detail::unary_rounding_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k,
                                      const char* refused_as, bool copy_integers) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  if (self.dtype() == kBool || (!copy_integers && !self.is_floating_point()))
    detail::kernel_not_implemented(refused_as, self.dtype());
  Tensor out = detail::new_empty(self.sizes(), self.dtype(), self.device());
  if (self.is_floating_point())
    kernel::generated(static_cast<int>(k), out, self);
  else
    kernel::copy(out, self);  // integers are their own floor, ceil, round and trunc
  return out;
}
Tensor floor_divide(const Tensor& a, const Tensor& b) { return rounding_div(a, b, DivMode::Floor, "floor_divide"); }
Tensor floor_divide(const Tensor& a, const Scalar& b) {
  detail::check_tensor(a, "floor_divide", "self");
  return rounding_div(a, wrap(b, a), DivMode::Floor, "floor_divide");
}
Tensor remainder(const Tensor& a, const Tensor& b) {
  Tensor out = rounding_div(a, b, DivMode::Remainder, "remainder");
  if (any_requires_grad({&a, &b})) {
    auto n = make_node<RemainderBackward1>({&a, &b});
    if (n->should_compute_output(1)) {
      n->self = SavedVariable(a, false);
      n->other = SavedVariable(b, false);
    }
    set_history(out, n);
  }
  return out;
}
Tensor remainder(const Tensor& a, const Scalar& b) {
  detail::check_tensor(a, "remainder", "self");
  Tensor out = rounding_div(a, wrap(b, a), DivMode::Remainder, "remainder");
  if (any_requires_grad({&a})) set_history(out, make_node<RemainderBackward0>({&a}));
  return out;
}
Tensor remainder(const Scalar& a, const Tensor& b) {
  detail::check_tensor(b, "remainder", "other");
  Tensor wa = wrap(a, b);
  Tensor out = rounding_div(wa, b, DivMode::Remainder, "remainder");
  if (any_requires_grad({&b})) {
    auto n = make_node<RemainderBackward1>({&b});
    n->scalar_self = true;
    n->self = SavedVariable(wa, false);
    n->other = SavedVariable(b, false);
    set_history(out, n);
  }
  return out;
}
Tensor pow(const Tensor& a, const Scalar& e) {
  detail::check_tensor(a, "pow");
  GRAFT_CHECK(!(is_integral(a.dtype(), true) && e.is_integral() && e.to_long() < 0), RuntimeError,
              "Integers to negative integer powers are not allowed.");
  if (is_integral(a.dtype(), false) && e.is_integral()) e.check_fits(a.dtype());  // PyTorch converts it
  Tensor out = scalar_forward(BinaryOp::Pow, a, e, "pow");
  if (any_requires_grad({&a})) {
    auto n = make_node<PowBackward0>({&a});
    n->self = SavedVariable(a, false);
    n->exponent = e;
    set_history(out, n);
  }
  return out;
}
Tensor square(const Tensor& a) {
  detail::check_tensor(a, "square");
  return a.dtype() == kBool ? pow(a.to(kInt64), 2) : pow(a, 2);
}
Tensor& square_(Tensor& a) { return detail::inplace_unary(a, "square_", &square); }
Tensor pow(const Tensor& a, const Tensor& e) {
  Tensor out = binary_forward(BinaryOp::Pow, a, e, "pow");
  if (any_requires_grad({&a, &e})) {
    auto n = make_node<PowBackward1>({&a, &e});
    n->self = SavedVariable(a, false);
    n->exponent = SavedVariable(e, false);
    set_history(out, n);
    if (n->should_compute_output(1)) n->result = SavedVariable(out, true);
  }
  return out;
}
Tensor pow(const Scalar& base, const Tensor& e) {
  detail::check_tensor(e, "pow", "exponent");
  Tensor out = scalar_forward(BinaryOp::Pow, e, base, "pow", 1, /*reverse=*/true);
  if (any_requires_grad({&e})) {
    auto n = make_node<PowBackward2>({&e});
    n->base = base.to_double();
    set_history(out, n);
    n->result = SavedVariable(out, true);
  }
  return out;
}

// ---------------- unary math ----------------
Tensor detail::unary_float_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  const DType dt = detail::float_result(self.dtype());
  Tensor out = detail::new_empty(self.sizes(), dt, self.device());
  Tensor tmp;
  kernel::generated(static_cast<int>(k), out, detail::as_dtype(self, dt, tmp));
  return out;
}
Tensor detail::activation_forward(const Tensor& self, const char* name, const char* refused_as,
                                  kernel::GeneratedKernel k, const double* args) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented(refused_as, self.dtype());
  Tensor out = detail::new_empty(self.sizes(), self.dtype(), self.device());
  kernel::generated(static_cast<int>(k), out, self, args);
  return out;
}
Tensor detail::gelu_forward(const Tensor& a, const std::string& approximate) {
  GRAFT_CHECK(approximate == "none" || approximate == "tanh", ValueError,
              "gelu: approximate argument must be either none or tanh, got '", approximate, "'");
  detail::check_tensor(a, "gelu");
  GRAFT_CHECK(a.defined() && a.is_floating_point(), RuntimeError, "gelu: expected a floating point tensor but got ",
              a.defined() ? a.dtype() : kFloat32);
  return unary_forward(approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu, a, "gelu", true);
}
Tensor clamp(const Tensor& a, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  GRAFT_CHECK(lo || hi, RuntimeError, "clamp: At least one of 'min' or 'max' must not be None");
  detail::check_tensor(a, "clamp");
  GRAFT_CHECK(a.dtype() != kBool, RuntimeError, "clamp: not implemented for 'Bool'");
  // a bound must fit the tensor's dtype (a float bound on an integer tensor is compared as a float)
  for (const std::optional<Scalar>* b : {&lo, &hi})
    if (*b && !(is_integral(a.dtype(), true) && (*b)->is_floating_point())) (*b)->check_fits(a.dtype());
  const double inf = std::numeric_limits<double>::infinity();
  Tensor out =
      unary_forward(UnaryOp::Clamp, a, "clamp", false, lo ? lo->to_double() : -inf, hi ? hi->to_double() : inf);
  if (any_requires_grad({&a})) {
    auto n = make_node<ClampBackward1>({&a});
    n->self = SavedVariable(a, false);
    n->lo = lo;
    n->hi = hi;
    set_history(out, n);
  }
  return out;
}

namespace {
// clamp with tensor bounds (PyTorch's ClampBackward0): self's gradient passes where
// min <= self <= max (a NaN anywhere fails the test); min's where self < min < max; max's where
// self > max or max < min (then the result is max).
struct ClampBackward0 final : Node {
  GRAFT_NODE_NAME("ClampBackward0")
  GRAFT_NODE_SAVED(self, min, max)
  SavedVariable self, min, max;
  bool has_min = false, has_max = false;
  TensorList apply(TensorList&& g) override {
    const Tensor x = self.unpack(this);
    const Tensor lo = has_min ? min.unpack(this) : Tensor(), hi = has_max ? max.unpack(this) : Tensor();
    TensorList r(3);
    if (should_compute_output(0)) {
      Tensor pass = has_min ? ge(x, lo) : Tensor();
      if (has_max) pass = pass.defined() ? logical_and(pass, le(x, hi)) : le(x, hi);
      r[0] = where(pass, g[0], 0.0);
    }
    if (has_min && should_compute_output(1))
      r[1] = where(has_max ? logical_and(lt(x, lo), lt(lo, hi)) : lt(x, lo), g[0], 0.0);
    if (has_max && should_compute_output(2))
      r[2] = where(has_min ? logical_or(gt(x, hi), lt(hi, lo)) : gt(x, hi), g[0], 0.0);
    return r;
  }
};
}  // namespace

Tensor clamp(const Tensor& a, const Tensor& l, const Tensor& h) {
  GRAFT_CHECK(l.defined() || h.defined(), RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None");
  detail::check_tensor(a, "clamp");
  // min(max(a, lo), hi) with NaN from any operand (maximum and minimum propagate it)
  Tensor out;
  {
    NoGradGuard ng;
    out = l.defined() ? maximum(a, l) : a;
    if (h.defined()) out = minimum(out, h);  // out is maximum's fresh result otherwise
  }
  if (any_requires_grad({&a, &l, &h})) {
    auto n = make_node<ClampBackward0>({&a, &l, &h});
    n->self = SavedVariable(a, false);
    n->has_min = l.defined();
    n->has_max = h.defined();
    if (l.defined()) n->min = SavedVariable(l, false);
    if (h.defined()) n->max = SavedVariable(h, false);
    set_history(out, n);
  }
  return out;
}

Tensor detail::where_forward(const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::check_tensor(cond, "where", "condition");
  detail::check_tensor(a, "where", "self");
  detail::check_tensor(b, "where", "other");
  GRAFT_CHECK(cond.dtype() == kBool, RuntimeError,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              scalar_type_name(cond.dtype()));
  Shape s = detail::broadcast_shapes(detail::broadcast_shapes(cond.sizes(), a.sizes()), b.sizes());
  DType ct = detail::result_type(a, b);
  Tensor out = detail::new_empty(s, ct, a.device());
  kernel::where(out, cond, detail::cast_nograd(a, ct), detail::cast_nograd(b, ct));
  return out;
}
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  detail::check_tensor(a, "where", "self");
  return where(cond, a, detail::wrapped_scalar(b, detail::result_type(a, b), a.device()));
}
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  detail::check_tensor(b, "where", "other");
  return where(cond, detail::wrapped_scalar(a, detail::result_type(b, a), b.device()), b);
}

// ---------------- the generated binary families' forwards (src/ops/ops.yaml) ----------------
namespace {
// Broadcasts a and b, computes them in `ct` on their common device (a 0-d CPU operand goes with
// a tensor of any device) and writes generated kernel `k` into a new tensor of dtype `out_dtype`.
Tensor generated_binary_out(const Tensor& a, const Tensor& b, kernel::GeneratedBinaryKernel k, DType ct,
                            DType out_dtype) {
  Shape shape = detail::broadcast_shapes(a.sizes(), b.sizes());
  const Device dev = detail::common_device(a, b);
  Tensor out = detail::new_empty(shape, out_dtype, dev);
  Tensor ta, tb;
  kernel::generated_binary(static_cast<int>(k), out, detail::as_operand(a, ct, dev, ta),
                           detail::as_operand(b, ct, dev, tb));
  return out;
}
// A number as the 0-d operand of a generated binary op computing in `ct`. PyTorch's Scalar
// overloads wrap the number into a 0-d tensor, which is cast to the compute dtype as tensors
// are (an int32 tensor > -2**62 compares with the cast value, 0; no overflow error); graft
// wraps it straight into `ct` with that cast's value.
Tensor wrapped_in(const Scalar& s, DType ct, Device device) {
  Scalar value = s;
  switch (ct) {
    case kBool:
      value = Scalar(s.to<bool>());
      break;
    case kInt32:
      value = Scalar(static_cast<int64_t>(s.to<int32_t>()));
      break;
    case kInt64:
      value = Scalar(s.to<int64_t>());
      break;
    case kFloat32:
      value = Scalar(static_cast<double>(s.to<float>()));
      break;
    case kFloat64:
      break;
  }
  return detail::wrapped_scalar(value, ct, device);
}
}  // namespace

Tensor detail::binary_generated_forward(const Tensor& self, const Tensor& other, const char* name,
                                        kernel::GeneratedBinaryKernel k, BinaryResult rule) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  detail::check_tensor(other, name, "other");
  DType ct = detail::result_type(self, other);
  if (rule == BinaryResult::Float) ct = detail::float_result(ct);
  if (rule == BinaryResult::FloatingOnly && !is_floating_point(ct))
    detail::kernel_not_implemented((std::string(name) + "_cpu").c_str(), ct);
  return generated_binary_out(self, other, k, ct, ct);
}
Tensor detail::binary_predicate_forward(const Tensor& self, const Tensor& other, const char* name,
                                        kernel::GeneratedBinaryKernel k) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  detail::check_tensor(other, name, "other");
  return generated_binary_out(self, other, k, detail::result_type(self, other), kBool);
}
Tensor detail::binary_predicate_forward(const Tensor& self, const Scalar& other, const char* name,
                                        kernel::GeneratedBinaryKernel k) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  const DType ct = detail::result_type(self, other);
  return generated_binary_out(self, wrapped_in(other, ct, self.device()), k, ct, kBool);
}
Tensor detail::binary_bitwise_forward(const Tensor& self, const Tensor& other, const char* name,
                                      kernel::GeneratedBinaryKernel k) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  detail::check_tensor(other, name, "other");
  const DType ct = detail::result_type(self, other);
  if (is_floating_point(ct)) detail::kernel_not_implemented((std::string(name) + "_cpu").c_str(), ct);
  return generated_binary_out(self, other, k, ct, ct);
}
Tensor detail::binary_bitwise_forward(const Tensor& self, const Scalar& other, const char* name,
                                      kernel::GeneratedBinaryKernel k) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  const DType ct = detail::result_type(self, other);
  if (is_floating_point(ct)) detail::kernel_not_implemented((std::string(name) + "_cpu").c_str(), ct);
  return generated_binary_out(self, wrapped_in(other, ct, self.device()), k, ct, ct);
}

Tensor bitwise_not(const Tensor& a) {
  alloc::MemoryOpScope mem_scope("bitwise_not");
  detail::check_tensor(a, "bitwise_not");
  if (a.is_floating_point()) detail::kernel_not_implemented("bitwise_not_cpu", a.dtype());
  Tensor out = detail::new_empty(a.sizes(), a.dtype(), a.device());
  kernel::unary(UnaryOp::BitNot, out, a);
  return out;
}
Tensor detail::unary_predicate_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  Tensor out = detail::new_empty(self.sizes(), kBool, self.device());
  kernel::generated(static_cast<int>(k), out, self);
  return out;
}

bool equal(const Tensor& a, const Tensor& b) {
  detail::check_tensor(a, "equal", "self");
  detail::check_tensor(b, "equal", "other");
  if (!detail::has_data(a)) kernel::not_implemented_for("aten::equal", a.device());
  if (!a.sizes().equals(b.sizes())) return false;
  NoGradGuard ng;
  return a.numel() == 0 || logical_not(eq(a, b)).to(kInt64).sum().item<int64_t>() == 0;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  detail::check_tensor(a, "allclose", "self");
  detail::check_tensor(b, "allclose", "other");
  GRAFT_CHECK(a.dtype() == b.dtype(), RuntimeError, scalar_type_name(a.dtype()), " did not match ",
              scalar_type_name(b.dtype()));
  GRAFT_CHECK(rtol >= 0, RuntimeError, "rtol must be greater than or equal to zero, but got ", rtol);
  GRAFT_CHECK(atol >= 0, RuntimeError, "atol must be greater than or equal to zero, but got ", atol);
  NoGradGuard ng;
  Tensor x = a.to(kFloat64), y = b.to(kFloat64);
  // PyTorch's isclose: equal (infinities of the same sign), or a finite difference within the
  // tolerance (1 and inf differ by inf, which no tolerance covers)
  Tensor close = x == y;
  if (equal_nan) close = logical_or(close, logical_and(isnan(x), isnan(y)));
  Tensor err = abs(x - y);
  Tensor finite = logical_not(logical_or(isnan(err), err == std::numeric_limits<double>::infinity()));
  close = logical_or(close, logical_and(finite, err <= abs(y * rtol) + atol));
  return logical_not(close).to(kInt64).sum().item<int64_t>() == 0;
}

}  // namespace graft

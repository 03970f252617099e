// Elementwise ops and their backward nodes. Each backward is written in graft ops, so it
// is itself differentiable (double backward). Broadcast gradients are reduced by the engine.
#include <cmath>
#include <type_traits>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
using kernel::BinaryOp;
using kernel::DivMode;
using kernel::UnaryOp;

namespace {

// The arithmetic forwards (checks and kernels; graft::add etc. and their nodes are generated
// from src/ops/ops.yaml, which opens the op's MemoryOpScope around them).
Tensor binary_forward(BinaryOp op, const Tensor& a, const Tensor& b, const char* name, const Scalar& alpha = 1,
                      Tensor* into = nullptr) {
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
    detail::ElementwiseOutput out(into, shape, ct, common, {&a, &b});
    kernel::binary(op, out.out(), detail::as_operand(a, ct, common, ta), detail::as_operand(b, ct, common, tb), alpha);
    return out.result();
  }
  detail::ElementwiseOutput out(into, shape, ct, dev, {&a, &b});
  kernel::binary(op, out.out(), detail::as_dtype(a, ct, ta), detail::as_dtype(b, ct, tb), alpha);
  return out.result();
}

Tensor scalar_forward(BinaryOp op, const Tensor& a, const Scalar& s, const char* name, const Scalar& alpha = 1,
                      bool reverse = false, Tensor* into = nullptr) {
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
  detail::ElementwiseOutput out(into, a.sizes(), ct, a.device(), {&a});
  Tensor ta;
  kernel::binary_scalar(op, out.out(), detail::as_dtype(a, ct, ta), s, alpha, reverse);
  return out.result();
}

Tensor unary_forward(UnaryOp op, const Tensor& a, const char* name, bool to_float, double p0 = 0, double p1 = 0,
                     Tensor* into = nullptr) {
  detail::check_tensor(a, name);
  DType dt = to_float ? detail::float_result(a.dtype()) : a.dtype();
  detail::ElementwiseOutput out(into, a.sizes(), dt, a.device(), {&a});
  Tensor ta;
  kernel::unary(op, out.out(), detail::as_dtype(a, dt, ta), p0, p1);
  return out.result();
}

// ---------------- floor division, remainder ----------------

// out = a // b, a % b or trunc(a / b), broadcast, in the promoted dtype (bool rejected, as PyTorch).
Tensor rounding_div(const Tensor& a, const Tensor& b, DivMode mode, const char* name, Tensor* into = nullptr) {
  const bool rem = mode == DivMode::Remainder;
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
  Tensor ta, tb;
  const Tensor& x = detail::as_operand(a, ct, dev, ta);
  const Tensor& y = detail::as_operand(b, ct, dev, tb);
  if (into && is_integral(ct, true) && detail::has_data(y) && compute_numel(shape) > 0) {  // before self is written
    NoGradGuard no_grad;
    GRAFT_CHECK(sum(eq(y, Scalar(0))).item<int64_t>() == 0, RuntimeError, "ZeroDivisionError");
  }
  detail::ElementwiseOutput out(into, shape, ct, dev, {&a, &b});
  const bool zero_div = kernel::rounding_div(mode, out.out(), x, y);
  GRAFT_CHECK(!zero_div, RuntimeError, "ZeroDivisionError");
  return out.result();
}
DivMode rounding_mode_of(std::string_view rounding_mode) {
  GRAFT_CHECK(rounding_mode == "trunc" || rounding_mode == "floor", RuntimeError,
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", rounding_mode, "'");
  return rounding_mode == "trunc" ? DivMode::Trunc : DivMode::Floor;
}
}  // namespace

// ---------------- arithmetic ----------------
Tensor detail::add_forward(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor* into) {
  return binary_forward(BinaryOp::Add, self, other, "add", alpha, into);
}
Tensor detail::add_forward(const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor* into) {
  return scalar_forward(BinaryOp::Add, self, other, "add", alpha, false, into);
}
Tensor detail::sub_forward(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor* into) {
  return binary_forward(BinaryOp::Sub, self, other, "sub", alpha, into);
}
Tensor detail::sub_forward(const Tensor& self, const Scalar& other, const Scalar& alpha, Tensor* into) {
  return scalar_forward(BinaryOp::Sub, self, other, "sub", alpha, false, into);
}
Tensor detail::sub_forward(const Scalar& self, const Tensor& other, const Scalar& alpha) {
  return scalar_forward(BinaryOp::Sub, other, self, "rsub", alpha, /*reverse=*/true);
}
Tensor detail::mul_forward(const Tensor& self, const Tensor& other, Tensor* into) {
  return binary_forward(BinaryOp::Mul, self, other, "mul", 1, into);
}
Tensor detail::mul_forward(const Tensor& self, const Scalar& other, Tensor* into) {
  return scalar_forward(BinaryOp::Mul, self, other, "mul", 1, false, into);
}
Tensor detail::div_forward(const Tensor& self, const Tensor& other, Tensor* into) {
  return binary_forward(BinaryOp::Div, self, other, "div", 1, into);
}
Tensor detail::div_forward(const Tensor& self, const Scalar& other, Tensor* into) {
  return scalar_forward(BinaryOp::Div, self, other, "div", 1, false, into);
}
Tensor detail::div_forward(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode,
                           Tensor* into) {
  if (!rounding_mode) return div_forward(self, other, into);
  const DivMode mode = rounding_mode_of(*rounding_mode);
  return rounding_div(self, other, mode, "div", into);
}
Tensor detail::div_forward(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode,
                           Tensor* into) {
  if (!rounding_mode) return div_forward(self, other, into);
  const DivMode mode = rounding_mode_of(*rounding_mode);
  detail::check_tensor(self, "div", "self");
  return rounding_div(self, detail::wrapped_number(other, self.device()), mode, "div", into);
}
Tensor detail::unary_keep_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k,
                                  const char* bool_refusal, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  GRAFT_CHECK(!bool_refusal || self.dtype() != kBool, RuntimeError, bool_refusal);
  detail::ElementwiseOutput out(into, self.sizes(), self.dtype(), self.device());
  kernel::generated(static_cast<int>(k), out.out(), self);
  return out.result();
}
Tensor detail::unary_rounding_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k,
                                      const char* refused_as, bool copy_integers, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  if (self.dtype() == kBool || (!copy_integers && !self.is_floating_point()))
    detail::kernel_not_implemented(refused_as, self.dtype());
  detail::ElementwiseOutput out(into, self.sizes(), self.dtype(), self.device());
  if (self.is_floating_point())
    kernel::generated(static_cast<int>(k), out.out(), self);
  else if (!into)
    kernel::copy(out.out(), self);  // integers are their own floor, ceil, round and trunc
  return out.result();
}
Tensor floor_divide(const Tensor& self, const Tensor& other) {
  alloc::MemoryOpScope mem_scope("floor_divide");
  return rounding_div(self, other, DivMode::Floor, "floor_divide");
}
Tensor floor_divide(const Tensor& self, const Scalar& other) {
  alloc::MemoryOpScope mem_scope("floor_divide");
  detail::check_tensor(self, "floor_divide", "self");
  return rounding_div(self, detail::wrapped_number(other, self.device()), DivMode::Floor, "floor_divide");
}
Tensor& floor_divide_(Tensor& self, const Tensor& other) { return div_(self, other, "floor"); }
Tensor& floor_divide_(Tensor& self, const Scalar& other) { return div_(self, other, "floor"); }
Tensor detail::remainder_forward(const Tensor& self, const Tensor& other, Tensor* into) {
  return rounding_div(self, other, DivMode::Remainder, "remainder", into);
}
Tensor detail::remainder_forward(const Tensor& self, const Scalar& other, Tensor* into) {
  detail::check_tensor(self, "remainder", "self");
  return rounding_div(self, detail::wrapped_number(other, self.device()), DivMode::Remainder, "remainder", into);
}
Tensor detail::remainder_forward(const Scalar& self, const Tensor& other) {
  detail::check_tensor(other, "remainder", "other");
  return rounding_div(detail::wrapped_number(self, other.device()), other, DivMode::Remainder, "remainder");
}
Tensor detail::pow_forward(const Tensor& self, const Scalar& exponent, Tensor* into) {
  detail::check_tensor(self, "pow");
  GRAFT_CHECK(!(is_integral(self.dtype(), true) && exponent.is_integral() && exponent.to_long() < 0), RuntimeError,
              "Integers to negative integer powers are not allowed.");
  // PyTorch converts the exponent to an integer self's dtype
  if (is_integral(self.dtype(), false) && exponent.is_integral()) exponent.check_fits(self.dtype());
  return scalar_forward(BinaryOp::Pow, self, exponent, "pow", 1, false, into);
}
Tensor square(const Tensor& self) {
  detail::check_tensor(self, "square");
  return self.dtype() == kBool ? pow(self.to(kInt64), 2) : pow(self, 2);
}
Tensor& square_(Tensor& self) { return pow_(self, 2); }  // PyTorch's square_: pow_(2), PowBackward0
Tensor detail::pow_forward(const Tensor& self, const Tensor& exponent, Tensor* into) {
  return binary_forward(BinaryOp::Pow, self, exponent, "pow", 1, into);
}
Tensor detail::pow_forward(const Scalar& self, const Tensor& exponent) {
  detail::check_tensor(exponent, "pow", "exponent");
  return scalar_forward(BinaryOp::Pow, exponent, self, "pow", 1, /*reverse=*/true);
}

// ---------------- unary math ----------------
Tensor detail::unary_float_forward(const Tensor& self, const char* name, kernel::GeneratedKernel k, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  const DType dt = detail::float_result(self.dtype());
  detail::ElementwiseOutput out(into, self.sizes(), dt, self.device());
  Tensor tmp;
  kernel::generated(static_cast<int>(k), out.out(), detail::as_dtype(self, dt, tmp));
  return out.result();
}
Tensor detail::activation_forward(const Tensor& self, const char* name, const char* refused_as,
                                  kernel::GeneratedKernel k, const double* args, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name);
  if (!is_floating_point(self.dtype())) detail::kernel_not_implemented(refused_as, self.dtype());
  detail::ElementwiseOutput out(into, self.sizes(), self.dtype(), self.device());
  kernel::generated(static_cast<int>(k), out.out(), self, args);
  return out.result();
}
Tensor detail::gelu_forward(const Tensor& a, const std::string& approximate) {
  GRAFT_CHECK(approximate == "none" || approximate == "tanh", RuntimeError,
              "approximate argument must be either none or tanh.");
  detail::check_tensor(a, "gelu");
  GRAFT_CHECK(a.defined() && a.is_floating_point(), RuntimeError, "gelu: expected a floating point tensor but got ",
              a.defined() ? a.dtype() : kFloat32);
  return unary_forward(approximate == "tanh" ? UnaryOp::GeluTanh : UnaryOp::Gelu, a, "gelu", true);
}
Tensor detail::threshold_forward(const Tensor& self, const Scalar& threshold, const Scalar& value, Tensor* into) {
  detail::check_tensor(self, "threshold");
  if (self.dtype() == kBool) detail::kernel_not_implemented("threshold_cpu", kBool);
  // both numbers are converted to self's dtype (a fraction truncated for integers), as PyTorch's
  // kernel converts them; one out of the dtype's range is refused
  threshold.check_fits(self.dtype());
  value.check_fits(self.dtype());
  return unary_forward(UnaryOp::Threshold, self, "threshold", false, threshold.to_double(), value.to_double(), into);
}
Tensor detail::threshold_backward_forward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  // one pass (no mask tensor): grad_output where self > threshold, 0 elsewhere (NaN passes)
  detail::check_tensor(grad_output, "threshold_backward", "grad_output");
  detail::check_tensor(self, "threshold_backward", "self");
  const DType ct = detail::result_type(grad_output, self);
  if (ct == kBool) detail::kernel_not_implemented("threshold_cpu", kBool);
  threshold.check_fits(ct);
  return binary_forward(BinaryOp::ThresholdBackward, grad_output, self, "threshold_backward", threshold);
}
Tensor detail::clamp_forward(const Tensor& self, std::optional<Scalar> min, std::optional<Scalar> max, Tensor* into) {
  GRAFT_CHECK(min || max, RuntimeError, "torch.clamp: At least one of 'min' or 'max' must not be None");
  detail::check_tensor(self, "clamp");
  // a bound of a higher category promotes self, as PyTorch's type promotion: a float bound makes
  // an integer or bool self float (the default dtype), an integer bound a bool self int64
  DType promoted = self.dtype();
  for (const std::optional<Scalar>* b : {&min, &max}) {
    if (!*b) continue;
    if ((*b)->is_floating_point() && !is_floating_point(promoted))
      promoted = default_dtype();
    else if (!(*b)->is_bool() && promoted == kBool)
      promoted = kInt64;
  }
  if (promoted != self.dtype()) {
    GRAFT_CHECK(!into, RuntimeError, "result type ", scalar_type_name(promoted),
                " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
    return clamp_forward(detail::cast_nograd(self, promoted), min, max);
  }
  GRAFT_CHECK(self.dtype() != kBool, RuntimeError, "clamp: not implemented for 'Bool'");
  // a bound must fit the tensor's dtype
  for (const std::optional<Scalar>* b : {&min, &max})
    if (*b) (*b)->check_fits(self.dtype());
  const double inf = std::numeric_limits<double>::infinity();
  return unary_forward(UnaryOp::Clamp, self, "clamp", false, min ? min->to_double() : -inf,
                       max ? max->to_double() : inf, into);
}
Tensor detail::clamp_forward(const Tensor& self, const Tensor& min, const Tensor& max, Tensor* into) {
  GRAFT_CHECK(min.defined() || max.defined(), RuntimeError,
              "torch.clamp: At least one of 'min' or 'max' must not be None");
  detail::check_tensor(self, "clamp");
  // min(max(self, min), max) with NaN from any operand (maximum and minimum propagate it); in
  // place, the second pass reads what the first wrote into self
  const auto maximum_k = kernel::GeneratedBinaryKernel::maximum, minimum_k = kernel::GeneratedBinaryKernel::minimum;
  if (into && min.defined() && max.defined()) {
    // self checked against both bounds (shape, dtype, overlap) before the first pass writes it
    const Shape shape = detail::broadcast_shapes(detail::broadcast_shapes(self.sizes(), min.sizes()), max.sizes());
    const DType ct = promote_types(detail::result_type(self, min), detail::result_type(self, max));
    detail::ElementwiseOutput out(into, shape, ct, self.device(), {&self, &min, &max});
    Tensor written = out.out();  // self, or a temporary of the compute dtype
    binary_generated_forward(self, min, "clamp", maximum_k, BinaryResult::Promote, &written);
    binary_generated_forward(written, max, "clamp", minimum_k, BinaryResult::Promote, &written);
    return out.result();
  }
  if (into)
    return binary_generated_forward(self, min.defined() ? min : max, "clamp", min.defined() ? maximum_k : minimum_k,
                                    BinaryResult::Promote, into);
  Tensor out = min.defined() ? binary_generated_forward(self, min, "clamp", maximum_k, BinaryResult::Promote) : self;
  return max.defined() ? binary_generated_forward(out, max, "clamp", minimum_k, BinaryResult::Promote) : out;
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
// ---- where's composite overloads (ops.yaml): numbers as wrapped numbers ----
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  detail::check_tensor(self, "where", "self");
  return where(condition, self, detail::wrapped_scalar(other, detail::result_type(self, other), self.device()));
}
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  detail::check_tensor(other, "where", "other");
  return where(condition, detail::wrapped_scalar(self, detail::result_type(other, self), other.device()), other);
}
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  detail::check_tensor(condition, "where", "condition");
  const DType dtype = promote_types(self.natural_dtype(), other.natural_dtype());  // 1 and 2.5: float32
  return where(condition, detail::wrapped_scalar(self, dtype, condition.device()),
               detail::wrapped_scalar(other, dtype, condition.device()));
}

// ---------------- the generated binary families' forwards (src/ops/ops.yaml) ----------------
namespace {
// Broadcasts a and b, computes them in `ct` on their common device (a 0-d CPU operand goes with
// a tensor of any device) and writes generated kernel `k` into a new tensor of dtype `out_dtype`.
Tensor generated_binary_out(const Tensor& a, const Tensor& b, kernel::GeneratedBinaryKernel k, DType ct,
                            DType out_dtype, Tensor* into = nullptr) {
  Shape shape = detail::broadcast_shapes(a.sizes(), b.sizes());
  const Device dev = detail::common_device(a, b);
  detail::ElementwiseOutput out(into, shape, out_dtype, dev, {&a, &b});
  Tensor ta, tb;
  kernel::generated_binary(static_cast<int>(k), out.out(), detail::as_operand(a, ct, dev, ta),
                           detail::as_operand(b, ct, dev, tb));
  return out.result();
}
// A number as the 0-d operand of a generated binary op computing in `ct`. PyTorch's Scalar
// overloads wrap the number into a 0-d tensor, which is cast to the compute dtype as tensors
// are (an int32 tensor > -2**62 compares with the cast value, 0; no overflow error); graft
// wraps it straight into `ct` with that cast's value.
Tensor wrapped_in(const Scalar& s, DType ct, Device device) {
  const Scalar value = GRAFT_DISPATCH_ALL_AND_REDUCED(ct, "wrapped_in", [&]() -> Scalar {
    if constexpr (std::is_same_v<scalar_t, bool>)
      return s.to<bool>();
    else if constexpr (std::is_same_v<scalar_t, double>)
      return s;
    else if constexpr (is_floating_type_v<scalar_t>)
      return static_cast<double>(s.to<scalar_t>());
    else
      return static_cast<int64_t>(s.to<scalar_t>());
  });
  return detail::wrapped_scalar(value, ct, device);
}
}  // namespace

Tensor detail::binary_generated_forward(const Tensor& self, const Tensor& other, const char* name,
                                        kernel::GeneratedBinaryKernel k, BinaryResult rule, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  detail::check_tensor(other, name, "other");
  DType ct = detail::result_type(self, other);
  if (rule == BinaryResult::Float) ct = detail::float_result(ct);
  if (rule == BinaryResult::FloatingOnly && !is_floating_point(ct))
    detail::kernel_not_implemented((std::string(name) + "_cpu").c_str(), ct);
  return generated_binary_out(self, other, k, ct, ct, into);
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
                                      kernel::GeneratedBinaryKernel k, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  detail::check_tensor(other, name, "other");
  const DType ct = detail::result_type(self, other);
  if (is_floating_point(ct)) detail::kernel_not_implemented((std::string(name) + "_cpu").c_str(), ct);
  return generated_binary_out(self, other, k, ct, ct, into);
}
Tensor detail::binary_bitwise_forward(const Tensor& self, const Scalar& other, const char* name,
                                      kernel::GeneratedBinaryKernel k, Tensor* into) {
  alloc::MemoryOpScope mem_scope(name);
  detail::check_tensor(self, name, "self");
  const DType ct = detail::result_type(self, other);
  if (is_floating_point(ct)) detail::kernel_not_implemented((std::string(name) + "_cpu").c_str(), ct);
  return generated_binary_out(self, wrapped_in(other, ct, self.device()), k, ct, ct, into);
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

// Products with a scaled input added, written in other graft ops (declared in src/ops/ops.yaml,
// the composite family): outer, mv, addmm, addmv, addr, baddbmm, addbmm (beta * self + alpha * product),
// addcmul, addcdiv (self + value * t1 op t2) and lerp, with their in-place forms. Autograd comes
// from the ops they call, as PyTorch's CompositeImplicitAutograd.
#include <cmath>
#include <string_view>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
namespace {

// A number as an op of dtype uses it: integer dtypes truncate it, as PyTorch's kernels do.
Scalar as_operand_of(const Scalar& s, DType dtype) {
  return is_floating_point(dtype) || s.is_bool() ? s : Scalar(s.to_long());
}

// beta * self + alpha * product, self broadcast to the product's shape (expand's error when it
// cannot be); beta 0 leaves self out, so its NaN and inf do not reach the result.
Tensor scaled_sum(const Tensor& self, const Tensor& product, const Scalar& beta, const Scalar& alpha) {
  const Tensor input = self.expand(product.sizes());
  const DType dt = product.dtype();
  const Scalar a = as_operand_of(alpha, dt), b = as_operand_of(beta, dt);
  const Tensor scaled = a.to_double() == 1 ? product : mul(product, a);
  if (b.to_double() == 0) return a.to_double() == 1 ? product.clone() : scaled;
  return add(scaled, input, b);
}

// The same, in place: self *= beta (zeroed for 0), then self += alpha * product.
Tensor& scaled_sum_(Tensor& self, const Tensor& product, const Scalar& beta, const Scalar& alpha) {
  const Scalar a = as_operand_of(alpha, self.dtype()), b = as_operand_of(beta, self.dtype());
  // a product that does not broadcast into self: add_'s error, before self is touched
  if (!self.sizes().equals(detail::broadcast_shapes(self.sizes(), product.sizes()))) return self.add_(product, a);
  if (b.to_double() == 0)
    self.zero_();
  else if (b.to_double() != 1)
    self.mul_(b);
  return self.add_(product, a);
}

void check_same_dtype(const Tensor& self, const Tensor& m1, const Tensor& m2) {
  GRAFT_CHECK(self.dtype() == m2.dtype(), RuntimeError, "self and mat2 must have the same dtype, but got ",
              scalar_type_name(self.dtype()), " and ", scalar_type_name(m2.dtype()));
  GRAFT_CHECK(m1.dtype() == m2.dtype(), RuntimeError, "mat1 and mat2 must have the same dtype, but got ",
              scalar_type_name(m1.dtype()), " and ", scalar_type_name(m2.dtype()));
}

Tensor checked_mm(const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  detail::check_tensor(self, "addmm", "self");
  detail::check_tensor(mat1, "addmm", "mat1");
  detail::check_tensor(mat2, "addmm", "mat2");
  GRAFT_CHECK(mat1.dim() == 2, RuntimeError, "addmm: self must be a matrix, got ", mat1.dim(), "-D tensor");
  GRAFT_CHECK(mat2.dim() == 2, RuntimeError, "addmm: mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  GRAFT_CHECK(mat1.size(1) == mat2.size(0), RuntimeError, "addmm: mat1 and mat2 shapes cannot be multiplied (",
              mat1.size(0), "x", mat1.size(1), " and ", mat2.size(0), "x", mat2.size(1), ")");
  check_same_dtype(self, mat1, mat2);
  return mm(mat1, mat2);
}

Tensor checked_mv(const Tensor& self, const Tensor& mat, const Tensor& vec) {
  detail::check_tensor(self, "addmv", "self");
  detail::check_tensor(mat, "addmv", "mat");
  detail::check_tensor(vec, "addmv", "vec");
  GRAFT_CHECK(mat.dim() == 2 && vec.dim() == 1 && self.dim() <= 1, RuntimeError,
              "vector + matrix @ vector expected, got ", self.dim(), ", ", mat.dim(), ", ", vec.dim());
  GRAFT_CHECK(mat.size(1) == vec.size(0) && (self.numel() == mat.size(0) || self.numel() == 1), RuntimeError,
              "size mismatch, got input (", self.numel(), "), mat (", mat.size(0), "x", mat.size(1), "), vec (",
              vec.size(0), ")");
  check_same_dtype(self, mat, vec);
  return mv(mat, vec);
}

Tensor checked_outer(const Tensor& self, const Tensor& vec1, const Tensor& vec2) {
  detail::check_tensor(self, "addr", "self");
  GRAFT_CHECK(vec1.dim() == 1, RuntimeError, "addr: Expected 1-D argument vec1, but got ", vec1.dim(), "-D");
  GRAFT_CHECK(vec2.dim() == 1, RuntimeError, "addr: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  return outer(vec1, vec2);
}

// t.size(d) with PyTorch's IndexError for a 0-d t ("Dimension specified as 1 but tensor has no
// dimensions") or a dim out of range.
int64_t size_at(const Tensor& t, int64_t d) {
  if (t.dim() == 0) throw IndexError(detail::str("Dimension specified as ", d, " but tensor has no dimensions"));
  return t.size(detail::wrap_dim(d, t.dim(), "size"));
}

Tensor checked_bmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const char* op) {
  detail::check_tensor(self, op, "self");
  // PyTorch reads the result's sizes (expanding self to them) before it checks the dims
  if (std::string_view(op) == "baddbmm")
    (void)size_at(batch1, 0), (void)size_at(batch1, 1);
  else
    (void)size_at(batch1, 1);
  (void)size_at(batch2, 2);
  GRAFT_CHECK(batch1.dim() == 3, RuntimeError, "batch1 must be a 3D tensor");
  GRAFT_CHECK(batch2.dim() == 3, RuntimeError, "batch2 must be a 3D tensor");
  GRAFT_CHECK(batch1.size(0) == batch2.size(0), RuntimeError,
              "batch1 and batch2 must have same number of batches, got ", batch1.size(0), " and ", batch2.size(0));
  check_same_dtype(self, batch1, batch2);
  return bmm(batch1, batch2);
}

// PyTorch's refusal of integer division in addcdiv.
void check_addcdiv(const Tensor& tensor1, const Tensor& tensor2) {
  GRAFT_CHECK(!(is_integral(tensor1.dtype(), true) && is_integral(tensor2.dtype(), true)), RuntimeError,
              "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a "
              "true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
              "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
              "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
              "(input + value * tensor1 / tensor2), for all dtypes.");
}

// lerp's dtype rules: floating self, end (and a tensor weight) of self's dtype.
void check_lerp(const Tensor& self, const Tensor& end, const Tensor* weight) {
  detail::check_tensor(self, "lerp", "self");
  detail::check_tensor(end, "lerp", "end");
  GRAFT_CHECK(self.dtype() == end.dtype(), RuntimeError, "expected dtype ", dtype_cpp_name(self.dtype()),
              " for `end` but got dtype ", dtype_cpp_name(end.dtype()));
  if (weight)
    GRAFT_CHECK(self.dtype() == weight->dtype(), RuntimeError, "expected dtype ", dtype_cpp_name(self.dtype()),
                " for `weight` but got dtype ", dtype_cpp_name(weight->dtype()));
  if (!is_floating_point(self.dtype()))
    detail::kernel_not_implemented(weight ? "lerp_kernel_tensor" : "lerp_kernel_scalar", self.dtype());
}

}  // namespace

Tensor outer(const Tensor& self, const Tensor& vec2) {
  detail::check_tensor(self, "outer", "self");
  detail::check_tensor(vec2, "outer", "vec2");
  GRAFT_CHECK(self.dim() == 1, RuntimeError, "outer: Expected 1-D argument self, but got ", self.dim(), "-D");
  GRAFT_CHECK(vec2.dim() == 1, RuntimeError, "outer: Expected 1-D argument vec2, but got ", vec2.dim(), "-D");
  return mul(self.unsqueeze(1), vec2.unsqueeze(0));
}

Tensor mv(const Tensor& self, const Tensor& vec) {
  detail::check_tensor(self, "mv", "self");
  detail::check_tensor(vec, "mv", "vec");
  (void)size_at(self, 0);
  GRAFT_CHECK(self.dim() == 2 && vec.dim() == 1, RuntimeError, "vector + matrix @ vector expected, got 1, ", self.dim(),
              ", ", vec.dim());
  GRAFT_CHECK(self.size(1) == vec.size(0), RuntimeError, "size mismatch, got input (", self.size(0), "), mat (",
              self.size(0), "x", self.size(1), "), vec (", vec.size(0), ")");
  return mm(self, vec.unsqueeze(1)).squeeze(1);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(self, checked_mm(self, mat1, mat2), beta, alpha);
}
Tensor& addmm_(Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum_(self, checked_mm(self, mat1, mat2), beta, alpha);
}

Tensor addmv(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(self, checked_mv(self, mat, vec), beta, alpha);
}
Tensor& addmv_(Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum_(self, checked_mv(self, mat, vec), beta, alpha);
}

Tensor addr(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(self, checked_outer(self, vec1, vec2), beta, alpha);
}
Tensor& addr_(Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta, const Scalar& alpha) {
  GRAFT_CHECK(self.dim() == 2, RuntimeError, "2D tensor expected, got ", self.dim(), "D tensor for input");
  return scaled_sum_(self, checked_outer(self, vec1, vec2), beta, alpha);
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  return scaled_sum(self, checked_bmm(self, batch1, batch2, "baddbmm"), beta, alpha);
}
Tensor& baddbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum_(self, checked_bmm(self, batch1, batch2, "baddbmm"), beta, alpha);
}

Tensor addbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum(self, checked_bmm(self, batch1, batch2, "addbmm").sum({0}), beta, alpha);
}
Tensor& addbmm_(Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  return scaled_sum_(self, checked_bmm(self, batch1, batch2, "addbmm").sum({0}), beta, alpha);
}

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  const Tensor product = mul(tensor1, tensor2);
  return add(self, product, as_operand_of(value, promote_types(self.dtype(), product.dtype())));
}
Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return self.add_(mul(tensor1, tensor2), as_operand_of(value, self.dtype()));
}

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_addcdiv(tensor1, tensor2);
  const Tensor quotient = div(tensor1, tensor2);
  return add(self, quotient, as_operand_of(value, promote_types(self.dtype(), quotient.dtype())));
}
Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_addcdiv(tensor1, tensor2);
  return self.add_(div(tensor1, tensor2), as_operand_of(value, self.dtype()));
}

// lerp as PyTorch's kernel computes it: from self for |weight| < 0.5, from end otherwise (so
// weight 1 gives end exactly).
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  check_lerp(self, end, nullptr);
  const double w = weight.to_double();
  const Tensor diff = sub(end, self);
  return std::abs(w) < 0.5 ? add(self, diff, weight) : sub(end, diff, Scalar(1 - w));
}
Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight) {
  check_lerp(self, end, nullptr);
  const double w = weight.to_double();
  const Tensor diff = sub(end, self);
  if (std::abs(w) < 0.5) return self.add_(diff, weight);
  return self.copy_(end).sub_(diff, Scalar(1 - w));
}

Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) {
  check_lerp(self, end, &weight);
  const Tensor diff = sub(end, self);
  return where(lt(abs(weight), 0.5), add(self, mul(weight, diff)), sub(end, mul(diff, sub(Scalar(1), weight))));
}
Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight) { return self.copy_(lerp(self, end, weight)); }

}  // namespace graft

// Reductions and normalizing ops: sum, mean, prod, max/min, argmax/argmin, var/std,
// logsumexp, softmax, log_softmax, sum_to, linalg_vector_norm, var_mean and std_mean.
#include <cmath>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {
using kernel::ReduceOp;

namespace detail {
Tensor unsqueeze_reduced(const Tensor& g, IntArrayRef in_sizes, uint64_t mask, bool keepdim) {
  if (keepdim) return g;
  Tensor r = g;
  for (int64_t d = 0; d < static_cast<int64_t>(in_sizes.size()); ++d)
    if (mask >> d & 1) r = r.unsqueeze(d);
  return r;
}
}  // namespace detail

namespace {

Shape reduced_shape(IntArrayRef s, uint64_t mask, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (mask >> d & 1) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(s[d]);
    }
  }
  return out;
}

Tensor reduce_forward(ReduceOp op, const Tensor& a, uint64_t mask, bool keepdim, DType out_dtype) {
  Tensor out = detail::new_empty(reduced_shape(a.sizes(), mask, keepdim), out_dtype, a.device());
  kernel::reduce(op, out, a, mask);
  return out;
}

void check_nonempty_reduction(const Tensor& a, uint64_t mask, const char* op) {
  for (int64_t d = 0; d < a.dim(); ++d)
    if ((mask >> d & 1) && a.size(d) == 0)
      throw IndexError(detail::str(op, "(): Expected reduction dim ", d, " to have non-zero size."));
  if (a.dim() == 0 || mask == 0) return;
  GRAFT_CHECK(a.numel() > 0 || mask != 0, RuntimeError, op, "(): cannot reduce an empty tensor");
}

}  // namespace

namespace {
Tensor sum_out(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  detail::check_tensor(self, "sum");
  const uint64_t mask = detail::dim_mask(dims, self.dim(), "sum");
  // PyTorch converts the input to the requested dtype and sums that (sum of [1.5, 2.5] as int64 is 3)
  if (dtype && *dtype != self.dtype())
    return reduce_forward(ReduceOp::Sum, detail::cast_nograd(self, *dtype), mask, keepdim, *dtype);
  // the requested dtype is the result's (int32 stays int32); without one integers sum as int64
  const DType out_dtype = dtype ? *dtype : is_floating_point(self.dtype()) ? self.dtype() : kInt64;
  return reduce_forward(ReduceOp::Sum, self, mask, keepdim, out_dtype);
}
Tensor mean_out(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  detail::check_tensor(self, "mean");
  if (dtype) {
    GRAFT_CHECK(is_floating_point(*dtype), RuntimeError,
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
                "dtype. Got: ",
                scalar_type_name(*dtype));
    // PyTorch converts the input to the requested dtype and averages that
    if (*dtype != self.dtype()) return mean_out(detail::cast_nograd(self, *dtype), dims, keepdim, std::nullopt);
  }
  GRAFT_CHECK(is_floating_point(self.dtype()), RuntimeError,
              "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
              "Got: ",
              scalar_type_name(self.dtype()));
  const uint64_t mask = detail::dim_mask(dims, self.dim(), "mean");
  Tensor out = reduce_forward(ReduceOp::Sum, self, mask, keepdim, self.dtype());
  kernel::binary_scalar(kernel::BinaryOp::Div, out, out,
                        static_cast<double>(detail::reduced_count(self.sizes(), mask)));
  return out;
}
Tensor prod_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  detail::check_tensor(self, "prod");
  if (dtype && *dtype != self.dtype())  // as sum: the input converted to dtype first
    return prod_out(detail::cast_nograd(self, *dtype), dim, keepdim, dtype);
  const uint64_t mask = dim ? detail::dim_mask({*dim}, self.dim(), "prod") : detail::dim_mask({}, self.dim(), "prod");
  // the requested dtype is the result's (int32 stays int32); without one integers multiply as int64
  const DType out_dtype = dtype ? *dtype : is_floating_point(self.dtype()) ? self.dtype() : kInt64;
  return reduce_forward(ReduceOp::Prod, self, mask, dim ? keepdim : false, out_dtype);
}
}  // namespace

Tensor detail::sum_forward(const Tensor& self, std::optional<DType> dtype) { return sum_out(self, {}, false, dtype); }
Tensor detail::sum_forward(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return sum_out(self, dim, keepdim, dtype);
}
Tensor detail::mean_forward(const Tensor& self, std::optional<DType> dtype) { return mean_out(self, {}, false, dtype); }
Tensor detail::mean_forward(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  return mean_out(self, dim, keepdim, dtype);
}
Tensor detail::prod_forward(const Tensor& self, std::optional<DType> dtype) {
  return prod_out(self, std::nullopt, false, dtype);
}
Tensor detail::prod_forward(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return prod_out(self, dim, keepdim, dtype);
}

static Tensor max_min_all(const Tensor& a, bool is_max) {
  const char* name = is_max ? "max" : "min";
  detail::check_tensor(a, name);
  GRAFT_CHECK(a.numel() > 0, RuntimeError, name,
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
              "'dim' argument.");
  return reduce_forward(is_max ? ReduceOp::Max : ReduceOp::Min, a, detail::dim_mask({}, a.dim(), name), false,
                        a.dtype());
}
Tensor detail::max_forward(const Tensor& a) { return max_min_all(a, true); }
Tensor detail::min_forward(const Tensor& a) { return max_min_all(a, false); }

static Tensor amax_amin(const Tensor& a, IntArrayRef dims, bool keepdim, bool is_max) {
  const char* name = is_max ? "amax" : "amin";
  detail::check_tensor(a, name);
  const uint64_t mask = detail::dim_mask(dims, a.dim(), name);
  GRAFT_CHECK(!dims.empty() || a.numel() > 0, RuntimeError, name,
              "(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the "
              "'dim' argument.");
  check_nonempty_reduction(a, mask, name);
  return reduce_forward(is_max ? ReduceOp::Max : ReduceOp::Min, a, mask, keepdim, a.dtype());
}
Tensor detail::amax_forward(const Tensor& a, IntArrayRef dims, bool keepdim) {
  return amax_amin(a, dims, keepdim, true);
}
Tensor detail::amin_forward(const Tensor& a, IntArrayRef dims, bool keepdim) {
  return amax_amin(a, dims, keepdim, false);
}

static std::pair<Tensor, Tensor> max_min_dim(const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  detail::check_tensor(a, name);
  int64_t d = detail::wrap_dim(dim, a.dim(), name);
  Tensor src = a.dim() == 0 ? a.reshape({1}) : a;
  uint64_t mask = uint64_t{1} << d;
  check_nonempty_reduction(src, mask, name);
  Shape os = reduced_shape(src.sizes(), mask, keepdim && a.dim() > 0);
  Tensor values = detail::new_empty(os, a.dtype(), a.device());
  Tensor indices = detail::new_empty(os, kInt64, a.device());
  kernel::arg_reduce(is_max, values, indices, src, d);
  return {values, indices};
}
std::pair<Tensor, Tensor> detail::max_forward(const Tensor& self, int64_t dim, bool keepdim) {
  return max_min_dim(self, dim, keepdim, true);
}
std::pair<Tensor, Tensor> detail::min_forward(const Tensor& self, int64_t dim, bool keepdim) {
  return max_min_dim(self, dim, keepdim, false);
}

static Tensor arg_max_min(const Tensor& a, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "argmax" : "argmin";
  detail::check_tensor(a, name);
  const std::optional<int64_t> d =
      dim && a.dim() > 0 ? std::optional<int64_t>(detail::wrap_dim(*dim, a.dim(), name)) : std::nullopt;
  if (a.dtype() == kBool) {
    // PyTorch has no bool kernel; it runs none for a reduction over a dim of size 1
    const bool trivial = d && a.size(*d) == 1;
    if (!trivial && (dim || a.numel() > 0)) detail::kernel_not_implemented(is_max ? "argmax_cpu" : "argmin_cpu", kBool);
  }
  if (!dim) {
    GRAFT_CHECK(a.numel() > 0, IndexError, name, "(): Expected reduction dim to be specified for input.numel() == 0.");
    Tensor flat = a.reshape({-1});
    Tensor idx = detail::new_empty({}, kInt64, a.device());
    kernel::arg_reduce(is_max, Tensor(), idx, flat, 0);
    if (keepdim) return idx.reshape(Shape(a.dim(), 1));
    return idx;
  }
  if (d) check_nonempty_reduction(a, uint64_t{1} << *d, name);  // named argmax/argmin, not max/min
  NoGradGuard ng;
  auto [v, i] = max_min_dim(a, *dim, keepdim, is_max);
  return i;
}
Tensor argmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return arg_max_min(a, dim, keepdim, true); }
Tensor argmin(const Tensor& a, std::optional<int64_t> dim, bool keepdim) { return arg_max_min(a, dim, keepdim, false); }

double detail::var_correction(const std::optional<Scalar>& correction) {
  return correction ? correction->to_double() : 1.0;
}
static Tensor var_std(const Tensor& a, IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim,
                      bool is_std) {
  const char* name = is_std ? "std" : "var";
  detail::check_tensor(a, name);
  GRAFT_CHECK(is_floating_point(a.dtype()), RuntimeError, "std and var only support floating point and complex dtypes");
  uint64_t mask = detail::dim_mask(dims, a.dim(), name);
  Tensor out = detail::new_empty(reduced_shape(a.sizes(), mask, keepdim), a.dtype(), a.device());
  kernel::var(out, a, mask, detail::var_correction(correction), is_std);
  return out;
}
Tensor detail::var_forward(const Tensor& a, IntArrayRef dims, std::optional<Scalar> correction, bool keepdim) {
  return var_std(a, dims, correction, keepdim, false);
}
Tensor detail::std_forward(const Tensor& a, IntArrayRef dims, std::optional<Scalar> correction, bool keepdim) {
  return var_std(a, dims, correction, keepdim, true);
}
// PyTorch's unbiased spellings: true is correction 1, false 0
Tensor var(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim) {
  return var(self, dim, std::optional<Scalar>(unbiased ? 1 : 0), keepdim);
}
Tensor detail::var_default(const Tensor& self, bool unbiased) {
  return var(self, {}, std::optional<Scalar>(unbiased ? 1 : 0));
}
Tensor std(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim) {
  return graft::std(self, dim, std::optional<Scalar>(unbiased ? 1 : 0), keepdim);
}
Tensor detail::std_default(const Tensor& self, bool unbiased) {
  return graft::std(self, {}, std::optional<Scalar>(unbiased ? 1 : 0));
}

// var_mean and std_mean: the spread and the mean over the same dims (every dim when empty).
namespace {
Tensor mean_over(const Tensor& self, IntArrayRef dim, bool keepdim) {
  if (!dim.empty()) return mean(self, dim, keepdim);
  std::vector<int64_t> all(static_cast<size_t>(self.dim()));
  for (int64_t d = 0; d < self.dim(); ++d) all[static_cast<size_t>(d)] = d;
  return all.empty() ? mean(self) : mean(self, all, keepdim);
}
}  // namespace
std::pair<Tensor, Tensor> var_mean(const Tensor& self, IntArrayRef dim, std::optional<Scalar> correction,
                                   bool keepdim) {
  Tensor spread = var(self, dim, correction, keepdim);
  return {spread, mean_over(self, dim, keepdim)};
}
std::pair<Tensor, Tensor> var_mean(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim) {
  return var_mean(self, dim, std::optional<Scalar>(unbiased ? 1 : 0), keepdim);
}
std::pair<Tensor, Tensor> detail::var_mean_default(const Tensor& self, bool unbiased) {
  return var_mean(self, {}, std::optional<Scalar>(unbiased ? 1 : 0));
}
std::pair<Tensor, Tensor> std_mean(const Tensor& self, IntArrayRef dim, std::optional<Scalar> correction,
                                   bool keepdim) {
  Tensor spread = graft::std(self, dim, correction, keepdim);
  return {spread, mean_over(self, dim, keepdim)};
}
std::pair<Tensor, Tensor> std_mean(const Tensor& self, IntArrayRef dim, bool unbiased, bool keepdim) {
  return std_mean(self, dim, std::optional<Scalar>(unbiased ? 1 : 0), keepdim);
}
std::pair<Tensor, Tensor> detail::std_mean_default(const Tensor& self, bool unbiased) {
  return std_mean(self, {}, std::optional<Scalar>(unbiased ? 1 : 0));
}

Tensor detail::logsumexp_forward(const Tensor& a, IntArrayRef dims, bool keepdim) {
  detail::check_tensor(a, "logsumexp");
  DType dt = detail::float_result(a.dtype());
  Tensor src = detail::cast_nograd(a, dt);
  uint64_t mask = detail::dim_mask(dims, a.dim(), "logsumexp");
  return reduce_forward(ReduceOp::LogSumExp, src, mask, keepdim, dt);
}

namespace {
// softmax or log_softmax of a along dim, with no autograd (the generated graft::softmax and
// graft::log_softmax record SoftmaxBackward0 / LogSoftmaxBackward0 around it)
Tensor softmax_out(const Tensor& a, int64_t dim, bool log) {
  const char* name = log ? "log_softmax" : "softmax";
  detail::check_tensor(a, name);
  GRAFT_CHECK(is_floating_point(a.dtype()), RuntimeError, name, ": expected a floating point tensor but got ",
              a.dtype());
  int64_t d = detail::wrap_dim(dim, a.dim(), name);
  NoGradGuard ng;
  if (a.numel() == 0) return empty_like(a);
  // 16 bits: computed in float32 and rounded once, as PyTorch's softmax kernels do
  if (is_reduced_floating_point(a.dtype())) return softmax_out(a.to(kFloat32), d, log).to(a.dtype());
  // a 0-d input is its own maximum: 1 (0 for log), or NaN for an infinite or NaN value
  Tensor m = a.dim() == 0 ? a : max(a, d, true).first;
  Tensor shifted = a - m;
  Tensor s = a.dim() == 0 ? exp(shifted) : sum(exp(shifted), {d}, true);
  return log ? shifted - graft::log(s) : exp(shifted) / s;
}
}  // namespace
Tensor detail::softmax_forward(const Tensor& a, int64_t dim) { return softmax_out(a, dim, false); }
Tensor detail::log_softmax_forward(const Tensor& a, int64_t dim) { return softmax_out(a, dim, true); }

// ---- the composite overloads (ops.yaml): PyTorch's, over another op ----
// softmax(self, dim, dtype): self converted first, a ToCopyBackward0 under autograd as PyTorch's
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax(dtype ? self.to(*dtype) : self, dim);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return log_softmax(dtype ? self.to(*dtype) : self, dim);
}
Tensor max(const Tensor& self, const Tensor& other) { return maximum(self, other); }
Tensor min(const Tensor& self, const Tensor& other) { return minimum(self, other); }

Tensor dist(const Tensor& a, const Tensor& b, double p) {
  detail::check_tensor(a, "dist", "self");
  detail::check_tensor(b, "dist", "other");
  const DType dt = promote_types(a.dtype(), b.dtype());
  GRAFT_CHECK(is_floating_point(dt), RuntimeError,
              "norm(): input dtype should be either floating point or complex. Got ", scalar_type_name(dt),
              " instead.");
  Tensor d = abs(sub(a, b));
  if (p == 0) {  // the count of nonzeros, kept in the graph with a zero gradient (as PyTorch's)
    Tensor count = sum(ne(d, 0).to(d.dtype()));
    return where(ones_like(count, TensorOptions(kBool)), count, sum(d));
  }
  if (std::isinf(p)) return d.numel() == 0 ? sum(d) : p > 0 ? amax(d) : amin(d);
  Tensor s = p == 2.0 ? sum(mul(d, d)) : p == 1.0 ? sum(d) : sum(pow(d, p));
  if (p == 1.0) return s;
  // the root of a sum kept away from 0, so that its gradient is 0 there rather than 0 * inf
  Tensor zero = eq(s, 0);
  Tensor root = p == 2.0 ? sqrt(where(zero, 1.0, s)) : pow(where(zero, 1.0, s), 1.0 / p);
  return where(zero, 0.0, root);
}

Tensor sum_to(const Tensor& a, IntArrayRef sizes) {
  detail::check_tensor(a, "sum_to");
  if (a.sizes().equals(sizes)) return a;
  const int64_t lead = a.dim() - static_cast<int64_t>(sizes.size());
  GRAFT_CHECK(lead >= 0, RuntimeError, "sum_to: size ", sizes, " is not expandable to size ", a.sizes());
  SmallVector<int64_t, 5> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = lead; d < a.dim(); ++d) {
    int64_t t = sizes[d - lead];
    if (t == 1 && a.size(d) != 1)
      dims.push_back(d);
    else
      GRAFT_CHECK(t == a.size(d), RuntimeError, "sum_to: size ", sizes, " is not expandable to size ", a.sizes());
  }
  if (dims.empty()) return a.view(sizes);
  return sum(a, dims, true).view(sizes);
}

Tensor detail::linalg_vector_norm_forward(const Tensor& self, const Scalar& ord, IntArrayRef dim, bool keepdim,
                                          std::optional<DType> dtype) {
  detail::check_tensor(self, "linalg.vector_norm");
  if (!is_floating_point(self.dtype()))
    throw NotImplementedError(
        detail::str("linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
                    scalar_type_name(self.dtype())));
  GRAFT_CHECK(!dtype || is_floating_point(*dtype), RuntimeError,
              "linalg.vector_norm: dtype should be floating point or complex. Got ", scalar_type_name(*dtype));
  const uint64_t mask = detail::dim_mask(dim, self.dim(), "linalg.vector_norm");
  const double p = ord.to_double();
  if (p < 0 || std::isinf(p)) {  // no identity: an empty reduction is an error, as PyTorch's
    GRAFT_CHECK(self.numel() > 0 || !dim.empty(), RuntimeError, "linalg.vector_norm cannot compute the ", p,
                " norm on an empty tensor because the operation does not have an identity");
    for (int64_t d = 0; d < self.dim(); ++d)
      GRAFT_CHECK(!(mask >> d & 1) || self.size(d) > 0 || dim.empty(), RuntimeError,
                  "linalg.vector_norm cannot compute the ", p, " norm on the dimension ", d,
                  "because this dimension is empty and the operation does not have an identity");
  }
  Tensor tmp;
  const Tensor& src = detail::as_dtype(self, dtype ? *dtype : self.dtype(), tmp);
  Tensor out = detail::new_empty(reduced_shape(src.sizes(), mask, keepdim), src.dtype(), src.device());
  kernel::vector_norm(out, src, mask, p);
  return out;
}

// ---- composites (ops.yaml): libtorch's all / any / norm ----
Tensor all(const Tensor& self) {
  NoGradGuard no_grad;
  return sum((self.dtype() == kBool ? logical_not(self) : self.eq(0)).to(kInt64)).eq(0);
}
Tensor all(const Tensor& self, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return sum((self.dtype() == kBool ? logical_not(self) : self.eq(0)).to(kInt64), {dim}, keepdim).eq(0);
}
Tensor any(const Tensor& self) {
  NoGradGuard no_grad;
  return sum((self.dtype() == kBool ? self : self.ne(0)).to(kInt64)).gt(0);
}
Tensor any(const Tensor& self, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return sum((self.dtype() == kBool ? self : self.ne(0)).to(kInt64), {dim}, keepdim).gt(0);
}
Tensor norm(const Tensor& self, const Scalar& p) { return linalg_vector_norm(self, p); }
Tensor norm(const Tensor& self, const Scalar& p, IntArrayRef dim, bool keepdim) {
  return linalg_vector_norm(self, p, dim, keepdim);
}

}  // namespace graft

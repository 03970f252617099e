// The geometry of vectors, written in other graft ops (declared in src/ops/ops.yaml, the
// composite family): the cross product of 3-vectors and cdist, the pairwise p-norm distances
// between two sets of rows.
#include <cmath>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  detail::check_tensor(self, "linalg.cross", "input");
  detail::check_tensor(other, "linalg.cross", "other");
  GRAFT_CHECK(self.dim() == other.dim(), RuntimeError, "linalg.cross: inputs must have the same number of dimensions.");
  GRAFT_CHECK(self.dtype() == other.dtype(), RuntimeError, "expected scalar type ", scalar_type_name(self.dtype()),
              " but found ", scalar_type_name(other.dtype()));
  const int64_t d = detail::wrap_dim(dim, self.dim(), "linalg.cross");
  GRAFT_CHECK(self.size(d) == 3 && other.size(d) == 3, RuntimeError, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.size(d), " and ", other.size(d));
  auto at = [d](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return cat({sub(mul(at(self, 1), at(other, 2)), mul(at(self, 2), at(other, 1))),
              sub(mul(at(self, 2), at(other, 0)), mul(at(self, 0), at(other, 2))),
              sub(mul(at(self, 0), at(other, 1)), mul(at(self, 1), at(other, 0)))},
             d);
}

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  detail::check_tensor(self, "cross", "input");
  detail::check_tensor(other, "cross", "other");
  if (dim) return linalg_cross(self, other, *dim);
  // PyTorch's deprecated default: the first dim of size 3 (of the broadcast shape)
  const Shape shape = detail::broadcast_shapes(self.sizes(), other.sizes());
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 3) return linalg_cross(self, other, static_cast<int64_t>(d));
  throw RuntimeError("no dimension of size 3 in input");
}

namespace {

// sqrt(d2) with a zero gradient where d2 is 0 (where sqrt's would be infinite).
Tensor safe_sqrt(const Tensor& d2) {
  const Tensor positive = gt(d2, 0);
  return where(positive, sqrt(where(positive, d2, 1.0)), 0.0);
}

// The Euclidean distances through |x|^2 + |y|^2 - 2 x.y (one matmul; PyTorch's mm path).
Tensor euclidean_by_mm(const Tensor& x1, const Tensor& x2) {
  const Tensor n1 = mul(x1, x1).sum({-1}, true), n2 = mul(x2, x2).sum({-1}, true);
  const Tensor d2 = sub(add(n1, n2.transpose(-1, -2)), matmul(x1, x2.transpose(-1, -2)), 2);
  return safe_sqrt(clamp(d2, Scalar(0)));
}

}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  detail::check_tensor(x1, "cdist", "x1");
  detail::check_tensor(x2, "cdist", "x2");
  GRAFT_CHECK(x1.dim() >= 2, RuntimeError, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  GRAFT_CHECK(x2.dim() >= 2, RuntimeError, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  GRAFT_CHECK(is_floating_point(x1.dtype()), RuntimeError,
              "cdist only supports floating-point dtypes, X1 got: ", scalar_type_name(x1.dtype()));
  GRAFT_CHECK(is_floating_point(x2.dtype()), RuntimeError,
              "cdist only supports floating-point dtypes, X2 got: ", scalar_type_name(x2.dtype()));
  GRAFT_CHECK(x1.size(-1) == x2.size(-1), RuntimeError,
              "X1 and X2 must have the same number of columns. X1: ", x1.size(-1), " X2: ", x2.size(-1));
  GRAFT_CHECK(p >= 0, RuntimeError, "cdist only supports non-negative p values");
  GRAFT_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2), RuntimeError,
              "possible modes: 0, 1, 2, but was: ", compute_mode.value_or(0));
  // PyTorch's modes: 0 the mm path past 25 rows, 1 always, 2 never
  const int64_t mode = compute_mode.value_or(0);
  const bool by_mm = p == 2 && (mode == 1 || (mode == 0 && (x1.size(-2) > 25 || x2.size(-2) > 25)));
  if (by_mm) return euclidean_by_mm(x1, x2);
  return linalg_vector_norm(sub(x1.unsqueeze(-2), x2.unsqueeze(-3)), p, {-1});
}

}  // namespace graft

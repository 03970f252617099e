// Grids and gathers written in other graft ops (declared in src/ops/ops.yaml, the composite
// family): meshgrid (views of expanded tensors), cartesian_prod, take_along_dim (a broadcast
// gather) and nan_to_num.
#include <limits>

#include "graft/ops/generated_forwards.h"
#include "op_util.h"

namespace graft {

std::vector<Tensor> meshgrid(const TensorList& tensors, std::string_view indexing) {
  GRAFT_CHECK(!tensors.empty(), RuntimeError, "torch.meshgrid expects a non-empty TensorList");
  GRAFT_CHECK(indexing == "ij" || indexing == "xy", RuntimeError,
              "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  Shape shape;
  for (const Tensor& t : tensors) {
    detail::check_tensor(t, "meshgrid", "tensors");
    GRAFT_CHECK(t.dim() <= 1, RuntimeError,
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", t.sizes());
    GRAFT_CHECK(t.dtype() == tensors[0].dtype(), RuntimeError,
                "torch.meshgrid: Expected all tensors in the tensor list to have the same dtype");
    GRAFT_CHECK(t.device() == tensors[0].device(), RuntimeError,
                "torch.meshgrid: Expected all tensors in the tensor list to have the same device");
    shape.push_back(t.numel());
  }
  // "xy": the first two grids' dims swapped (the i-th grid still varies along the i-th tensor)
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> grids;
  for (size_t i = 0; i < tensors.size(); ++i) {
    size_t along = i;
    if (swap && i < 2) along = 1 - i;
    Shape view(shape.size(), 1);
    view[along] = -1;
    grids.push_back(tensors[i].reshape(view).expand(shape));
  }
  return grids;
}

Tensor cartesian_prod(const TensorList& tensors) {
  for (const Tensor& t : tensors) {
    detail::check_tensor(t, "cartesian_prod", "tensors");
    GRAFT_CHECK(t.dim() == 1, RuntimeError, "Expect a 1D vector, but got shape ", t.sizes());
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> columns;
  for (const Tensor& grid : meshgrid(tensors, "ij")) columns.push_back(grid.flatten());
  return stack(columns, 1);
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  detail::check_tensor(self, "take_along_dim", "self");
  detail::check_tensor(indices, "take_along_dim", "indices");
  GRAFT_CHECK(indices.dtype() == kInt64, RuntimeError,
              "torch.take_along_dim(): dtype of indices should be Long but got ", scalar_type_name(indices.dtype()));
  if (!dim) return self.reshape({-1}).gather(0, indices.reshape({-1}));
  GRAFT_CHECK(self.dim() > 0, IndexError, "Dimension specified as ", *dim, " but tensor has no dimensions");
  const int64_t d = detail::wrap_dim(*dim, self.dim(), "take_along_dim");
  GRAFT_CHECK(self.dim() == indices.dim(), RuntimeError,
              "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
              self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  Shape self_sizes = self.sizes().shape();
  self_sizes[static_cast<size_t>(d)] = indices.size(d);
  Shape shape = detail::broadcast_shapes(self_sizes, indices.sizes());
  const Tensor index = indices.expand(shape);
  shape[static_cast<size_t>(d)] = self.size(d);
  return self.expand(shape).gather(d, index);
}

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  detail::check_tensor(self, "nan_to_num");
  if (!is_floating_point(self.dtype())) return self.clone();
  const double big = detail::largest_finite(self.dtype());
  Tensor out = where(isnan(self), nan.value_or(0.0), self);
  out = where(eq(self, std::numeric_limits<double>::infinity()), posinf.value_or(big), out);
  return where(eq(self, -std::numeric_limits<double>::infinity()), neginf.value_or(-big), out);
}

Tensor& nan_to_num_(Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
  detail::check_tensor(self, "nan_to_num_");
  if (!is_floating_point(self.dtype())) return self;
  const double big = detail::largest_finite(self.dtype());
  const Tensor is_nan = isnan(self), is_pos = eq(self, std::numeric_limits<double>::infinity()),
               is_neg = eq(self, -std::numeric_limits<double>::infinity());
  self.masked_fill_(is_nan, nan.value_or(0.0));
  self.masked_fill_(is_pos, posinf.value_or(big));
  return self.masked_fill_(is_neg, neginf.value_or(-big));
}

}  // namespace graft

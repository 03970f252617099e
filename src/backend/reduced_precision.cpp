// float16 and bfloat16 computed in float32: the float32 copies the kernel dispatch hands the
// kernels, and the rounding back (include/graft/backend/kernels.h, docs/notes/dtypes.md).
#include "graft/backend/kernels.h"
#include "graft/core/allocator.h"

namespace graft::kernel {

Tensor widen(const Tensor& t) {
  if (!t.defined() || !is_reduced_floating_point(t.dtype())) return t;
  // a broadcast dimension (stride 0) stays one in the copy: only the distinct values are widened
  Shape compact, strides;
  for (int64_t d = 0; d < t.dim(); ++d) compact.push_back(t.stride(d) == 0 ? 1 : t.size(d));
  const Shape dense = contiguous_strides(compact);
  for (int64_t d = 0; d < t.dim(); ++d) strides.push_back(t.stride(d) == 0 ? 0 : dense[static_cast<size_t>(d)]);
  const size_t nbytes = static_cast<size_t>(compute_numel(compact)) * element_size(kFloat32);
  auto storage = make_intrusive<StorageImpl>(allocator_for(t.device())->allocate(nbytes), nbytes);
  Tensor wide(make_intrusive<TensorImpl>(std::move(storage), kFloat32, compact, dense, 0));
  kernels_for(t.device()).copy(wide, raw_view(t, compact, t.strides(), t.storage_offset()));
  return raw_view(wide, t.sizes(), strides, 0);
}

void narrow_into(const Tensor& t, const Tensor& wide) {
  if (!t.defined() || t.impl() == wide.impl()) return;
  kernels_for(t.device()).copy(t, wide);
}

}  // namespace graft::kernel

// MemoryFormat's names and stride rules (PyTorch's c10 MemoryFormat and TensorIterator's
// layout rules).
#include "graft/core/memory_format.h"

#include <algorithm>

#include "graft/core/enum_names.h"
#include "graft/core/error.h"
#include "graft/core/tensor_impl.h"

namespace graft {

const char* memory_format_name(MemoryFormat f) {
  static const char* const names[] = {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"};
  return detail::enum_name(names, f);
}
std::ostream& operator<<(std::ostream& os, MemoryFormat f) { return os << memory_format_name(f); }

namespace {
// The dims of a channels-last layout of rank 4 or 5, innermost first: C, then the spatial dims
// from the last, then N.
Shape channels_last_order(size_t rank) { return rank == 4 ? Shape{1, 3, 2, 0} : Shape{1, 4, 3, 2, 0}; }
// Row-major's order, innermost first.
Shape row_major_order(size_t rank) {
  Shape order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = static_cast<int64_t>(rank - 1 - i);
  return order;
}
size_t channels_last_rank(MemoryFormat f) { return f == MemoryFormat::ChannelsLast ? 4 : 5; }
}  // namespace

Shape strides_for_memory_format(IntArrayRef sizes, MemoryFormat f) {
  GRAFT_CHECK(f != MemoryFormat::Preserve, RuntimeError, "unsupported memory format Preserve");
  if (f == MemoryFormat::Contiguous) return contiguous_strides(sizes);
  const size_t rank = channels_last_rank(f);
  GRAFT_CHECK(sizes.size() == rank, RuntimeError, "required rank ", rank, " tensor to use ", memory_format_name(f),
              " format");
  Shape strides(rank, 1);
  int64_t stride = 1;  // PyTorch's channels-last strides take a size of 0 as it is
  for (int64_t d : channels_last_order(rank)) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f) {
  const bool row_major = f == MemoryFormat::Contiguous || f == MemoryFormat::Preserve;
  if (!row_major && sizes.size() != channels_last_rank(f)) return false;
  if (row_major && std::find(sizes.begin(), sizes.end(), 0) != sizes.end()) return true;  // empty: contiguous
  const Shape order = row_major ? row_major_order(sizes.size()) : channels_last_order(sizes.size());
  int64_t expected = 1;
  for (int64_t d : order) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  Shape dims;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] >= 2) dims.push_back(static_cast<int64_t>(d));
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (int64_t d : dims) {
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

Shape infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const size_t n = sizes.size();
  Shape order = row_major_order(n);  // innermost first
  // >0 when dim a belongs outside dim b; 0 when a stride is 0 (no order to keep)
  const auto outside = [&](int64_t a, int64_t b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] > strides[b] ? 1 : -1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (size_t i = 1; i < n; ++i) {  // a stable insertion sort that leaves stride-0 dims in place
    size_t moving = i;
    for (size_t j = i; j-- > 0;) {
      const int c = outside(order[j], order[moving]);
      if (c > 0) {
        std::swap(order[j], order[moving]);
        moving = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  Shape out(n, 1);
  int64_t stride = 1;
  for (int64_t d : order) {
    out[d] = stride;
    if (sizes[d] > 1) stride *= sizes[d];
  }
  return out;
}

}  // namespace graft

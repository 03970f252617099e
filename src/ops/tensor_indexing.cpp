// Index items applied to a tensor (Tensor::index and index_put_ with libtorch's
// torch::indexing, and Python's x[...] through the bindings): basic items as views, advanced
// ones through graft::index / index_put_.
#include "graft/ops/tensor_indexing.h"

#include <algorithm>
#include <limits>

#include "graft/ops/ops.h"

namespace graft::detail {

namespace {

using indexing::TensorIndex;
using Kind = TensorIndex::Kind;

// How many dims of self the items consume (a k-dim mask k of them); checks the one Ellipsis.
int64_t consumed_dims(const Tensor& self, std::span<const TensorIndex> items) {
  int64_t consumed = 0;
  bool seen_ellipsis = false;
  for (const TensorIndex& it : items) {
    if (it.kind() == Kind::Integer || it.kind() == Kind::Slice)
      consumed += 1;
    else if (it.kind() == Kind::Tensor)
      consumed += it.tensor().dtype() == kBool ? it.tensor().dim() : 1;
    else if (it.kind() == Kind::Ellipsis) {
      GRAFT_CHECK(!seen_ellipsis, IndexError, "an index can only have a single ellipsis ('...')");
      seen_ellipsis = true;
    }
  }
  GRAFT_CHECK(consumed <= self.dim(), IndexError, "too many indices for tensor of dimension ", self.dim());
  return consumed;
}

void check_index_tensor(const Tensor& t) {
  GRAFT_CHECK(t.defined(), IndexError, "an undefined tensor cannot be an index");
  GRAFT_CHECK(t.dtype() == kBool || is_integral(t.dtype(), false), IndexError,
              "tensors used as indices must be long, int or bool tensors");
}

// A Python slice bound (negative from the end) clamped to [0, size].
int64_t clamp_bound(int64_t bound, int64_t size) {
  if (bound < 0) return std::max<int64_t>(bound + size, 0);
  return std::min(bound, size);
}

// The walk over the items: r is self with the items so far applied, d its current dim.
struct Walk {
  Tensor r;
  int64_t d = 0, extra = 0;  // extra: dims of r covered by masks beyond their one entry of `adv`
  bool any_advanced = false;
  std::vector<std::optional<Tensor>>& adv;

  // one entry of `adv` per index; a k-dim mask covers k dims (index() expands it itself)
  void add_advanced(const Tensor& index) {
    any_advanced = true;
    const int64_t slot = d - extra;
    while (static_cast<int64_t>(adv.size()) < slot) adv.push_back(std::nullopt);
    adv.resize(slot);
    adv.push_back(index);
    const int64_t covered = index.dtype() == kBool ? index.dim() : 1;
    d += covered;
    extra += covered - 1;
  }
  void select(int64_t value, int64_t position) {
    const int64_t size = r.size(d);
    GRAFT_CHECK(value >= -size && value < size, IndexError, "index ", value, " is out of bounds for dimension ",
                position, " with size ", size);
    r = r.select(d, value);
  }
  void narrow(const indexing::Slice& s) {
    const int64_t step = s.step.value_or(1);
    GRAFT_CHECK(step > 0, ValueError, "step must be greater than zero");
    const int64_t size = r.size(d);
    const int64_t start = clamp_bound(s.start.value_or(0), size);
    const int64_t stop = clamp_bound(s.stop.value_or(std::numeric_limits<int64_t>::max()), size);
    r = r.slice(d, start, std::max(start, stop), step);  // a full slice too, as PyTorch records it
    ++d;
  }
  void boolean(bool value, bool has_advanced) {
    r = r.unsqueeze(d);
    if (has_advanced) {  // beside advanced indices a bool is one of them (PyTorch: a 0-d mask)
      add_advanced(full({1}, Scalar(value), TensorOptions(kBool).device(r.device())));
      return;
    }
    if (!value) r = r.slice(d, 0, 0);
    ++d;
  }
};

}  // namespace

Tensor apply_basic_indices(const Tensor& self, std::span<const TensorIndex> items,
                           std::vector<std::optional<Tensor>>& adv) {
  const int64_t consumed = consumed_dims(self, items);
  const bool has_advanced =
      std::any_of(items.begin(), items.end(), [](const TensorIndex& it) { return it.kind() == Kind::Tensor; });
  Walk w{self, 0, 0, false, adv};
  int64_t position = -1;  // the item's place in the index (the "dimension" PyTorch's errors name)
  for (const TensorIndex& it : items) {
    ++position;
    switch (it.kind()) {
      case Kind::None:
        w.r = w.r.unsqueeze(w.d);
        adv.emplace(adv.begin() + std::min<int64_t>(w.d - w.extra, adv.size()));  // no index for the new dim
        ++w.d;
        break;
      case Kind::Boolean:
        w.boolean(it.boolean(), has_advanced);
        break;
      case Kind::Ellipsis:
        w.d += self.dim() - consumed;
        break;
      case Kind::Integer:
        w.select(it.integer(), position);
        break;
      case Kind::Slice:
        w.narrow(it.slice());
        break;
      case Kind::Tensor:
        check_index_tensor(it.tensor());
        w.add_advanced(it.tensor());
        break;
    }
  }
  if (!w.any_advanced) adv.clear();
  return w.r;
}

Tensor index_with(const Tensor& self, std::span<const TensorIndex> items) {
  std::vector<std::optional<Tensor>> adv;
  Tensor r = apply_basic_indices(self, items, adv);
  if (adv.empty()) return r.is_same(self) ? alias(self) : r;  // x[...] is still a view (AliasBackward0)
  return index(r, adv);
}

void index_put_with(const Tensor& self, std::span<const TensorIndex> items, const Tensor& value) {
  std::vector<std::optional<Tensor>> adv;
  Tensor target = apply_basic_indices(self, items, adv);
  if (adv.empty()) {
    target.copy_(value);
    return;
  }
  index_put_(target, adv, value.to(target.dtype()), false);
}

}  // namespace graft::detail

namespace graft {

Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return detail::index_with(*this, {indices.begin(), indices.size()});
}
Tensor Tensor::index(std::span<const indexing::TensorIndex> indices) const {
  return detail::index_with(*this, indices);
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value) {
  detail::index_put_with(*this, {indices.begin(), indices.size()}, value);
  return *this;
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Scalar& value) {
  detail::index_put_with(*this, {indices.begin(), indices.size()},
                         scalar_tensor(value, TensorOptions(dtype()).device(device())));
  return *this;
}
Tensor& Tensor::index_put_(std::span<const indexing::TensorIndex> indices, const Tensor& value) {
  detail::index_put_with(*this, indices, value);
  return *this;
}

}  // namespace graft

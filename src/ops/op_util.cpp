// Shared op helpers: broadcasting, promotion, allocation.
#include "op_util.h"
#include <cfloat>

#include <algorithm>
#include <sstream>

#include "graft/core/grad_mode.h"

namespace graft::detail {

std::vector<Shape> sizes_of(const TensorList& tensors) {
  std::vector<Shape> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.sizes().shape());
  return out;
}

std::vector<int64_t> split_piece_sizes(int64_t n, int64_t split_size) {
  GRAFT_CHECK(split_size > 0 || n == 0, RuntimeError,
              "split_size can only be 0 if dimension size is 0, but got dimension size of ", n);
  std::vector<int64_t> sizes;
  if (n == 0) sizes.push_back(0);
  for (int64_t s = 0; s < n; s += split_size) sizes.push_back(std::min(split_size, n - s));
  return sizes;
}

int64_t reduced_count(IntArrayRef sizes, uint64_t mask) {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (mask >> d & 1) n *= sizes[d];
  return n;
}

uint64_t dim_mask(IntArrayRef dims, int64_t ndim, const char* op) {
  GRAFT_CHECK(ndim <= 64, NotImplementedError, op, ": at most 64 dimensions are supported");
  if (dims.empty()) return ndim == 0 ? 0 : (ndim == 64 ? ~uint64_t{0} : ((uint64_t{1} << ndim) - 1));
  uint64_t m = 0;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    GRAFT_CHECK(!(m >> w & 1), RuntimeError, "dim ", w, " appears multiple times in the list of dims");
    m |= uint64_t{1} << w;
  }
  return m;
}

std::string shape_str(IntArrayRef s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

Shape broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      throw RuntimeError(str("The size of tensor a (", x, ") must match the size of tensor b (", y,
                             ") at non-singleton dimension ", n - 1 - i));
    out[n - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

namespace {
// PyTorch's three-tier promotion: dimensioned tensors > 0-d tensors > wrapped numbers,
// with a lower tier only winning when it is of a higher category (bool < int < float).
int category(DType t) { return t == kBool ? 0 : is_floating_point(t) ? 2 : 1; }
}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  auto tier = [](const Tensor& t) { return t.impl()->is_wrapped_number ? 0 : (t.dim() == 0 ? 1 : 2); };
  int ta = tier(a), tb = tier(b);
  if (ta == tb) return promote_types(a.dtype(), b.dtype());
  const Tensor& hi = ta > tb ? a : b;
  const Tensor& lo = ta > tb ? b : a;
  if (category(lo.dtype()) > category(hi.dtype())) {
    // a wrapped float promotes an integer tensor to the default dtype
    if (lo.impl()->is_wrapped_number) return is_floating_point(lo.dtype()) ? default_dtype() : kInt64;
    return lo.dtype();
  }
  return hi.dtype();
}

DType result_type(const Tensor& a, const Scalar& s) {
  int cs = s.is_floating_point() ? 2 : s.is_integral() ? 1 : 0;
  if (cs > category(a.dtype())) return s.is_floating_point() ? default_dtype() : kInt64;
  return a.dtype();
}

int64_t storage_extent(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  int64_t extent = offset + 1;
  bool overflow = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    int64_t span = 0;
    overflow |= __builtin_mul_overflow(sizes[i] - 1, strides[i], &span);
    overflow |= __builtin_add_overflow(extent, span, &extent);
  }
  GRAFT_CHECK(!overflow, RuntimeError, "Storage size calculation overflowed with sizes=", sizes,
              " and strides=", strides);
  return extent;
}

size_t storage_nbytes(int64_t extent, DType dtype, IntArrayRef sizes, IntArrayRef strides) {
  int64_t nbytes = 0;
  GRAFT_CHECK(!__builtin_mul_overflow(extent, static_cast<int64_t>(element_size(dtype)), &nbytes) &&
                  nbytes <= (int64_t{1} << 60),
              RuntimeError, "Storage size calculation overflowed with sizes=", sizes, " and strides=", strides);
  return static_cast<size_t>(nbytes);
}

Tensor new_empty(IntArrayRef sizes, DType dtype, Device device) {
  check_device_available(device, "empty");
  for (auto s : sizes)
    GRAFT_CHECK(s >= 0, RuntimeError, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  Shape strides = contiguous_strides(sizes);
  const size_t nbytes = storage_nbytes(storage_extent(sizes, strides), dtype, sizes, strides);
  auto storage = make_intrusive<StorageImpl>(allocator_for(device)->allocate(nbytes), nbytes);
  auto impl = make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0);
  impl->is_inference = InferenceMode::is_enabled();
  return Tensor(std::move(impl));
}

Tensor wrapped_scalar(const Scalar& s, DType dtype, Device device) {
  Tensor t = new_empty({}, dtype, device);
  kernel::fill(t, s);
  t.impl()->is_wrapped_number = true;
  return t;
}

Tensor cast_nograd(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = new_empty(t.sizes(), dtype, t.device());
  kernel::copy(out, t);
  out.impl()->is_wrapped_number = t.impl()->is_wrapped_number;
  return out;
}

void check_add_sub(DType self, DType other, DType result, const Scalar& alpha, bool is_sub) {
  if (is_sub) {
    GRAFT_CHECK(self != kBool || other != kBool, RuntimeError,
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                "`logical_xor()` operator instead.");
    GRAFT_CHECK(self != kBool && other != kBool, RuntimeError,
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
                "mask, use the `~` or `logical_not()` operator instead.");
  }
  GRAFT_CHECK(!alpha.is_bool() || result == kBool, RuntimeError, "Boolean alpha only supported for Boolean results.");
  GRAFT_CHECK(is_floating_point(result) || !alpha.is_floating_point(), RuntimeError,
              "For integral input tensors, argument alpha must not be a floating point number.");
}

double largest_finite(DType dtype) {
  switch (dtype) {
    case kFloat16:
      return 65504.0;
    case kBFloat16:
      return 3.3895313892515355e38;
    case kFloat32:
      return FLT_MAX;
    default:
      return DBL_MAX;
  }
}

void kernel_not_implemented(const char* kernel, DType dtype) {
  throw RuntimeError(str("\"", kernel, "\" not implemented for '", scalar_type_name(dtype), "'"));
}

void check_tensor(const Tensor& t, const char* op, const char* arg) {
  GRAFT_CHECK(t.defined(), ValueError, op, ": argument '", arg, "' is an undefined tensor");
}

namespace {
bool non_overlapping_and_dense(const TensorImpl* t) {
  return t->is_contiguous() || is_non_overlapping_and_dense(t->sizes(), t->strides());
}
// PyTorch's get_overlap_status(a, b) == Partial: the two share memory without being the same
// elements in the same order (tensors with gaps or overlap of their own are not judged, as
// PyTorch calls them too hard).
bool overlaps_partially(const TensorImpl* a, const TensorImpl* b) {
  if (a == b || a->numel() == 0 || b->numel() == 0) return false;
  if (a->storage().get() != b->storage().get()) return false;
  if (!non_overlapping_and_dense(a) || !non_overlapping_and_dense(b)) return false;
  const auto begin = [](const TensorImpl* t) {
    return t->storage_offset() * static_cast<int64_t>(element_size(t->dtype()));
  };
  const auto end = [&](const TensorImpl* t) {
    return begin(t) + t->numel() * static_cast<int64_t>(element_size(t->dtype()));
  };
  if (begin(a) == begin(b) && end(a) == end(b)) return !a->strides().equals(b->strides());
  return begin(a) < end(b) && begin(b) < end(a);
}
void check_not_inference(const TensorImpl* impl) {
  if (impl->is_inference && !InferenceMode::is_enabled())
    throw RuntimeError(
        "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a "
        "normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.");
}
void check_no_internal_overlap(const TensorImpl* impl) {
  // PyTorch's internal-overlap check for a written-to tensor (stride-0 dims, e.g. expand()).
  GRAFT_CHECK(!impl->has_internal_overlap(), RuntimeError,
              "unsupported operation: more than one element of the written-to tensor refers to a single memory "
              "location. Please clone() the tensor before performing the operation.");
}
void check_no_partial_overlap(const TensorImpl* out, std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* in : inputs)
    GRAFT_CHECK(!(in->defined() && overlaps_partially(out, in->impl())), RuntimeError,
                "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                "single memory location. Please clone() the tensor before performing the operation.");
}
// PyTorch's canCast: no floating value into an integer tensor, no number into a bool one.
bool can_cast(DType from, DType to) {
  return !(is_floating_point(from) && !is_floating_point(to)) && !(from != kBool && to == kBool);
}
}  // namespace

void check_written(const Tensor& into, std::initializer_list<const Tensor*> inputs) {
  check_no_internal_overlap(into.impl());
  check_no_partial_overlap(into.impl(), inputs);
  check_not_inference(into.impl());
}

void ElementwiseOutput::check_and_take_into(IntArrayRef shape, DType dtype, Device device,
                                            std::initializer_list<const Tensor*> inputs) {
  Tensor* into = into_;
  check_no_internal_overlap(into->impl());
  check_no_partial_overlap(into->impl(), inputs);
  // PyTorch's texts, which do not name the op
  GRAFT_CHECK(shape.equals(into->sizes()), RuntimeError, "output with shape ", into->sizes(),
              " doesn't match the broadcast shape ", shape);
  GRAFT_CHECK(can_cast(dtype, into->dtype()), RuntimeError, "result type ", scalar_type_name(dtype),
              " can't be cast to the desired output type ", scalar_type_name(into->dtype()));
  check_not_inference(into->impl());
  out_ = dtype == into->dtype() ? *into : new_empty(shape, dtype, device);
}

Tensor ElementwiseOutput::into_result() {
  if (!out_.is_same(*into_)) kernel::copy(*into_, out_);  // computed in another dtype, cast back
  return *into_;
}

void check_writable(const Tensor& self, bool check_overlap) {
  if (check_overlap) check_no_internal_overlap(self.impl());
  check_not_inference(self.impl());
}

}  // namespace graft::detail

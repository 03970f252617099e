// Validates the byte layout a header describes: each tensor's dtype, shape and byte range, and
// that the ranges tile the data buffer exactly (the reference readers' rules), before anything
// is allocated.
#include <algorithm>
#include <limits>
#include <numeric>

#include "header.h"

namespace graft::safetensors::detail {
namespace {

std::string offsets_str(const RawEntry& e) {
  return "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

// Checks one entry on its own (header order) and returns it typed.
TensorEntry check_entry(RawEntry& e, uint64_t data_size, const std::string& source) {
  const std::string t = "tensor '" + e.name + "': ";
  auto dtype = parse_st_dtype(e.dtype);
  if (!dtype) fail_invalid(source, t + "unknown dtype '" + e.dtype + "'");
  const char* dname = st_dtype_name(*dtype);

  // Bits = product(shape) * bits per element, overflow-checked.
  uint64_t bits = st_dtype_bits(*dtype);
  bool overflow = false;
  for (uint64_t d : e.shape) overflow = overflow || __builtin_mul_overflow(bits, d, &bits);
  if (overflow)
    fail_invalid(source, t + "the size of shape " + shape_str(e.shape) + " with dtype " + dname + " overflows 64 bits");
  if (bits % 8 != 0)
    fail_invalid(source,
                 t + "shape " + shape_str(e.shape) + " with dtype " + dname + " is not a whole number of bytes");
  const uint64_t nbytes = bits / 8;

  if (e.begin > e.end) fail_invalid(source, t + offsets_str(e) + " have begin > end");
  if (e.end - e.begin != nbytes)
    fail_invalid(source, t + offsets_str(e) + " hold " + std::to_string(e.end - e.begin) + " bytes, but shape " +
                             shape_str(e.shape) + " with dtype " + dname + " needs " + std::to_string(nbytes));
  if (e.end > data_size)
    fail_invalid(source,
                 t + offsets_str(e) + " run past the end of the data buffer (" + std::to_string(data_size) + " bytes)");

  // graft sizes and contiguous strides are int64: every dimension, and the product of the
  // non-zero ones (the outermost stride), must fit. Only shapes with a 0 can get here too large.
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  uint64_t stride_extent = 1;
  bool too_large = false;
  for (uint64_t d : e.shape) {
    too_large =
        too_large || d > kMax || __builtin_mul_overflow(stride_extent, std::max<uint64_t>(d, 1), &stride_extent);
    too_large = too_large || stride_extent > kMax;
  }
  if (too_large) fail_invalid(source, t + "shape " + shape_str(e.shape) + " is too large for a graft tensor");

  TensorEntry out{std::move(e.name), *dtype, {}, e.begin, e.end};
  out.shape.reserve(e.shape.size());
  for (uint64_t d : e.shape) out.shape.push_back(static_cast<int64_t>(d));
  return out;
}

}  // namespace

std::vector<TensorEntry> validate_layout(RawHeader& header, uint64_t data_size, const std::string& source) {
  std::vector<TensorEntry> entries;
  entries.reserve(header.entries.size());
  for (auto& e : header.entries) entries.push_back(check_entry(e, data_size, source));

  // In offset order, each range must start where the previous one ended, from 0 to the end.
  std::vector<size_t> order(entries.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(entries[a].begin, entries[a].end) < std::pair(entries[b].begin, entries[b].end);
  });
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (size_t i : order) {
    const TensorEntry& e = entries[i];
    const std::string t =
        "tensor '" + e.name + "': data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] ";
    if (e.begin > covered)
      fail_invalid(source, t + "leave bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                               ") of the data buffer unused (tensors must cover it from 0 with no gap)");
    if (e.begin < covered)
      fail_invalid(source, t + "overlap tensor '" + previous->name + "' at [" + std::to_string(previous->begin) + ", " +
                               std::to_string(previous->end) + "]");
    covered = e.end;
    previous = &e;
  }
  if (covered != data_size)
    fail_invalid(source, "the tensors cover " + std::to_string(covered) + " bytes but the data buffer has " +
                             std::to_string(data_size) + " (trailing bytes belong to no tensor)");
  return entries;
}

}  // namespace graft::safetensors::detail

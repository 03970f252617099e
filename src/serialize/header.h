#pragma once
// Reading a safetensors header: the JSON text -> raw entries (header_json.cpp), then the raw
// entries + the data buffer's size -> a validated layout (layout.cpp). Both throw ValueError
// whose message starts with invalid_file_prefix(source).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graft/serialize/safetensors.h"
#include "st_dtype.h"

namespace graft::safetensors::detail {

/// One tensor entry as the header spells it (types checked, values not yet).
struct RawEntry {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// The header's tensor entries in header order, and its "__metadata__".
struct RawHeader {
  std::vector<RawEntry> entries;
  Metadata metadata;
};

/// A tensor whose dtype, shape and byte range have been validated against the data buffer.
struct TensorEntry {
  std::string name;
  StDtype dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

/// The largest header the reference readers accept.
inline constexpr uint64_t kMaxHeaderSize = 100'000'000;

/// "invalid safetensors file '<source>': "
std::string invalid_file_prefix(const std::string& source);
/// Throws ValueError(invalid_file_prefix(source) + what).
[[noreturn]] void fail_invalid(const std::string& source, const std::string& what);

/// Parses the header JSON (already known to be valid UTF-8): a JSON object whose entries are
/// "__metadata__" (an object of strings, or null) and tensors {"dtype": string, "shape": [uint...],
/// "data_offsets": [uint, uint]} (other fields are ignored). Duplicate names, fields and metadata
/// keys and empty tensor names are rejected.
RawHeader parse_header_json(std::string_view header, const std::string& source);

/// Checks every entry against the format's rules and a data buffer of `data_size` bytes: known
/// dtype, no overflow in shape * dtype size, begin <= end, end - begin == that size, and byte
/// ranges that tile [0, data_size) in offset order with no gap or overlap. Also checks that each
/// shape fits a graft tensor. Returns the entries in header order.
std::vector<TensorEntry> validate_layout(RawHeader& header, uint64_t data_size, const std::string& source);

/// "[2, 3]"
std::string shape_str(const std::vector<uint64_t>& shape);

}  // namespace graft::safetensors::detail

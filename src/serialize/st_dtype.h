#pragma once
// The safetensors dtype names, their sizes in bits, and how each maps onto graft's dtypes.
#include <cstdint>
#include <optional>
#include <string_view>

#include "graft/core/dtype.h"

namespace graft::safetensors::detail {

/// Every dtype name the safetensors format defines.
enum class StDtype : uint8_t {
  BOOL,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  F8_E8M0,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  C64,
  F64,
  I64,
  U64,
  F4,
  F6_E2M3,
  F6_E3M2,
};

/// The dtype spelled `name` ("F32", ...), or nullopt when the format has no such dtype.
std::optional<StDtype> parse_st_dtype(std::string_view name);
/// The format's spelling of `d`.
const char* st_dtype_name(StDtype d);
/// Bits per element (4 and 6 for the sub-byte float formats, else 8 * bytes).
uint64_t st_dtype_bits(StDtype d);
/// The graft dtype a tensor of `d` loads as, or nullopt when graft cannot hold it.
std::optional<DType> graft_dtype_for(StDtype d);
/// The dtype graft writes for `d` (BOOL, I32, I64, F32, F64).
StDtype st_dtype_for(DType d);
/// The names of the dtypes graft loads, for error messages.
const char* loadable_st_dtype_names();

}  // namespace graft::safetensors::detail

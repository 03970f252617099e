// safetensors dtype names and sizes, the mapping to graft dtypes, and exact half -> float.
#include "st_dtype.h"

#include <array>
#include <bit>
#include <cmath>

namespace graft::safetensors::detail {
namespace {

struct DtypeInfo {
  StDtype dtype;
  const char* name;
  uint64_t bits;
};

constexpr std::array<DtypeInfo, 20> kDtypes = {{
    {StDtype::BOOL, "BOOL", 8},       {StDtype::U8, "U8", 8},           {StDtype::I8, "I8", 8},
    {StDtype::F8_E5M2, "F8_E5M2", 8}, {StDtype::F8_E4M3, "F8_E4M3", 8}, {StDtype::F8_E8M0, "F8_E8M0", 8},
    {StDtype::I16, "I16", 16},        {StDtype::U16, "U16", 16},        {StDtype::F16, "F16", 16},
    {StDtype::BF16, "BF16", 16},      {StDtype::I32, "I32", 32},        {StDtype::U32, "U32", 32},
    {StDtype::F32, "F32", 32},        {StDtype::C64, "C64", 64},        {StDtype::F64, "F64", 64},
    {StDtype::I64, "I64", 64},        {StDtype::U64, "U64", 64},        {StDtype::F4, "F4", 4},
    {StDtype::F6_E2M3, "F6_E2M3", 6}, {StDtype::F6_E3M2, "F6_E3M2", 6},
}};

const DtypeInfo& info(StDtype d) {
  for (const auto& i : kDtypes)
    if (i.dtype == d) return i;
  return kDtypes[0];  // unreachable: every enumerator is in the table
}

}  // namespace

std::optional<StDtype> parse_st_dtype(std::string_view name) {
  for (const auto& i : kDtypes)
    if (name == i.name) return i.dtype;
  return std::nullopt;
}

const char* st_dtype_name(StDtype d) { return info(d).name; }
uint64_t st_dtype_bits(StDtype d) { return info(d).bits; }

std::optional<DType> graft_dtype_for(StDtype d) {
  switch (d) {
    case StDtype::BOOL:
      return DType::Bool;
    case StDtype::U8:
    case StDtype::I8:
    case StDtype::I16:
    case StDtype::U16:
    case StDtype::I32:
      return DType::Int32;
    case StDtype::U32:
    case StDtype::I64:
      return DType::Int64;
    case StDtype::F16:
      return DType::Float16;
    case StDtype::BF16:
      return DType::BFloat16;
    case StDtype::F32:
      return DType::Float32;
    case StDtype::F64:
      return DType::Float64;
    default:
      return std::nullopt;
  }
}

StDtype st_dtype_for(DType d) {
  switch (d) {
    case DType::Bool:
      return StDtype::BOOL;
    case DType::Int32:
      return StDtype::I32;
    case DType::Int64:
      return StDtype::I64;
    case DType::Float32:
      return StDtype::F32;
    case DType::Float64:
      return StDtype::F64;
    case DType::Float16:
      return StDtype::F16;
    case DType::BFloat16:
      return StDtype::BF16;
  }
  return StDtype::F32;  // unreachable: every DType is listed
}

const char* loadable_st_dtype_names() { return "BOOL, U8, I8, I16, U16, I32, U32, I64, F16, BF16, F32, F64"; }

}  // namespace graft::safetensors::detail

// DType names and Device parsing.
#include <atomic>
#include <iterator>
#include <sstream>

#include "graft/core/device.h"
#include "graft/core/dtype.h"
#include "graft/core/error.h"
#include "graft/core/int_array.h"

namespace graft {

namespace {
// A dtype's names, one row per DType in its order: Bool, Int32, Int64, Float32, Float64, Float16,
// BFloat16.
struct DTypeNames {
  const char* name;    // graft.float32
  const char* legacy;  // FloatTensor
  const char* scalar;  // Float
  const char* cpp;     // float
};
constexpr DTypeNames kDTypeNames[] = {{"bool", "BoolTensor", "Bool", "bool"},
                                      {"int32", "IntTensor", "Int", "int"},
                                      {"int64", "LongTensor", "Long", "long"},
                                      {"float32", "FloatTensor", "Float", "float"},
                                      {"float64", "DoubleTensor", "Double", "double"},
                                      {"float16", "HalfTensor", "Half", "c10::Half"},
                                      {"bfloat16", "BFloat16Tensor", "BFloat16", "c10::BFloat16"}};
static_assert(std::size(kDTypeNames) == kNumDTypes);
constexpr DTypeNames kUnknownDType = {"?", "?", "?", "?"};
const DTypeNames& names_of(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < std::size(kDTypeNames) ? kDTypeNames[i] : kUnknownDType;
}
}  // namespace

namespace {
std::atomic<DType> g_default_dtype{DType::Float32};
}  // namespace
DType default_dtype() { return g_default_dtype.load(std::memory_order_relaxed); }
void set_default_dtype(DType dtype) {
  GRAFT_CHECK(is_floating_point(dtype), TypeError, "only floating-point types are supported as the default type");
  g_default_dtype.store(dtype, std::memory_order_relaxed);
}

const char* dtype_name(DType t) { return names_of(t).name; }
const char* legacy_type_name(DType t) { return names_of(t).legacy; }
const char* scalar_type_name(DType t) { return names_of(t).scalar; }
const char* dtype_cpp_name(DType t) { return names_of(t).cpp; }
std::ostream& operator<<(std::ostream& os, DType t) { return os << "graft." << dtype_name(t); }

std::ostream& operator<<(std::ostream& os, IntArrayRef a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << "]";
}

Device::Device(const std::string& spec) {
  if (spec == "cpu") {
    type_ = DeviceType::CPU;
    return;
  }
  if (spec == "meta") {
    type_ = DeviceType::Meta;
    return;
  }
  if (spec.rfind("cuda", 0) == 0) {
    type_ = DeviceType::CUDA;
    if (spec.size() == 4) return;
    if (spec[4] == ':' && spec.size() > 5 && spec.size() <= 8) {
      int idx = 0;
      for (size_t i = 5; i < spec.size(); ++i) {
        GRAFT_CHECK(spec[i] >= '0' && spec[i] <= '9', ValueError, "Invalid device string: '", spec, "'");
        idx = idx * 10 + (spec[i] - '0');
      }
      GRAFT_CHECK(idx < 128, ValueError, "Invalid device string: '", spec, "'");
      index_ = static_cast<int8_t>(idx);
      return;
    }
  }
  throw ValueError(detail::str("Invalid device string: '", spec, "'"));
}
std::string Device::str() const {
  if (type_ == DeviceType::CPU) return "cpu";
  if (type_ == DeviceType::Meta) return "meta";
  return index_ < 0 ? "cuda" : "cuda:" + std::to_string(index_);
}
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

namespace {
thread_local DeviceType tl_default_device = DeviceType::CPU;  // per thread, as PyTorch's device context
}
Device default_device() { return Device(tl_default_device); }
void set_default_device(Device d) {
  check_device_available(d, "set_default_device");
  tl_default_device = d.type();
}

bool cuda_is_available() { return false; }
int64_t cuda::device_count() { return 0; }
void check_device_available(const Device& d, const char* op) {
  GRAFT_CHECK(!d.is_cuda(), RuntimeError, op, ": device ", d.str(),
              " is not available: graft was built without CUDA support");
}

namespace detail {
void internal_assert_fail(const char* file, int line, const char* cond, const std::string& msg) {
  throw RuntimeError(str("graft internal assert failed at ", file, ":", line, ": ", cond, ". ", msg,
                         " (this is a bug in graft; please report it)"));
}
}  // namespace detail

}  // namespace graft

#pragma once
/// Device: where a tensor's memory lives. `cuda` is named already; without a CUDA build,
/// using it throws a RuntimeError that says so.
#include <cstdint>
#include <ostream>
#include <string>

namespace graft {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1 };

/// A device type plus an index (-1: the current device of that type).
struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  /// Parses "cpu", "cuda", "cuda:1". Throws ValueError on anything else.
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const {
    return type == o.type && (type == DeviceType::CPU || index == o.index || index < 0 || o.index < 0);
  }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
};

inline constexpr Device kCPU{DeviceType::CPU};
inline constexpr Device kCUDA{DeviceType::CUDA};
std::ostream& operator<<(std::ostream& os, const Device& d);
/// True when graft was built with CUDA and a device is present.
bool cuda_is_available();
/// Throws RuntimeError naming `op` unless `d` can be used in this build.
void check_device_available(const Device& d, const char* op);

}  // namespace graft

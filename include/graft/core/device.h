#pragma once
/// Device: where a tensor's memory lives. `cuda` is named already; without a CUDA build,
/// using it throws a RuntimeError that says so. `meta` (PyTorch's name) holds sizes, strides
/// and dtype but no data: ops compute only their outputs' metadata (docs/notes/devices.md).
#include <cstdint>
#include <ostream>
#include <string>

namespace graft {

enum class DeviceType : uint8_t { CPU = 0, CUDA = 1, Meta = 2 };
/// Number of DeviceType values (the size of per-device tables).
inline constexpr int kNumDeviceTypes = 3;

/// A device type plus an index (-1: the current device of that type).
struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  /// Parses "cpu", "cuda", "cuda:1", "meta". Throws ValueError on anything else.
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  bool operator==(const Device& o) const {
    return type == o.type && (type != DeviceType::CUDA || index == o.index || index < 0 || o.index < 0);
  }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;
};

inline constexpr Device kCPU{DeviceType::CPU};
inline constexpr Device kCUDA{DeviceType::CUDA};
inline constexpr Device kMeta{DeviceType::Meta};
std::ostream& operator<<(std::ostream& os, const Device& d);
/// The device factories use when none is given (cpu unless set): PyTorch's
/// torch.set_default_device / torch.get_default_device. Per thread, as PyTorch 2.x's device
/// context: each thread starts with cpu, and one thread's setting never reaches another.
Device default_device();
void set_default_device(Device d);
/// True when graft was built with CUDA and a device is present.
bool cuda_is_available();
/// Throws RuntimeError naming `op` unless `d` can be used in this build.
void check_device_available(const Device& d, const char* op);

}  // namespace graft

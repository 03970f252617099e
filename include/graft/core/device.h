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

/// A device type plus an index (-1: the current device of that type). Shaped as libtorch's
/// Device: type(), index(), has_index().
struct Device {
  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type_(t), index_(i) {}
  /// Parses "cpu", "cuda", "cuda:1", "meta". Throws ValueError on anything else.
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}
  constexpr DeviceType type() const { return type_; }
  /// The index; -1 for the current device of the type.
  constexpr int8_t index() const { return index_; }
  constexpr bool has_index() const { return index_ >= 0; }
  void set_index(int8_t i) { index_ = i; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  bool operator==(const Device& o) const {
    return type_ == o.type_ && (type_ != DeviceType::CUDA || index_ == o.index_ || index_ < 0 || o.index_ < 0);
  }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;

 private:
  DeviceType type_ = DeviceType::CPU;
  int8_t index_ = -1;
};

/// The device types under libtorch's names (torch::kCPU, torch::kCUDA): each converts to the
/// Device of that type (tensor.to(kCPU), device == kCUDA).
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;
inline constexpr DeviceType kMeta = DeviceType::Meta;
std::ostream& operator<<(std::ostream& os, const Device& d);
/// The device factories use when none is given (cpu unless set): PyTorch's
/// torch.set_default_device / torch.get_default_device. Per thread, as PyTorch 2.x's device
/// context: each thread starts with cpu, and one thread's setting never reaches another.
Device default_device();
void set_default_device(Device d);
/// True when graft was built with CUDA and a device is present.
bool cuda_is_available();
namespace cuda {
/// libtorch's torch::cuda::is_available(): cuda_is_available().
inline bool is_available() { return cuda_is_available(); }
/// libtorch's torch::cuda::device_count(): the CUDA devices this build can use.
int64_t device_count();
}  // namespace cuda
/// Throws RuntimeError naming `op` unless `d` can be used in this build.
void check_device_available(const Device& d, const char* op);

}  // namespace graft

// The kernel seam (include/graft/backend/kernels.h): one table per DeviceType. A backend is a
// folder under src/backend/ with its constant table (kKernelTable); adding one is that folder
// plus its line in kKernelTables below. docs/notes/devices.md.
#include <cstdlib>

#include "cpu/cpu_table.h"
#include "graft/backend/kernels.h"
#include "graft/core/error.h"
#include "meta/meta_table.h"

namespace graft::kernel {
const KernelTable* const kKernelTables[kNumDeviceTypes] = {
    &cpu::kKernelTable,   // DeviceType::CPU
    nullptr,              // DeviceType::CUDA: none in this build
    &meta::kKernelTable,  // DeviceType::Meta
};

void no_kernels_for(Device device) {
  check_device_available(device, "kernel dispatch");  // throws, naming the device
  GRAFT_INTERNAL_ASSERT(false, "no kernels for ", device.str());
  std::abort();
}

void not_implemented_for(const char* aten_op, Device device) {
  const char* backend = kernels_for(device).name;
  throw NotImplementedError(detail::str("Could not run '", aten_op, "' with arguments from the '", backend,
                                        "' backend. This could be because the operator doesn't exist for this "
                                        "backend, or was omitted during the selective/custom build process (if "
                                        "using custom build). '",
                                        aten_op, "' is only available for these backends: [CPU]."));
}

void check_same_device(const Tensor& a, const Tensor& b) {
  if (a.device() == b.device()) return;
  const bool swap = a.device().is_cpu();  // PyTorch names the accelerator first
  const Tensor& x = swap ? b : a;
  const Tensor& y = swap ? a : b;
  throw RuntimeError(detail::str("Expected all tensors to be on the same device, but found at least two devices, ",
                                 x.device().str(), " and ", y.device().str(), "!"));
}

void check_copy_devices(const Tensor& dst, const Tensor& src) {
  if (dst.device().is_meta() || dst.device() == src.device()) return;
  GRAFT_CHECK(!src.device().is_meta(), NotImplementedError, "Cannot copy out of meta tensor; no data!");
  check_same_device(dst, src);  // no backend of this build copies between its other devices
}

Tensor select_raw(const Tensor& t, int64_t dim, int64_t i) {
  Shape sz, st;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != dim) {
      sz.push_back(t.size(d));
      st.push_back(t.stride(d));
    }
  return raw_view(t, sz, st, t.storage_offset() + i * t.stride(dim));
}

}  // namespace graft::kernel

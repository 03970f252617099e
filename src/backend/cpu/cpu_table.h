#pragma once
// The CPU backend's kernel table (src/backend/dispatch.cpp lists it).
#include "graft/backend/kernels.h"

namespace graft::cpu {
const kernel::KernelTable& kernel_table();
}  // namespace graft::cpu

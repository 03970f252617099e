#pragma once
// The meta backend's kernel table (src/backend/dispatch.cpp lists it).
#include "graft/backend/kernels.h"

namespace graft::meta {
const kernel::KernelTable& kernel_table();
}  // namespace graft::meta

#pragma once
// The CPU backend's kernel table (src/backend/dispatch.cpp lists it).
#include "graft/backend/kernels.h"

namespace graft::cpu {
/// Constant-initialized, so the dispatch table can point at it before any code runs.
extern const kernel::KernelTable kKernelTable;
}  // namespace graft::cpu

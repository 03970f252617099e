#pragma once
// The meta backend's kernel table (src/backend/dispatch.cpp lists it).
#include "graft/backend/kernels.h"

namespace graft::meta {
/// Constant-initialized, so the dispatch table can point at it before any code runs.
extern const kernel::KernelTable kKernelTable;
}  // namespace graft::meta

// The CPU backend registers its kernels: the seam's table filled with the functions of
// kernels.h and generated_kernels.h.
#include "cpu_table.h"

#include "backend/cpu/generated_kernels.h"
#include "kernels.h"

namespace graft::cpu {

constinit const kernel::KernelTable kKernelTable{
    .name = "CPU",
    GRAFT_FOR_EACH_KERNEL(GRAFT_KERNEL_ENTRY).generated = generated_kernels,
    .generated_binary = generated_binary_kernels,
};

}  // namespace graft::cpu

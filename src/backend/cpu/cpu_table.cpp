// The CPU backend registers its kernels: the seam's table filled with the functions of
// kernels.h and generated_kernels.h.
#include "cpu_table.h"

#include "backend/cpu/generated_kernels.h"
#include "kernels.h"

namespace graft::cpu {

constinit const kernel::KernelTable kKernelTable{
    .name = "CPU",
    .unary = &unary,
    .binary = &binary,
    .binary_scalar = &binary_scalar,
    .rounding_div = &rounding_div,
    .where = &where,
    .copy = &copy,
    .fill = &fill,
    .reduce = &reduce,
    .arg_reduce = &arg_reduce,
    .var = &var,
    .gemm = &gemm,
    .index_select = &index_select,
    .index_add = &index_add,
    .gather = &gather,
    .scatter_add = &scatter_add,
    .im2col = &im2col,
    .col2im = &col2im,
    .max_pool2d = &max_pool2d,
    .generated = generated_kernels,
};

}  // namespace graft::cpu

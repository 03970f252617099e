#pragma once
/// Neural-network ops with ATen's names and positional arguments (torch.conv2d,
/// torch.max_pool2d, torch.nn.functional.cross_entropy, ...). Like every op in
/// include/graft/ops/ops.h they are listed in src/ops/op_table.def, differentiate twice, and
/// are checked by the op registry. Window arguments (kernel_size, stride, padding, dilation,
/// output_padding) take one value for both spatial dims or one per dim, as PyTorch's do.
/// The module front end (graft::nn) builds on these.
#include <optional>
#include <string>

#include "graft/ops/ops.h"

namespace graft {

// Reduction (reduction='none' | 'mean' | 'sum') is in graft/ops/reduction.h. The nn ops declared
// in src/ops/ops.yaml (graft/ops/generated_ops.h): conv1d, conv2d, conv_transpose2d, im2col,
// col2im, max_pool2d, avg_pool2d, adaptive_avg_pool2d, pad, dropout, embedding,
// scaled_dot_product_attention, layer_norm, batch_norm, group_norm and the losses.

// ---- convolution ----
// conv2d, conv1d and conv_transpose2d, with number paddings and (conv1d, conv2d) with PyTorch's
// padding strings "valid" and "same", are declared in src/ops/ops.yaml (generated_ops.h).
// im2col and col2im (F.unfold, F.fold) are declared in src/ops/ops.yaml (generated_ops.h).

// ---- pooling ----
// max_pool2d_with_indices, max_pool2d, avg_pool2d and adaptive_avg_pool2d are declared in
// src/ops/ops.yaml (generated_ops.h).

// embedding is declared in src/ops/ops.yaml (generated_ops.h).

}  // namespace graft

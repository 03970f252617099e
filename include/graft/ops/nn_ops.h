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

// Reduction (reduction='none' | 'mean' | 'sum') is in graft/ops/reduction.h. The composite nn ops
// (pad, dropout, scaled_dot_product_attention, layer_norm, batch_norm, group_norm and the losses
// but binary_cross_entropy) are declared in src/ops/ops.yaml (graft/ops/generated_ops.h).

// ---- convolution ----
/// input [N, C, H, W] (or [C, H, W]), weight [O, C/groups, kh, kw], bias [O] or undefined.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
/// input [N, C, L] (or [C, L]), weight [O, C/groups, k].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
/// PyTorch's string paddings of conv1d/conv2d: "valid" (none) and "same" (the output keeps the
/// input's size; stride 1 only; an odd total padding puts the extra element at the end, as
/// PyTorch does).
enum class ConvPaddingMode { Valid, Same };
/// "valid" or "same"; anything else raises RuntimeError "Invalid padding string: '<s>'".
ConvPaddingMode conv_padding_mode(const std::string& s);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPaddingMode padding, IntArrayRef dilation = {1}, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              ConvPaddingMode padding, IntArrayRef dilation = {1}, int64_t groups = 1);
/// The adjoint of conv2d in its input: input [N, Cin, H, W], weight [Cin, Cout/groups, kh, kw].
/// Output size (H-1)*stride - 2*padding + dilation*(k-1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
// im2col and col2im (F.unfold, F.fold) are declared in src/ops/ops.yaml (generated_ops.h).

// ---- pooling ----
/// Max pooling; stride defaults to kernel_size (pass {} for that). Returns (values, indices):
/// indices are flat positions h*W + w within each input plane, as PyTorch's.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                                                  IntArrayRef padding = {0}, IntArrayRef dilation = {1},
                                                  bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false);
/// Average pooling; count_include_pad counts padding zeros in the divisor;
/// divisor_override replaces the divisor.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
// adaptive_avg_pool2d is declared in src/ops/ops.yaml (generated_ops.h).

// embedding is declared in src/ops/ops.yaml (generated_ops.h).

// ---- losses ----
/// -(y log p + (1-y) log(1-p)), logs clamped at -100 as PyTorch's; input in [0, 1].
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction reduction = Reduction::Mean);

}  // namespace graft

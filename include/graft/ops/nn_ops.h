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

/// How a loss reduces its per-element values: PyTorch's reduction='none' | 'mean' | 'sum'.
enum class Reduction { None, Mean, Sum };
/// Parses "none", "mean" or "sum" (ValueError otherwise, PyTorch's text).
Reduction reduction_from_string(const std::string& s);

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
/// Sliding blocks of a batched image (torch.nn.functional.unfold): [N, C, H, W] ->
/// [N, C*kh*kw, L] with L the number of window positions.
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation = {1}, IntArrayRef padding = {0},
              IntArrayRef stride = {1});
/// Sums blocks back into an image (torch.nn.functional.fold), the adjoint of im2col:
/// [N, C*kh*kw, L] -> [N, C, output_size[0], output_size[1]].
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation = {1},
              IntArrayRef padding = {0}, IntArrayRef stride = {1});

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
/// Average over adaptive windows [floor(i*H/oh), ceil((i+1)*H/oh)) giving output_size.
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

// ---- padding, dropout, embedding, attention ----
/// Constant padding (torch.nn.functional.pad, mode='constant'): pad lists (left, right) pairs
/// starting from the last dim; negative values crop.
Tensor pad(const Tensor& input, IntArrayRef pad, double value = 0.0);
/// Zeroes each element with probability p and scales the rest by 1/(1-p) when `train`;
/// identity otherwise. Random draws come from the default generator (graft::manual_seed).
Tensor dropout(const Tensor& input, double p = 0.5, bool train = true);
/// Rows of `weight` [num_embeddings, dim] picked by integer `indices` (any shape); the row at
/// padding_idx receives no gradient; with scale_grad_by_freq each lookup's gradient is divided
/// by how often its index occurs in `indices`.
Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx = std::nullopt,
                 bool scale_grad_by_freq = false);
/// softmax(q k^T * scale + mask) v over the last two dims. attn_mask: bool (true = attend)
/// or additive float, broadcast to [..., L, S]; is_causal masks j > i; scale defaults to
/// 1/sqrt(E); dropout_p applies dropout to the attention weights.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = Tensor(), double dropout_p = 0.0, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

// ---- normalization ----
/// Normalizes over the trailing dims `normalized_shape` (biased variance), then
/// * weight + bias (either may be undefined).
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);
/// Per-channel (dim 1) normalization. training: batch statistics, and running_mean /
/// running_var (if defined) are updated in place with `momentum` (running_var with the
/// unbiased variance); eval: the running statistics are used.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
/// Normalizes each group of channels per sample, then per-channel weight and bias.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// ---- losses ----
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// Quadratic below beta (0.5 x^2 / beta), linear above (|x| - 0.5 beta).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0);
/// Negative log-likelihood: input log-probabilities [N, C] or [N, C, d1, ...] (or [C]),
/// target int64 class indices [N] / [N, d1, ...]. 'mean' divides by the summed weights of
/// the non-ignored targets.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
/// log_softmax over dim 1 then nll_loss, for int64 class-index targets; or, for a floating
/// target of the input's shape, class probabilities. label_smoothing mixes in the uniform
/// distribution, as PyTorch's.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     Reduction reduction = Reduction::Mean, int64_t ignore_index = -100, double label_smoothing = 0.0);
/// -(y log p + (1-y) log(1-p)), logs clamped at -100 as PyTorch's; input in [0, 1].
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction reduction = Reduction::Mean);
/// The numerically stable sigmoid + binary cross entropy; pos_weight weighs positives.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(), Reduction reduction = Reduction::Mean);

}  // namespace graft

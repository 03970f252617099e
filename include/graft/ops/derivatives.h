#pragma once
/// Helpers of the derivative formulas in src/ops/ops.yaml that are more than one expression
/// (PyTorch keeps the like of them in FunctionsManual.cpp), convolution's joint formula among
/// them. Written in graft ops, so they are recorded under create_graph and double backward works
/// through them; the autograd layer's nodes call them. Internal to graft.
#include <array>

#include "graft/ops/forwards.h"
#include "graft/ops/ops.h"

namespace graft::derivatives {

/// grad * alpha, or grad itself when alpha is 1 (add's and sub's gradient for other).
Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha);
/// pow(self, exponent)'s gradient for a number exponent: grad * exponent * self^(exponent - 1),
/// zeros for exponent 0 (no 0 * inf at self = 0).
Tensor pow_backward(const Tensor& grad, const Tensor& self, const Scalar& exponent);
/// pow(self, exponent)'s gradient for self with a tensor exponent: 0 where the exponent is 0.
Tensor pow_backward_self(const Tensor& grad, const Tensor& self, const Tensor& exponent);
/// pow(self, exponent)'s gradient for a tensor exponent: grad * result * log(self), 0 where
/// self is 0 and the exponent >= 0 (PyTorch's convention).
Tensor pow_backward_exponent(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result);
/// pow(self, exponent)'s gradient for the exponent with a number base: grad * result * log(self),
/// zeros for a base of 0.
Tensor pow_backward_exponent(const Tensor& grad, const Scalar& self, const Tensor& result);
/// sum's gradient over dims (all when empty): grad brought back to self's rank and expanded.
Tensor sum_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dims, bool keepdim);
/// mean's gradient over dims (all when empty): sum's divided by the number of elements averaged.
Tensor mean_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef dims, bool keepdim);
/// prod's gradient along dim: grad * result / self, or, where a slice holds a zero, the
/// product of the other elements of the slice (one at a time).
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim, bool keepdim);
/// prod's gradient over all elements.
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
/// repeat's gradient: grad viewed as [r0, s0, r1, s1, ...] (self's sizes padded in front to
/// the repeats' length) and summed over the r dims.
Tensor repeat_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef repeats);
/// permute's gradient: grad permuted back by the inverse of dims.
Tensor permute_backward(const Tensor& grad, IntArrayRef dims);
/// select's and slice's gradients: zeros of self's sizes holding grad in the window the view
/// took (defined in src/ops/views.cpp, next to the windows).
Tensor select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, int64_t index);
Tensor slice_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step);
/// diagonal's gradient: zeros of self's sizes holding grad on the diagonal the view took.
Tensor diagonal_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t offset, int64_t dim1, int64_t dim2);
/// clamp's gradient with number bounds: grad where min <= self <= max, else 0.
Tensor clamp_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& min,
                      const std::optional<Scalar>& max);
/// clamp's gradients with tensor bounds (an undefined one is no bound): self's where
/// min <= self <= max; min's where self < min < max; max's where self > max or max < min.
Tensor clamp_backward_self(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_backward_min(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_backward_max(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);

/// silu's gradient: grad * s * (1 + self * (1 - s)), s = sigmoid(self) computed once.
Tensor silu_backward(const Tensor& grad, const Tensor& self);
/// mish's gradient: grad * (t + self * sigmoid(self) * (1 - t * t)), t = tanh(softplus(self))
/// computed once.
Tensor mish_backward(const Tensor& grad, const Tensor& self);
/// The gradients of leaky_relu_ and elu_, which PyTorch computes from the result the op wrote
/// over self (LeakyReluBackward1, EluBackward1): refused, with PyTorch's texts, for a negative
/// slope or alpha, which make the result ambiguous.
Tensor leaky_relu_result_backward(const Tensor& grad, const Tensor& result, double negative_slope);
Tensor elu_result_backward(const Tensor& grad, const Tensor& result, double alpha, double scale, double input_scale);
/// masked_fill's gradient for its 0-d tensor value: the sum of grad where mask is true.
Tensor masked_fill_value_backward(const Tensor& grad, const Tensor& mask);
/// index_select's gradient: grad added into zeros of self's sizes at the selected slices.
Tensor index_select_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index);
/// index_add's gradient for source: grad's slices at index, in source's sizes.
Tensor index_add_source_backward(const Tensor& grad, int64_t dim, const Tensor& index, IntArrayRef source_sizes);
/// logsumexp's gradient: grad * exp(self - result), both brought back to self's rank.
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims, bool keepdim);
/// gather's gradient: grad scattered (added) into zeros of self's sizes through index.
Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index);
/// gelu's gradient: grad * (Phi(x) + x phi(x)), or the derivative of the tanh approximation.
Tensor gelu_backward(const Tensor& grad, const Tensor& self, const std::string& approximate);
/// amax's / amin's gradient: grad shared evenly by the ties of each slice (PyTorch's
/// scale_grad_by_count); a NaN extreme (no ties) makes its slice's gradient NaN, as PyTorch's.
Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
/// var's gradient: grad * 2 (self - mean) / (N - correction).
Tensor var_backward(const Tensor& grad, const Tensor& self, IntArrayRef dim, const std::optional<Scalar>& correction,
                    bool keepdim);
/// std's gradient: var's over 2 std, and 0 where std is 0 (a constant slice), the denominator
/// kept finite for double backward.
Tensor std_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim,
                    const std::optional<Scalar>& correction, bool keepdim);
/// masked_select's gradient: grad put where the mask (broadcast with self) is true, summed back
/// to self's sizes.
Tensor masked_select_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& mask);
/// embedding's gradient for the weight: each lookup's output gradient added into its row (the
/// padding_idx row gets none; with scale_grad_by_freq divided by how often its index occurs).
Tensor embedding_backward(const Tensor& grad, IntArrayRef weight_sizes, const Tensor& indices,
                          std::optional<int64_t> padding_idx, bool scale_grad_by_freq);
/// max_pool2d_with_indices's gradient: each output gradient added at the input position its
/// index names (windows that saw only padding, index -1, give none; defined in
/// src/ops/pooling.cpp).
Tensor max_pool2d_with_indices_backward(const Tensor& grad, IntArrayRef input_sizes, const Tensor& indices,
                                        IntArrayRef padding);
/// max(dim)'s / min(dim)'s gradient: grad put at the positions `indices` names along dim
/// (PyTorch's value_selecting_reduction_backward).
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices,
                                          IntArrayRef self_sizes, bool keepdim);
/// cumsum's gradient: the running sum of grad from the end of each lane (flip, cumsum, flip).
Tensor cumsum_backward(const Tensor& grad, int64_t dim);
/// cumprod's gradient, exact where self has zeros: before a lane's first zero, the running sum
/// from the end of grad * result divided by self; at the first zero, the running sum of grad
/// times the products that skip it; after it, 0 (no data-dependent branch: meta runs it too).
/// While the backward is recorded (create_graph), PyTorch's O(n^2) form, whose own derivative
/// is cumprod's second derivative.
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);
/// cummax's / cummin's gradient: grad summed into the positions `indices` names along dim.
Tensor cummaxmin_backward(const Tensor& grad, IntArrayRef self_sizes, const Tensor& indices, int64_t dim);
/// logcumsumexp's gradient, sum over j >= i of grad_j exp(self_i - result_j), computed in log
/// space for the positive and the negative parts of grad apart (no overflow).
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim);
/// linalg_vector_norm's gradient: grad * sign(x) |x|^(ord-1) / norm^(ord-1) (0 where the norm is
/// 0); for ord inf / -inf shared by the elements of largest / smallest |x|; none for ord 0.
Tensor linalg_vector_norm_backward(const Tensor& grad, const Tensor& self, const Scalar& ord, const Tensor& result,
                                   IntArrayRef dim, bool keepdim);
/// roll's gradient: grad rolled back by the same shifts.
Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims);
/// adaptive_avg_pool2d's gradient: each window's gradient shared evenly by its elements
/// (defined in src/ops/pooling.cpp, next to the windows).
Tensor adaptive_avg_pool2d_backward(const Tensor& grad, IntArrayRef input_sizes);
/// binary_cross_entropy's gradients (PyTorch's binary_cross_entropy_backward and _target_backward;
/// graft also differentiates the weight): the output gradient brought back through `reduction`,
/// then (x - y) / max(x (1 - x), 1e-12) for the input, log(1 - x) - log(x) for the target (not
/// clamped, as PyTorch's: infinite at 0 and 1), the unweighted loss for the weight.
/// binary_cross_entropy's per-element loss before weight and reduction, the logs clamped at -100
/// (the forward's, and the weight's gradient).
Tensor binary_cross_entropy_terms(const Tensor& input, const Tensor& target);
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                     const Tensor& weight, Reduction reduction);
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                            const Tensor& weight, Reduction reduction);
Tensor binary_cross_entropy_weight_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                                            const Tensor& weight, Reduction reduction);
/// max()'s / min()'s gradient over all elements: grad shared evenly by the elements equal to the
/// result (the NaNs when it is NaN), PyTorch's evenly_distribute_backward.
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result);
/// as_strided's gradient (PyTorch's as_strided_backward): over the storage self and the view
/// share, the view's gradient added at its elements' places (summed where the view overlaps
/// itself), read back through self's geometry (shared out where self overlaps itself). Defined
/// in src/ops/views.cpp.
Tensor as_strided_backward(const Tensor& grad, IntArrayRef self_sizes, IntArrayRef self_strides, int64_t self_offset,
                           IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset);
/// as_strided_scatter's gradients: grad with the window zeroed (self), grad's window (src).
Tensor as_strided_scatter_self_backward(const Tensor& grad, IntArrayRef size, IntArrayRef stride,
                                        int64_t storage_offset);
Tensor as_strided_scatter_src_backward(const Tensor& grad, IntArrayRef size, IntArrayRef stride,
                                       int64_t storage_offset);
/// index's gradient: grad added at the indexed places of zeros of self's sizes (defined in
/// src/ops/indexing.cpp, as the next one).
Tensor index_backward(const Tensor& grad, IntArrayRef self_sizes, const std::vector<std::optional<Tensor>>& indices);
/// index_put's gradient for self: grad, with the written places zeroed unless accumulating.
Tensor index_put_self_backward(const Tensor& grad, const std::vector<std::optional<Tensor>>& indices, bool accumulate);
/// cat's gradients: grad cut along dim into the inputs' sizes (a 1-D empty input, which cat
/// skips, gets an empty gradient).
TensorList cat_tensors_backward(const Tensor& grad, const std::vector<Shape>& tensors_sizes, int64_t dim);
/// stack's gradients: grad.select(dim, i) for each input.
TensorList stack_tensors_backward(const Tensor& grad, int64_t dim);
/// split_with_sizes's gradient: the outputs' gradients joined along dim, zeros standing for
/// the outputs that got none (as PyTorch's split_with_sizes_backward).
Tensor split_with_sizes_backward(const TensorList& grads, IntArrayRef split_sizes, int64_t dim, IntArrayRef self_sizes,
                                 DType self_dtype, Device self_device);
/// split's gradient: split_with_sizes_backward over split's piece sizes.
Tensor split_backward(const TensorList& grads, int64_t split_size, int64_t dim, IntArrayRef self_sizes,
                      DType self_dtype, Device self_device);
/// unbind's gradient: the outputs' gradients stacked along dim, zeros for those that got none.
Tensor unbind_backward(const TensorList& grads, int64_t dim, IntArrayRef self_sizes, DType self_dtype,
                       Device self_device);
/// The last two of `sizes` (an image's height and width).
Shape last_two(IntArrayRef sizes);

/// mse_loss's gradient for input (and, with the two swapped, for target, as PyTorch's):
/// 2 (input - target) times the output gradient brought back through `reduction` (divided by the
/// number of elements for the mean), in the broadcast shape; the engine sums it to the input's.
Tensor mse_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, Reduction reduction);
/// smooth_l1_loss's gradient for input (and, the two swapped, for target), as PyTorch's kernel:
/// with x = input - target, -1 where x <= -beta, 1 where x >= beta, x / beta between (NaN stays
/// NaN; with beta 0, x = 0 gives -1), times the output gradient brought back through
/// `reduction`. Its own gradient is 1 / beta strictly inside (-beta, beta), 0 elsewhere.
Tensor smooth_l1_loss_backward(const Tensor& grad, const Tensor& input, const Tensor& target, Reduction reduction,
                               double beta);
/// convolution's gradients for input, weight and bias, those `output_mask` asks for (the
/// others undefined): ConvolutionBackward0's joint formula. Without grad mode (no double
/// backward asked for) the whole batch goes through one GEMM per group, as values; under grad
/// mode (create_graph) they are written in graft ops: the input's as the adjoint convolution
/// (graft::convolution in the other direction), the weight's through im2col and bmm. A 1-d
/// convolution's are the 2-d ones over its 1 x L image. Defined in src/ops/conv.cpp.
TensorList convolution_backward(const Tensor& grad, const Tensor& input, const Tensor& weight, IntArrayRef stride,
                                IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                                int64_t groups, std::array<bool, 3> output_mask);

// ---- torch.linalg's factorizations (defined in src/ops/linalg_derivatives.cpp) ----
/// linalg_det's gradient: grad det(A) A^-T; through the SVD (the cofactor matrix, defined for a
/// singular A too) where a matrix is singular or under grad mode (double backward).
Tensor linalg_det_backward(const Tensor& grad, const Tensor& det, const Tensor& A);
/// linalg_slogdet's gradient through logabsdet: grad A^-T (the sign's is zero); undefined when
/// logabsdet got none.
Tensor slogdet_backward(const Tensor& grad_logabsdet, const Tensor& A);
/// linalg_inv's gradient: -inv^T grad inv^T.
Tensor linalg_inv_backward(const Tensor& grad, const Tensor& inverse);
/// linalg_solve's gradients for A and B (those the mask asks for): gB solves A^T gB = grad (on
/// the same side), gA = -gB X^T (left) or -X^T gB; vectors X as columns.
TensorList linalg_solve_backward(const Tensor& grad, const Tensor& X, const Tensor& A, bool left,
                                 const std::array<bool, 2>& grad_input_mask);
/// linalg_cholesky's gradient: L^-T Phi(L^T gL) L^-1 symmetrized, Phi the lower triangle with
/// its diagonal halved (L^T for an upper factor).
Tensor cholesky_backward(const Tensor& grad, bool upper, const Tensor& L);
/// linalg_solve_triangular's gradients for A (kept to its triangle, without the diagonal when
/// unitriangular) and B.
TensorList linalg_solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& X, bool upper, bool left,
                                            bool unitriangular, const std::array<bool, 2>& grad_input_mask);
/// linalg_qr's gradient from Q's and R's (either undefined): refused for mode 'r' and for
/// 'complete' with more rows than columns, as PyTorch's.
Tensor linalg_qr_backward(const Tensor& grad_Q, const Tensor& grad_R, const Tensor& Q, const Tensor& R,
                          const std::string& mode);
/// _linalg_svd's gradient from U's, S's and Vh's (any undefined); with full_matrices only the
/// first min(m, n) singular vectors carry one. Infinite where two singular values are equal
/// and the vectors' gradients are used, as PyTorch's.
Tensor svd_backward(const Tensor& grad_U, const Tensor& grad_S, const Tensor& grad_Vh, const Tensor& U, const Tensor& S,
                    const Tensor& Vh, bool full_matrices);
/// _linalg_eigh's gradient from the eigenvalues' and eigenvectors' (either undefined), a
/// symmetric matrix.
Tensor eigh_backward(const Tensor& grad_eigenvalues, const Tensor& grad_eigenvectors, const Tensor& eigenvalues,
                     const Tensor& eigenvectors);
/// linalg_pinv's gradient (the derivative of the pseudo-inverse, valid where the rank is constant).
Tensor pinv_backward(const Tensor& grad, const Tensor& pinv, const Tensor& A);

}  // namespace graft::derivatives

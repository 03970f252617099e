// LayerNorm, BatchNorm1d/2d, GroupNorm.
#include "graft/nn/modules/normalization.h"

#include "graft/core/grad_mode.h"
#include "graft/nn/init.h"
#include "graft/ops/nn_ops.h"

namespace graft::nn {

void NormImplBase::register_affine(bool affine, IntArrayRef shape) {
  if (!affine) return;
  weight = register_parameter("weight", graft::empty(shape));
  bias = register_parameter("bias", graft::empty(shape));
}
void NormImplBase::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : NormImplBase("LayerNorm"), options(o) {
  register_affine(o.elementwise_affine(), o.normalized_shape());
  reset_parameters();
}
Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}
void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm(" << IntArrayRef(options.normalized_shape()) << ", eps=" << options.eps()
     << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false") << ")";
}

BatchNormImplBase::BatchNormImplBase(std::string name, const BatchNormOptions& o, int64_t min_dim, int64_t max_dim)
    : NormImplBase(std::move(name)), options(o), min_dim_(min_dim), max_dim_(max_dim) {
  const int64_t C = o.num_features();
  register_affine(o.affine(), {C});
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({C}));
    running_var = register_buffer("running_var", ones({C}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kInt64));
  }
  reset_parameters();
}
void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  NoGradGuard ng;
  num_batches_tracked.zero_();
}
void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  NormImplBase::reset_parameters();
}
Tensor BatchNormImplBase::forward(const Tensor& input) {
  GRAFT_CHECK(input.dim() >= min_dim_ && input.dim() <= max_dim_, ValueError, "expected ",
              min_dim_ == max_dim_ ? std::to_string(min_dim_) + "D"
                                   : std::to_string(min_dim_) + "D or " + std::to_string(max_dim_) + "D",
              " input (got ", input.dim(), "D input)");
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard ng;
    num_batches_tracked.add_(1);
    if (!options.momentum() && !num_batches_tracked.device().is_meta())  // meta: no count, no values
      momentum = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // Batch statistics in training, and also in eval when no running statistics are tracked.
  const bool use_batch_stats = is_training() || !options.track_running_stats();
  return batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats, momentum, options.eps());
}
void BatchNormImplBase::pretty_print(std::ostream& os) const {
  os << name_ << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum())
    os << *options.momentum();
  else
    os << "None";
  os << ", affine=" << (options.affine() ? "true" : "false")
     << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& o) : NormImplBase("GroupNorm"), options(o) {
  GRAFT_CHECK(o.num_groups() > 0 && o.num_channels() % o.num_groups() == 0, ValueError,
              "num_channels must be divisible by num_groups");
  register_affine(o.affine(), {o.num_channels()});
  reset_parameters();
}
Tensor GroupNormImpl::forward(const Tensor& input) {
  return group_norm(input, options.num_groups(), weight, bias, options.eps());
}
void GroupNormImpl::pretty_print(std::ostream& os) const {
  os << "GroupNorm(" << options.num_groups() << ", " << options.num_channels() << ", eps=" << options.eps()
     << ", affine=" << (options.affine() ? "true" : "false") << ")";
}

}  // namespace graft::nn

#pragma once
/// LayerNorm, BatchNorm1d/2d and GroupNorm layers.
#include <optional>
#include <string>
#include <vector>

#include "graft/nn/module.h"
#include "graft/nn/options.h"

namespace graft::nn {

/// Base of the normalization layers: their optional elementwise affine, weight (ones) and
/// bias (zeros), both undefined without it.
class NormImplBase : public Module {
 public:
  /// weight := 1 and bias := 0, where defined.
  void reset_parameters();
  Tensor weight, bias;

 protected:
  explicit NormImplBase(std::string name) : Module(std::move(name)) {}
  /// Registers weight and bias of `shape` when `affine`.
  void register_affine(bool affine, IntArrayRef shape);
};

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  GRAFT_ARG(std::vector<int64_t>, normalized_shape);
  GRAFT_ARG(double, eps) = 1e-5;
  GRAFT_ARG(bool, elementwise_affine) = true;
};

/// weight ones, bias zeros.
class LayerNormImpl : public NormImplBase {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  LayerNormOptions options;
};
GRAFT_MODULE(LayerNorm);

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  GRAFT_ARG(int64_t, num_features);
  GRAFT_ARG(double, eps) = 1e-5;
  /// nullopt: cumulative moving average (1 / num_batches_tracked).
  GRAFT_ARG(std::optional<double>, momentum) = 0.1;
  GRAFT_ARG(bool, affine) = true;
  GRAFT_ARG(bool, track_running_stats) = true;
};

/// Buffers running_mean (zeros), running_var (ones), num_batches_tracked (int64 0).
class BatchNormImplBase : public NormImplBase {
 public:
  BatchNormImplBase(std::string name, const BatchNormOptions& options, int64_t min_dim, int64_t max_dim);
  Tensor forward(const Tensor& input);
  /// reset_running_stats(), then weight ones and bias zeros.
  void reset_parameters();
  void reset_running_stats();
  void pretty_print(std::ostream& os) const override;
  BatchNormOptions options;
  Tensor running_mean, running_var, num_batches_tracked;

 private:
  int64_t min_dim_, max_dim_;
};

/// Input [N, C] or [N, C, L].
class BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm1d", options, 2, 3) {}
};
GRAFT_MODULE(BatchNorm1d);

/// Input [N, C, H, W].
class BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", options, 4, 4) {}
};
GRAFT_MODULE(BatchNorm2d);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GRAFT_ARG(int64_t, num_groups);
  GRAFT_ARG(int64_t, num_channels);
  GRAFT_ARG(double, eps) = 1e-5;
  GRAFT_ARG(bool, affine) = true;
};

class GroupNormImpl : public NormImplBase {
 public:
  explicit GroupNormImpl(const GroupNormOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  GroupNormOptions options;
};
GRAFT_MODULE(GroupNorm);

}  // namespace graft::nn

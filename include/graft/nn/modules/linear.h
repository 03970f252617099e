#pragma once
/// Linear, Bilinear, Flatten and Identity layers.
#include "graft/nn/module.h"
#include "graft/nn/options.h"

namespace graft::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  GRAFT_ARG(int64_t, in_features);
  GRAFT_ARG(int64_t, out_features);
  GRAFT_ARG(bool, bias) = true;
};

/// y = x W^T + b; W [out, in] and b [out] ~ U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's init).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  Tensor forward(const Tensor& input);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  LinearOptions options;
  Tensor weight, bias;
};
GRAFT_MODULE(Linear);

struct BilinearOptions {
  BilinearOptions(int64_t in1_features, int64_t in2_features, int64_t out_features)
      : in1_features_(in1_features), in2_features_(in2_features), out_features_(out_features) {}
  GRAFT_ARG(int64_t, in1_features);
  GRAFT_ARG(int64_t, in2_features);
  GRAFT_ARG(int64_t, out_features);
  GRAFT_ARG(bool, bias) = true;
};

/// y_k = x1^T W_k x2 + b_k; W [out, in1, in2] and b ~ U(-1/sqrt(in1), 1/sqrt(in1)).
class BilinearImpl : public Module {
 public:
  BilinearImpl(int64_t in1, int64_t in2, int64_t out) : BilinearImpl(BilinearOptions(in1, in2, out)) {}
  explicit BilinearImpl(const BilinearOptions& options);
  Tensor forward(const Tensor& input1, const Tensor& input2);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  BilinearOptions options;
  Tensor weight, bias;
};
GRAFT_MODULE(Bilinear);

/// Flattens dims start_dim..end_dim (defaults 1..-1: everything but the batch).
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  int64_t start_dim, end_dim;
};
GRAFT_MODULE(Flatten);

/// Returns its input.
class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& input) { return input; }
};
GRAFT_MODULE(Identity);

}  // namespace graft::nn

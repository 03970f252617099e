#pragma once
/// Dropout layers, active in training mode and the identity in eval mode: Dropout zeroes
/// elements; Dropout1d, Dropout2d and Dropout3d zero whole channels (PyTorch's feature dropout).
#include "graft/nn/module.h"

namespace graft::nn {

class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  double p;
};
GRAFT_MODULE(Dropout);

/// Zeroes each channel of its input (dim 1 of [N, C, spatial...], dim 0 of an unbatched [C,
/// spatial...]) with probability p in training mode and scales the others by 1 / (1 - p), as
/// PyTorch's Dropout1d/2d/3d over `spatial_dims` spatial dims.
class FeatureDropoutImpl : public Module {
 public:
  FeatureDropoutImpl(std::string name, int64_t spatial_dims, double p);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  double p;

 private:
  int64_t spatial_dims_;
};
class Dropout1dImpl : public FeatureDropoutImpl {
 public:
  explicit Dropout1dImpl(double p = 0.5) : FeatureDropoutImpl("Dropout1d", 1, p) {}
};
GRAFT_MODULE(Dropout1d);
class Dropout2dImpl : public FeatureDropoutImpl {
 public:
  explicit Dropout2dImpl(double p = 0.5) : FeatureDropoutImpl("Dropout2d", 2, p) {}
};
GRAFT_MODULE(Dropout2d);
class Dropout3dImpl : public FeatureDropoutImpl {
 public:
  explicit Dropout3dImpl(double p = 0.5) : FeatureDropoutImpl("Dropout3d", 3, p) {}
};
GRAFT_MODULE(Dropout3d);

}  // namespace graft::nn

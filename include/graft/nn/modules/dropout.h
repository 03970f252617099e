#pragma once
/// Dropout: active in training mode, identity in eval mode.
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

}  // namespace graft::nn

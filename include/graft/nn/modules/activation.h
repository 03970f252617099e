#pragma once
/// Activation layers: ReLU, GELU, Tanh, Sigmoid, SiLU, Softmax.
#include <string>

#include "graft/nn/module.h"

namespace graft::nn {

class ReLUImpl : public Module {
 public:
  ReLUImpl() : Module("ReLU") {}
  Tensor forward(const Tensor& input);
};
GRAFT_MODULE(ReLU);

/// approximate: "none" (erf) or "tanh".
class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none");
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  std::string approximate;
};
GRAFT_MODULE(GELU);

class TanhImpl : public Module {
 public:
  TanhImpl() : Module("Tanh") {}
  Tensor forward(const Tensor& input);
};
GRAFT_MODULE(Tanh);

class SigmoidImpl : public Module {
 public:
  SigmoidImpl() : Module("Sigmoid") {}
  Tensor forward(const Tensor& input);
};
GRAFT_MODULE(Sigmoid);

class SiLUImpl : public Module {
 public:
  SiLUImpl() : Module("SiLU") {}
  Tensor forward(const Tensor& input);
};
GRAFT_MODULE(SiLU);

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : Module("Softmax"), dim(dim) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  int64_t dim;
};
GRAFT_MODULE(Softmax);

}  // namespace graft::nn

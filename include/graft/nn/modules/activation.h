#pragma once
/// Activation layers: ReLU, LeakyReLU, GELU, Tanh, Sigmoid, SiLU, Softmax.
#include <algorithm>
#include <cstddef>
#include <string>

#include "graft/nn/module.h"
#include "graft/nn/options.h"
#include "graft/ops/ops.h"

namespace graft::nn {

namespace detail {
/// A string literal as a template argument (`ElementwiseActivationImpl<"ReLU", relu>`).
template <size_t N>
struct LiteralName {
  constexpr LiteralName(const char (&s)[N]) { std::copy_n(s, N, chars); }  // NOLINT: implicit from a literal
  char chars[N];
};
}  // namespace detail

/// A layer without options, of type name `Name`, whose forward applies `Fn` to its input.
template <detail::LiteralName Name, Tensor (*Fn)(const Tensor&)>
class ElementwiseActivationImpl : public Module {
 public:
  ElementwiseActivationImpl() : Module(Name.chars) {}
  Tensor forward(const Tensor& input) { return Fn(input); }
};

using ReLUImpl = ElementwiseActivationImpl<"ReLU", relu>;
GRAFT_MODULE(ReLU);

/// LeakyReLU's options (libtorch's LeakyReLUOptions): the slope below zero, and whether the
/// layer writes its input in place.
struct LeakyReLUOptions {
  GRAFT_ARG(double, negative_slope) = 1e-2;
  GRAFT_ARG(bool, inplace) = false;
};

/// x for x >= 0, negative_slope * x below.
class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : Module("LeakyReLU"), options(options) {}
  Tensor forward(Tensor input);
  void pretty_print(std::ostream& os) const override;
  LeakyReLUOptions options;
};
GRAFT_MODULE(LeakyReLU);

/// approximate: "none" (erf) or "tanh".
class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none");
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  std::string approximate;
};
GRAFT_MODULE(GELU);

using TanhImpl = ElementwiseActivationImpl<"Tanh", tanh>;
GRAFT_MODULE(Tanh);
using SigmoidImpl = ElementwiseActivationImpl<"Sigmoid", sigmoid>;
GRAFT_MODULE(Sigmoid);
using SiLUImpl = ElementwiseActivationImpl<"SiLU", silu>;
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

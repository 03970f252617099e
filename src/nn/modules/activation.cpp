// Activation layers and Dropout.
#include "graft/nn/modules/activation.h"

#include "graft/nn/modules/dropout.h"
#include "graft/ops/nn_ops.h"

namespace graft::nn {

GELUImpl::GELUImpl(std::string approx) : Module("GELU"), approximate(std::move(approx)) {
  GRAFT_CHECK(approximate == "none" || approximate == "tanh", ValueError,
              "GELU: approximate must be 'none' or 'tanh', got '", approximate, "'");
}
Tensor GELUImpl::forward(const Tensor& input) { return gelu(input, approximate); }
void GELUImpl::pretty_print(std::ostream& os) const { os << "GELU(approximate='" << approximate << "')"; }

Tensor LeakyReLUImpl::forward(Tensor input) {
  return options.inplace() ? leaky_relu_(input, options.negative_slope()) : leaky_relu(input, options.negative_slope());
}
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope() << (options.inplace() ? ", inplace=True" : "") << ")";
}

Tensor SoftmaxImpl::forward(const Tensor& input) { return softmax(input, dim); }
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << dim << ")"; }

DropoutImpl::DropoutImpl(double p_) : Module("Dropout"), p(p_) {
  GRAFT_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout probability has to be between 0 and 1, but got ", p);
}
Tensor DropoutImpl::forward(const Tensor& input) { return dropout(input, p, is_training()); }
void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << p << ", inplace=false)"; }

FeatureDropoutImpl::FeatureDropoutImpl(std::string name, int64_t spatial_dims, double p_)
    : Module(std::move(name)), p(p_), spatial_dims_(spatial_dims) {
  GRAFT_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout probability has to be between 0 and 1, but got ", p);
}

Tensor FeatureDropoutImpl::forward(const Tensor& input) {
  const int64_t batched = spatial_dims_ + 2;
  GRAFT_CHECK(input.dim() == batched || input.dim() == batched - 1, RuntimeError, "dropout", spatial_dims_,
              "d: Expected ", batched - 1, "D or ", batched, "D input, but received a ", input.dim(), "D input");
  if (!is_training() || p == 0.0) return input;
  // one draw per channel: the mask has the input's leading dims and size 1 over the spatial ones
  Shape mask_sizes;
  for (int64_t d = 0; d < input.dim(); ++d) mask_sizes.push_back(d < input.dim() - spatial_dims_ ? input.size(d) : 1);
  Tensor mask = empty(mask_sizes, TensorOptions(input.dtype()).device(input.device()));
  if (p == 1.0)
    mask.zero_();
  else
    mask.bernoulli_(1.0 - p).div_(1.0 - p);
  return input * mask;
}
void FeatureDropoutImpl::pretty_print(std::ostream& os) const { os << name() << "(p=" << p << ", inplace=false)"; }

}  // namespace graft::nn

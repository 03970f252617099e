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

Tensor SoftmaxImpl::forward(const Tensor& input) { return softmax(input, dim); }
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << dim << ")"; }

DropoutImpl::DropoutImpl(double p_) : Module("Dropout"), p(p_) {
  GRAFT_CHECK(p >= 0.0 && p <= 1.0, ValueError, "dropout probability has to be between 0 and 1, but got ", p);
}
Tensor DropoutImpl::forward(const Tensor& input) { return dropout(input, p, is_training()); }
void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << p << ", inplace=false)"; }

}  // namespace graft::nn

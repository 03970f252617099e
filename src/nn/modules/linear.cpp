// Linear, Bilinear, Flatten.
#include "graft/nn/modules/linear.h"

#include <cmath>

#include "graft/nn/init.h"
#include "graft/ops/ops.h"

namespace graft::nn {

LinearImpl::LinearImpl(const LinearOptions& o) : Module("Linear"), options(o) {
  GRAFT_CHECK(o.in_features() >= 0 && o.out_features() >= 0, ValueError,
              "Linear: in_features and out_features must be non-negative, got ", o.in_features(), " and ",
              o.out_features());
  weight = register_parameter("weight", empty({o.out_features(), o.in_features()}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // kaiming_uniform(a = sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias uses the same bound.
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = options.in_features() > 0 ? 1.0 / std::sqrt(static_cast<double>(options.in_features())) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) { return linear(input, weight, bias); }

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

BilinearImpl::BilinearImpl(const BilinearOptions& o) : Module("Bilinear"), options(o) {
  weight = register_parameter("weight", empty({o.out_features(), o.in1_features(), o.in2_features()}));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_features()}));
  reset_parameters();
}

void BilinearImpl::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options.in1_features()));
  init::uniform_(weight, -bound, bound);
  if (bias.defined()) init::uniform_(bias, -bound, bound);
}

Tensor BilinearImpl::forward(const Tensor& x1, const Tensor& x2) {
  GRAFT_CHECK(
      x1.dim() >= 1 && x2.dim() >= 1 && x1.size(-1) == options.in1_features() && x2.size(-1) == options.in2_features(),
      RuntimeError, "Bilinear: expected inputs [..., ", options.in1_features(), "] and [..., ", options.in2_features(),
      "], but got ", x1.sizes(), " and ", x2.sizes());
  // y[..., k] = sum_i x1[..., i] * sum_j W[k, i, j] x2[..., j]
  const int64_t out = options.out_features(), in1 = options.in1_features();
  Tensor t = matmul(x2, weight.reshape({out * in1, options.in2_features()}).t());  // [..., out*in1]
  Shape s = t.sizes().shape();
  s.back() = out;
  s.push_back(in1);
  Tensor y = (t.reshape(s) * x1.unsqueeze(-2)).sum({-1});
  return bias.defined() ? y + bias : y;
}

void BilinearImpl::pretty_print(std::ostream& os) const {
  os << "Bilinear(in1_features=" << options.in1_features() << ", in2_features=" << options.in2_features()
     << ", out_features=" << options.out_features() << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

FlattenImpl::FlattenImpl(int64_t start, int64_t end) : Module("Flatten"), start_dim(start), end_dim(end) {}
Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(start_dim, end_dim); }
void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << start_dim << ", end_dim=" << end_dim << ")";
}

}  // namespace graft::nn

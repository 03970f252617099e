// Conv1d, Conv2d, ConvTranspose2d.
#include "graft/nn/modules/conv.h"

#include <cmath>

#include "graft/nn/init.h"
#include "graft/ops/nn_ops.h"

namespace graft::nn {

namespace {
std::vector<int64_t> expand(const std::vector<int64_t>& v, int64_t n, const char* what, const std::string& layer) {
  GRAFT_CHECK(static_cast<int64_t>(v.size()) == 1 || static_cast<int64_t>(v.size()) == n, ValueError, layer, ": ", what,
              " must have 1 or ", n, " values");
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(v.size() == 1 ? v[0] : v[static_cast<size_t>(i)]);
  return out;
}
bool all_equal(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v)
    if (e != x) return false;
  return true;
}
void print_list(std::ostream& os, const std::vector<int64_t>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
}
}  // namespace

ConvImpl::ConvImpl(std::string name, const ConvOptions& o, int64_t spatial_dims, bool transposed)
    : Module(std::move(name)), options(o), spatial_dims_(spatial_dims), transposed_(transposed) {
  GRAFT_CHECK(o.groups() > 0, ValueError, "groups must be a positive integer");
  GRAFT_CHECK(o.in_channels() % o.groups() == 0, ValueError, "in_channels must be divisible by groups");
  GRAFT_CHECK(o.out_channels() % o.groups() == 0, ValueError, "out_channels must be divisible by groups");
  options.kernel_size(expand(o.kernel_size(), spatial_dims, "kernel_size", name_));
  options.stride(expand(o.stride(), spatial_dims, "stride", name_));
  options.padding(expand(o.padding(), spatial_dims, "padding", name_));
  options.output_padding(expand(o.output_padding(), spatial_dims, "output_padding", name_));
  options.dilation(expand(o.dilation(), spatial_dims, "dilation", name_));
  Shape w = transposed ? Shape{o.in_channels(), o.out_channels() / o.groups()}
                       : Shape{o.out_channels(), o.in_channels() / o.groups()};
  for (int64_t k : options.kernel_size()) w.push_back(k);
  weight = register_parameter("weight", empty(w));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}

void ConvImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

void ConvImpl::pretty_print(std::ostream& os) const {
  os << name_ << "(" << options.in_channels() << ", " << options.out_channels() << ", kernel_size=";
  print_list(os, options.kernel_size());
  os << ", stride=";
  print_list(os, options.stride());
  if (!all_equal(options.padding(), 0)) {
    os << ", padding=";
    print_list(os, options.padding());
  }
  if (!all_equal(options.dilation(), 1)) {
    os << ", dilation=";
    print_list(os, options.dilation());
  }
  if (transposed_ && !all_equal(options.output_padding(), 0)) {
    os << ", output_padding=";
    print_list(os, options.output_padding());
  }
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=false";
  os << ")";
}

Tensor Conv1dImpl::forward(const Tensor& input) {
  return conv1d(input, weight, bias, options.stride(), options.padding(), options.dilation(), options.groups());
}
Tensor Conv2dImpl::forward(const Tensor& input) {
  return conv2d(input, weight, bias, options.stride(), options.padding(), options.dilation(), options.groups());
}
Tensor ConvTranspose2dImpl::forward(const Tensor& input) {
  return conv_transpose2d(input, weight, bias, options.stride(), options.padding(), options.output_padding(),
                          options.groups(), options.dilation());
}

}  // namespace graft::nn

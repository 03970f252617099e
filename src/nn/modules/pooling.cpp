// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.
#include "graft/nn/modules/pooling.h"

#include "graft/ops/nn_ops.h"

namespace graft::nn {

namespace {
void print_list(std::ostream& os, const std::vector<int64_t>& v) {
  if (v.size() == 1) {
    os << v[0];
    return;
  }
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << ")";
}

/// "<Name>(kernel_size=k, stride=s, padding=p": a pooling window; an empty stride is the kernel's.
template <class Options>
void print_window(std::ostream& os, const char* name, const Options& options) {
  os << name << "(kernel_size=";
  print_list(os, options.kernel_size());
  os << ", stride=";
  print_list(os, options.stride().empty() ? options.kernel_size() : options.stride());
  os << ", padding=";
  print_list(os, options.padding());
}
}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return max_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                    options.ceil_mode());
}
std::pair<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return max_pool2d_with_indices(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                                 options.ceil_mode());
}
void MaxPool2dImpl::pretty_print(std::ostream& os) const {
  print_window(os, "MaxPool2d", options);
  os << ", dilation=";
  print_list(os, options.dilation());
  os << ", ceil_mode=" << (options.ceil_mode() ? "true" : "false") << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                    options.count_include_pad(), options.divisor_override());
}
void AvgPool2dImpl::pretty_print(std::ostream& os) const {
  print_window(os, "AvgPool2d", options);
  os << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return adaptive_avg_pool2d(input, output_size); }
void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AdaptiveAvgPool2d(output_size=";
  print_list(os, output_size);
  os << ")";
}

}  // namespace graft::nn

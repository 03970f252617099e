#pragma once
/// Conv1d, Conv2d and ConvTranspose2d layers (graft::conv1d / conv2d / conv_transpose2d).
#include <vector>

#include "graft/nn/module.h"
#include "graft/nn/options.h"

namespace graft::nn {

/// Options shared by the convolution layers; sizes take one value per spatial dim or one
/// for all.
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  ConvOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvOptions(in_channels, out_channels, std::vector<int64_t>{kernel_size}) {}
  GRAFT_ARG(int64_t, in_channels);
  GRAFT_ARG(int64_t, out_channels);
  GRAFT_ARG(std::vector<int64_t>, kernel_size);
  GRAFT_EXPANDING_ARG(stride) = {1};
  GRAFT_EXPANDING_ARG(padding) = {0};
  GRAFT_EXPANDING_ARG(output_padding) = {0};
  GRAFT_EXPANDING_ARG(dilation) = {1};
  GRAFT_ARG(int64_t, groups) = 1;
  GRAFT_ARG(bool, bias) = true;
};
using Conv1dOptions = ConvOptions;
using Conv2dOptions = ConvOptions;
using ConvTranspose2dOptions = ConvOptions;

/// Weight [out, in/groups, k...] and bias [out], kaiming_uniform(a=sqrt(5)) / U(+-1/sqrt(fan_in)).
class ConvImpl : public Module {
 public:
  ConvImpl(std::string name, const ConvOptions& options, int64_t spatial_dims, bool transposed);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  ConvOptions options;
  Tensor weight, bias;

 protected:
  int64_t spatial_dims_;
  bool transposed_;
};

/// Declares NameImpl (constructors from (in, out, kernel) or options, and forward) and its
/// module holder Name.
#define GRAFT_CONV_LAYER(Name, spatial_dims, transposed)                                                    \
  class Name##Impl : public ConvImpl {                                                                      \
   public:                                                                                                  \
    Name##Impl(int64_t in, int64_t out, int64_t k) : Name##Impl(ConvOptions(in, out, k)) {}                 \
    explicit Name##Impl(const ConvOptions& options) : ConvImpl(#Name, options, spatial_dims, transposed) {} \
    Tensor forward(const Tensor& input);                                                                    \
  };                                                                                                        \
  GRAFT_MODULE(Name)

/// 1-D convolution: graft::conv1d with the layer's weight, bias and options.
GRAFT_CONV_LAYER(Conv1d, 1, false);
/// 2-D convolution: graft::conv2d with the layer's weight, bias and options.
GRAFT_CONV_LAYER(Conv2d, 2, false);
/// 2-D transposed convolution: graft::conv_transpose2d (output_padding applies).
GRAFT_CONV_LAYER(ConvTranspose2d, 2, true);

}  // namespace graft::nn

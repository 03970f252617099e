#pragma once
/// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d layers.
#include <optional>
#include <vector>

#include "graft/nn/module.h"
#include "graft/nn/options.h"

namespace graft::nn {

struct MaxPool2dOptions {
  MaxPool2dOptions(std::vector<int64_t> kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
  MaxPool2dOptions(int64_t kernel_size) : kernel_size_{kernel_size} {}                          // NOLINT
  GRAFT_ARG(std::vector<int64_t>, kernel_size);
  GRAFT_EXPANDING_ARG(stride) = {};  ///< empty: kernel_size
  GRAFT_EXPANDING_ARG(padding) = {0};
  GRAFT_EXPANDING_ARG(dilation) = {1};
  GRAFT_ARG(bool, ceil_mode) = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(const MaxPool2dOptions& options) : Module("MaxPool2d"), options(options) {}
  Tensor forward(const Tensor& input);
  /// Values and indices (for MaxUnpool-style use).
  std::pair<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  MaxPool2dOptions options;
};
GRAFT_MODULE(MaxPool2d);

struct AvgPool2dOptions {
  AvgPool2dOptions(std::vector<int64_t> kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
  AvgPool2dOptions(int64_t kernel_size) : kernel_size_{kernel_size} {}                          // NOLINT
  GRAFT_ARG(std::vector<int64_t>, kernel_size);
  GRAFT_EXPANDING_ARG(stride) = {};
  GRAFT_EXPANDING_ARG(padding) = {0};
  GRAFT_ARG(bool, ceil_mode) = false;
  GRAFT_ARG(bool, count_include_pad) = true;
  GRAFT_ARG(std::optional<int64_t>, divisor_override) = std::nullopt;
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(const AvgPool2dOptions& options) : Module("AvgPool2d"), options(options) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  AvgPool2dOptions options;
};
GRAFT_MODULE(AvgPool2d);

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(std::vector<int64_t> output_size)
      : Module("AdaptiveAvgPool2d"), output_size(std::move(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(int64_t output_size) : AdaptiveAvgPool2dImpl(std::vector<int64_t>{output_size}) {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  std::vector<int64_t> output_size;
};
GRAFT_MODULE(AdaptiveAvgPool2d);

}  // namespace graft::nn

// The convolution's node, written by hand: one backward computes all three gradients (the
// fused GEMM path of derivatives::convolution_backward, src/ops/conv.cpp), which the generated
// nodes' one formula per input cannot express. The forward is the ops layer's
// detail::convolution_forward. See docs/notes/convolution.md.
#include "node_util.h"

namespace graft {

namespace {
using detail::Pair;

struct ConvolutionBackward0 final : Node {
  std::string name() const override { return "ConvolutionBackward0"; }
  void release_variables() override {
    input.reset_data();
    weight.reset_data();
  }
  void visit_held(HeldVisitor& v) const override {
    v.saved(input, "input");
    v.saved(weight, "weight");
  }
  SavedVariable input, weight;
  Pair stride{}, padding{}, dilation{};
  bool transposed = false;
  int64_t groups = 1;
  TensorList apply(TensorList&& grads) override {
    const std::array<bool, 3> mask{should_compute_output(0), should_compute_output(1), should_compute_output(2)};
    Tensor x, w;
    if (mask[0] || mask[1]) {
      x = input.unpack(this);
      w = weight.unpack(this);
    }
    return derivatives::convolution_backward(grads[0], x, w, stride, padding, dilation, transposed, groups, mask);
  }
};

}  // namespace

Tensor detail::convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding,
                           Pair dilation, bool transposed, Pair out_hw, int64_t groups) {
  Tensor out = convolution_forward(input, weight, bias, stride, padding, dilation, transposed, out_hw, groups);
  if (autograd::any_requires_grad({&input, &weight, &bias})) {
    auto n = make_node<ConvolutionBackward0>({&input, &weight, &bias});
    if (n->should_compute_output(1) || n->should_compute_output(0)) {
      n->input = SavedVariable(input, false);
      n->weight = SavedVariable(weight, false);
    }
    n->stride = stride;
    n->padding = padding;
    n->dilation = dilation;
    n->transposed = transposed;
    n->groups = groups;
    autograd::set_history(out, n);
  }
  return out;
}

}  // namespace graft

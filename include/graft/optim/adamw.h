#pragma once
/// AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, PyTorch 2.x's torch.optim.AdamW.
#include "graft/optim/adam.h"

namespace graft::optim {

/// AdamW's options: Adam's, with weight_decay defaulting to 1e-2.
struct AdamWOptions : public detail::AdamFamilyOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : AdamFamilyOptions(lr, 1e-2) {}  // NOLINT: implicit like libtorch
};

/// Adam's update with p = p * (1 - lr * weight_decay) first instead of L2 in the gradient.
/// State as Adam's.
class AdamW : public detail::AdamFamily<AdamWOptions, /*Decoupled=*/true> {
 public:
  using AdamFamily::AdamFamily;
  std::string name() const override { return "AdamW"; }
};

}  // namespace graft::optim

#pragma once
/// Loss layers, libtorch's nn::MSELoss, L1Loss, SmoothL1Loss, BCELoss, BCEWithLogitsLoss,
/// NLLLoss and CrossEntropyLoss: each holds its options and calls the loss function of the same
/// name (`nn::MSELoss()(input, target)`, `nn::CrossEntropyLoss(CrossEntropyLossOptions()
/// .ignore_index(0))`).
#include "graft/nn/module.h"
#include "graft/nn/options.h"
#include "graft/ops/reduction.h"

namespace graft::nn {

/// The options of a loss whose only option is its reduction (MSELoss, L1Loss).
struct ReductionOptions {
  GRAFT_ARG(Reduction, reduction) = Reduction::Mean;
};
using MSELossOptions = ReductionOptions;
using L1LossOptions = ReductionOptions;

struct SmoothL1LossOptions {
  GRAFT_ARG(Reduction, reduction) = Reduction::Mean;
  GRAFT_ARG(double, beta) = 1.0;
};
struct BCELossOptions {
  GRAFT_ARG(Tensor, weight) = {};
  GRAFT_ARG(Reduction, reduction) = Reduction::Mean;
};
struct BCEWithLogitsLossOptions {
  GRAFT_ARG(Tensor, weight) = {};
  GRAFT_ARG(Reduction, reduction) = Reduction::Mean;
  GRAFT_ARG(Tensor, pos_weight) = {};
};
struct NLLLossOptions {
  GRAFT_ARG(Tensor, weight) = {};
  GRAFT_ARG(int64_t, ignore_index) = -100;
  GRAFT_ARG(Reduction, reduction) = Reduction::Mean;
};
struct CrossEntropyLossOptions {
  GRAFT_ARG(Tensor, weight) = {};
  GRAFT_ARG(int64_t, ignore_index) = -100;
  GRAFT_ARG(Reduction, reduction) = Reduction::Mean;
  GRAFT_ARG(double, label_smoothing) = 0.0;
};

/// A loss layer: `Fn(input, target, options)` with the options given at construction; a class
/// weight, when given, is registered as the buffer "weight" (and "pos_weight"), as PyTorch's.
template <class Options>
class LossImpl : public Module {
 public:
  LossImpl(std::string name, Options options_) : Module(std::move(name)), options(std::move(options_)) {}
  void pretty_print(std::ostream& os) const override { os << name() << "()"; }
  Options options;
};

class MSELossImpl : public LossImpl<MSELossOptions> {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : LossImpl("MSELoss", options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(MSELoss);
class L1LossImpl : public LossImpl<L1LossOptions> {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : LossImpl("L1Loss", options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(L1Loss);
class SmoothL1LossImpl : public LossImpl<SmoothL1LossOptions> {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : LossImpl("SmoothL1Loss", options) {}
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(SmoothL1Loss);
class BCELossImpl : public LossImpl<BCELossOptions> {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(BCELoss);
class BCEWithLogitsLossImpl : public LossImpl<BCEWithLogitsLossOptions> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(BCEWithLogitsLoss);
class NLLLossImpl : public LossImpl<NLLLossOptions> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(NLLLoss);
class CrossEntropyLossImpl : public LossImpl<CrossEntropyLossOptions> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
};
GRAFT_MODULE(CrossEntropyLoss);

}  // namespace graft::nn

#pragma once
/// Adam (Kingma & Ba) with L2 weight decay, AMSGrad and maximize: PyTorch 2.x's torch.optim.Adam.
#include <tuple>
#include <unordered_map>

#include "graft/optim/optimizer.h"

namespace graft::optim {

namespace detail {

/// PyTorch's Adam/AdamW argument checks, with its messages: "Invalid learning rate: ...",
/// "Invalid epsilon value: ...", "Invalid beta parameter at index 0: ...", "... index 1: ...",
/// "Invalid weight_decay value: ...".
void validate_adam(double lr, double eps, const std::tuple<double, double>& betas, double weight_decay);

/// The options Adam and AdamW share (they differ only in weight_decay's default): lr,
/// weight_decay and maximize from OptimizerCommonOptions, and betas, eps, amsgrad, each with a
/// chained setter returning Derived.
template <class Derived>
class AdamFamilyOptions : public OptimizerCommonOptions<Derived> {
 public:
  /// (beta1, beta2).
  using betas_t = std::tuple<double, double>;
  AdamFamilyOptions(double lr, double weight_decay) : OptimizerCommonOptions<Derived>(lr, weight_decay) {}
  GRAFT_OPTIM_CRTP_ARG(betas_t, betas) = std::make_tuple(0.9, 0.999);
  GRAFT_OPTIM_CRTP_ARG(double, eps) = 1e-8;
  GRAFT_OPTIM_CRTP_ARG(bool, amsgrad) = false;

 public:
  /// lr, betas, eps, weight_decay, amsgrad, maximize.
  void visit(OptionVisitor& v) override {
    v.number("lr", this->lr());
    v.pair("betas", betas_);
    v.number("eps", eps_);
    v.number("weight_decay", this->weight_decay());
    v.flag("amsgrad", amsgrad_);
    v.flag("maximize", this->maximize());
  }
  void validate() const override { validate_adam(this->lr(), eps_, betas_, this->weight_decay()); }
};

/// One Adam step over a group: g = +-grad (+ weight_decay * p unless `decoupled`); m, v and
/// (AMSGrad) vmax updated; p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps),
/// after p *= 1 - lr * weight_decay when `decoupled` (AdamW).
void adam_step(std::unordered_map<const TensorImpl*, ParamState>& state, OptimizerParamGroup& group, double lr,
               const std::tuple<double, double>& betas, double eps, double weight_decay, bool amsgrad, bool maximize,
               bool decoupled);
/// step, exp_avg, exp_avg_sq (+ max_exp_avg_sq with amsgrad).
Optimizer::StateSchema adam_state_schema(bool amsgrad);

/// The optimizer Adam and AdamW share: Options is AdamOptions or AdamWOptions; `Decoupled`
/// says where weight decay goes.
template <class Options, bool Decoupled>
class AdamFamily : public OptimizerWithOptions<Options> {
 public:
  using OptimizerWithOptions<Options>::OptimizerWithOptions;

 protected:
  Optimizer::StateSchema state_schema(const OptimizerOptions& options) const override {
    return adam_state_schema(static_cast<const Options&>(options).amsgrad());
  }
  void update_group(OptimizerParamGroup& group) override {
    const auto& o = static_cast<const Options&>(group.options());
    adam_step(this->state(), group, o.lr(), o.betas(), o.eps(), o.weight_decay(), o.amsgrad(), o.maximize(), Decoupled);
  }
};

}  // namespace detail

/// Adam's options (PyTorch's defaults: lr 1e-3, betas (0.9, 0.999), eps 1e-8, no weight decay).
struct AdamOptions : public detail::AdamFamilyOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : AdamFamilyOptions(lr, 0.0) {}  // NOLINT: implicit like libtorch
};

/// Per step t: g = +-grad (+ weight_decay * p); m = lerp(m, g, 1 - beta1);
/// v = beta2 * v + (1 - beta2) * g * g; (AMSGrad: vmax = max(vmax, v), used for v);
/// p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps).
/// State: "step" (0-d float32), "exp_avg", "exp_avg_sq", "max_exp_avg_sq" (AMSGrad).
class Adam : public detail::AdamFamily<AdamOptions, /*Decoupled=*/false> {
 public:
  using AdamFamily::AdamFamily;
  std::string name() const override { return "Adam"; }
};

}  // namespace graft::optim

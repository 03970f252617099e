#pragma once
/// OneCycleLR: the 1cycle policy (Smith & Topin), PyTorch 2.x's torch.optim.lr_scheduler.OneCycleLR.
#include <optional>
#include <string>

#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// OneCycleLR's arguments (PyTorch's defaults). Give total_steps, or epochs and steps_per_epoch.
struct OneCycleLROptions {
  /// max_lr for every group (one value) or one per group.
  OneCycleLROptions(std::vector<double> max_lr) : max_lr_(std::move(max_lr)) {}  // NOLINT
  OneCycleLROptions(double max_lr) : max_lr_({max_lr}) {}                        // NOLINT
  GRAFT_OPTIM_ARG(std::vector<double>, max_lr);
  GRAFT_OPTIM_ARG(std::optional<int64_t>, total_steps);
  GRAFT_OPTIM_ARG(std::optional<int64_t>, epochs);
  GRAFT_OPTIM_ARG(std::optional<int64_t>, steps_per_epoch);
  GRAFT_OPTIM_ARG(double, pct_start) = 0.3;
  /// "cos" or "linear".
  GRAFT_OPTIM_ARG(std::string, anneal_strategy) = "cos";
  /// Cycle SGD's/RMSprop's momentum or Adam's beta1 inversely to the lr.
  GRAFT_OPTIM_ARG(bool, cycle_momentum) = true;
  GRAFT_OPTIM_ARG(double, base_momentum) = 0.85;
  GRAFT_OPTIM_ARG(double, max_momentum) = 0.95;
  /// initial_lr = max_lr / div_factor.
  GRAFT_OPTIM_ARG(double, div_factor) = 25.0;
  /// min_lr = initial_lr / final_div_factor.
  GRAFT_OPTIM_ARG(double, final_div_factor) = 1e4;
  /// Three phases (up, down to initial_lr, down to min_lr) instead of two.
  GRAFT_OPTIM_ARG(bool, three_phase) = false;
};

/// Anneals lr from max_lr / div_factor up to max_lr over pct_start of the steps, then down to
/// min_lr (cosine or linear), and momentum the opposite way between max_momentum and
/// base_momentum. Sets each group's initial_lr, and its momentum (or beta1) to max_momentum.
/// Stepping past total_steps raises ValueError "Tried to step N times. The specified number
/// of total steps is T" (and changes nothing).
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

 protected:
  std::vector<double> get_lr() override;
  void visit_state(SchedulerStateVisitor& visitor) override;

 private:
  double anneal(double start, double end, double pct) const;
  int64_t total_steps_ = 0;
  double pct_start_ = 0.3;
  bool anneal_linear_ = false;
  bool three_phase_ = false;
  bool cycle_momentum_ = true;
  bool use_beta1_ = false;
  std::vector<double> initial_lrs_, max_lrs_, min_lrs_, max_momentums_, base_momentums_;
};

}  // namespace graft::optim

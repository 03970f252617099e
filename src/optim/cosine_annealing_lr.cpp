// CosineAnnealingLR in PyTorch's recursive form (it follows the group's current lr).
#include "graft/optim/cosine_annealing_lr.h"

#include <cmath>
#include <numbers>

namespace graft::optim {

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(positive_integer("CosineAnnealingLR", "T_max", T_max)), eta_min_(eta_min) {
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs = group_lrs();
  const int64_t e = last_epoch_;
  const double T = static_cast<double>(T_max_);
  if (e == 0) return lrs;
  if (step_count_ == 1 && e > 0) {  // only reachable when resuming from a later epoch
    for (size_t i = 0; i < lrs.size() && i < base_lrs_.size(); ++i)
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(static_cast<double>(e) * pi / T)) / 2;
    return lrs;
  }
  const int64_t period = 2 * T_max_;
  const int64_t phase = ((e - 1 - T_max_) % period + period) % period;  // Python's % (non-negative)
  if (phase == 0) {
    for (size_t i = 0; i < lrs.size() && i < base_lrs_.size(); ++i)
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2;
    return lrs;
  }
  for (double& lr : lrs)
    lr = (1 + std::cos(pi * static_cast<double>(e) / T)) / (1 + std::cos(pi * static_cast<double>(e - 1) / T)) *
             (lr - eta_min_) +
         eta_min_;
  return lrs;
}

void CosineAnnealingLR::visit_state(SchedulerStateVisitor& v) {
  LRScheduler::visit_state(v);
  v.integer("T_max", T_max_);
  v.number("eta_min", eta_min_);
}

}  // namespace graft::optim

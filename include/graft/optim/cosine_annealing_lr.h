#pragma once
/// CosineAnnealingLR: cosine annealing from the initial lr to eta_min over T_max epochs,
/// then back up (SGDR without restarts), in PyTorch's recursive (chainable) form.
#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// Epoch 0 keeps lr; when (last_epoch - 1 - T_max) % (2 T_max) == 0,
/// lr += (base_lr - eta_min) * (1 - cos(pi / T_max)) / 2; otherwise
/// lr := (1 + cos(pi e / T_max)) / (1 + cos(pi (e - 1) / T_max)) * (lr - eta_min) + eta_min.
/// ValueError for T_max < 1.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);

 protected:
  std::vector<double> get_lr() override;
  void visit_state(SchedulerStateVisitor& visitor) override;

 private:
  int64_t T_max_;
  double eta_min_;
};

}  // namespace graft::optim

#pragma once
/// MultiStepLR: multiplies the learning rate by gamma at each milestone epoch.
#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// lr := lr * gamma^k when last_epoch is a milestone listed k times (PyTorch's Counter).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  void visit_state(SchedulerStateVisitor& visitor) override;

 private:
  std::vector<int64_t> milestones_;  ///< sorted, repeats kept
  double gamma_;
};

}  // namespace graft::optim

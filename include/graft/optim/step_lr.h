#pragma once
/// StepLR: multiplies the learning rate by gamma every step_size epochs.
#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// lr := lr * gamma when last_epoch is a positive multiple of step_size (PyTorch's chainable
/// form: it reads the group's current lr). ValueError for step_size < 1.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 protected:
  std::vector<double> get_lr() override;
  void visit_state(SchedulerStateVisitor& visitor) override;

 private:
  int64_t step_size_;
  double gamma_;
};

}  // namespace graft::optim

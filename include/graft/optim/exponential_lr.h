#pragma once
/// ExponentialLR: multiplies the learning rate by gamma every epoch.
#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// lr := lr * gamma for every epoch after the first.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 protected:
  std::vector<double> get_lr() override;
  void visit_state(SchedulerStateVisitor& visitor) override;

 private:
  double gamma_;
};

}  // namespace graft::optim

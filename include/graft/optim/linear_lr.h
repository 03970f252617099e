#pragma once
/// LinearLR: scales the learning rate linearly from start_factor to end_factor over
/// total_iters epochs (PyTorch's chainable form).
#include "graft/optim/lr_scheduler.h"

namespace graft::optim {

/// Epoch 0: lr *= start_factor; epochs 1..total_iters: lr *= 1 + (end - start) /
/// (total_iters * start + (e - 1) * (end - start)); later epochs keep lr.
/// ValueError (PyTorch's texts) for start_factor outside (0, 1] or end_factor outside [0, 1].
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 protected:
  std::vector<double> get_lr() override;
  void visit_state(SchedulerStateVisitor& visitor) override;

 private:
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

}  // namespace graft::optim

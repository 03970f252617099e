// LinearLR: a linear warm-up (or decay) of the learning rate, in PyTorch's chainable form.
#include "graft/optim/linear_lr.h"

namespace graft::optim {

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  GRAFT_CHECK(!(start_factor > 1.0 || start_factor <= 0), ValueError,
              "Starting multiplicative factor expected to be greater than 0 and less or equal to 1.");
  GRAFT_CHECK(!(end_factor > 1.0 || end_factor < 0), ValueError,
              "Ending multiplicative factor expected to be between 0 and 1.");
  initial_step();
}

std::vector<double> LinearLR::get_lr() {
  if (last_epoch_ == 0) return scaled_group_lrs(start_factor_);
  if (last_epoch_ > total_iters_) return group_lrs();
  const double d = end_factor_ - start_factor_;
  return scaled_group_lrs(
      1.0 + d / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * d));
}

void LinearLR::visit_state(SchedulerStateVisitor& v) {
  LRScheduler::visit_state(v);
  v.number("start_factor", start_factor_);
  v.number("end_factor", end_factor_);
  v.integer("total_iters", total_iters_);
}

}  // namespace graft::optim

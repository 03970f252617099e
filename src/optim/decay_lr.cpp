// StepLR, MultiStepLR and ExponentialLR: multiplicative decays in PyTorch's chainable form.
#include <algorithm>
#include <cmath>

#include "graft/optim/exponential_lr.h"
#include "graft/optim/multi_step_lr.h"
#include "graft/optim/step_lr.h"

namespace graft::optim {

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(positive_integer("StepLR", "step_size", step_size)), gamma_(gamma) {
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  const bool decays = last_epoch_ != 0 && last_epoch_ % step_size_ == 0;
  return scaled_group_lrs(decays ? gamma_ : 1.0);
}

void StepLR::visit_state(SchedulerStateVisitor& v) {
  LRScheduler::visit_state(v);
  v.integer("step_size", step_size_);
  v.number("gamma", gamma_);
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::get_lr() {
  const auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  return scaled_group_lrs(count == 0 ? 1.0 : std::pow(gamma_, static_cast<double>(count)));  // gamma ** milestones[e]
}

void MultiStepLR::visit_state(SchedulerStateVisitor& v) {
  LRScheduler::visit_state(v);
  v.integers("milestones", milestones_);
  v.number("gamma", gamma_);
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lr() { return scaled_group_lrs(last_epoch_ == 0 ? 1.0 : gamma_); }

void ExponentialLR::visit_state(SchedulerStateVisitor& v) {
  LRScheduler::visit_state(v);
  v.number("gamma", gamma_);
}

}  // namespace graft::optim

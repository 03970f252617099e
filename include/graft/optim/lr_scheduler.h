#pragma once
/// The learning-rate scheduler base (libtorch's torch::optim::LRScheduler, with PyTorch 2.x's
/// behaviour): construction performs the initial step (last_epoch -1 -> 0); each step()
/// advances last_epoch and writes the new learning rate into every parameter group.
#include <cstdint>
#include <vector>

#include "graft/core/ordered_dict.h"
#include "graft/optim/optimizer.h"

namespace graft::optim {

/// Receives every entry of a scheduler's state by its PyTorch name.
class SchedulerStateVisitor {
 public:
  virtual ~SchedulerStateVisitor() = default;
  /// An integer (0-d int64 in the state dict).
  virtual void integer(const char* name, int64_t& value) = 0;
  /// A real number (0-d float64).
  virtual void number(const char* name, double& value) = 0;
  /// A flag (0-d float64, 0 or 1).
  virtual void flag(const char* name, bool& value) = 0;
  /// One value per parameter group (1-D float64).
  virtual void per_group(const char* name, std::vector<double>& values) = 0;
  /// A list of integers of any length (1-D int64).
  virtual void integers(const char* name, std::vector<int64_t>& values) = 0;
};

/// Base of the schedulers. Holds a reference to the optimizer: keep the optimizer alive.
class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler();
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  /// last_epoch += 1, then every group's lr := the schedule's value. A step the schedule
  /// rejects (OneCycleLR past total_steps) throws and changes nothing.
  void step();
  /// The learning rates the last step set, one per group.
  const std::vector<double>& get_last_lr() const noexcept { return last_lr_; }
  /// Steps taken since construction, the initial step counting as epoch 0.
  int64_t last_epoch() const noexcept { return last_epoch_; }
  /// The groups' initial learning rates (group.initial_lr()).
  const std::vector<double>& base_lrs() const noexcept { return base_lrs_; }

  /// "last_epoch", "_step_count" (0-d int64), "base_lrs", "_last_lr" (1-D float64), then the
  /// schedule's own entries ("step_size", "gamma", ...), as PyTorch's scheduler state_dict.
  StateDict state_dict() const;
  /// Restores a state_dict() of the same scheduler type: every key, dtype and shape is checked
  /// first (KeyError, TypeError, ValueError); a failed load changes nothing. Like PyTorch, it
  /// does not touch the optimizer's learning rates (load the optimizer's state dict for that).
  void load_state_dict(const StateDict& state_dict);

 protected:
  /// The learning rates for epoch last_epoch() (already advanced), one per group.
  virtual std::vector<double> get_lr() = 0;
  /// Visits the state entries; overrides call the base first, then add their own.
  virtual void visit_state(SchedulerStateVisitor& visitor);
  /// PyTorch's _initial_step: sets each group's initial_lr if unset, base_lrs from them, and
  /// takes step 0. Concrete constructors call it last, after validating their arguments; if
  /// it throws, the optimizer is left as it was.
  void initial_step();
  /// `value` if it is at least 1, else ValueError "<scheduler>: <name> must be a positive
  /// integer, got <value>" (StepLR's step_size, CosineAnnealingLR's T_max).
  static int64_t positive_integer(const char* scheduler, const char* name, int64_t value);
  /// The optimizer's current learning rates, one per group.
  std::vector<double> group_lrs() const;
  /// group_lrs(), each times `factor`: PyTorch's chainable multiplicative forms (StepLR,
  /// MultiStepLR, ExponentialLR, LinearLR); a factor of 1 keeps every lr as it is.
  std::vector<double> scaled_group_lrs(double factor) const;

  Optimizer& optimizer_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
  std::vector<double> last_lr_;
};

}  // namespace graft::optim

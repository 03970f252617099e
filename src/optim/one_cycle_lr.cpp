// OneCycleLR: PyTorch's phases (two, or three with three_phase), cosine or linear annealing,
// momentum (or Adam's beta1) cycled inversely to the learning rate.
#include "graft/optim/one_cycle_lr.h"

#include <cmath>
#include <numbers>

#include "graft/core/python_format.h"

namespace graft::optim {

namespace {

// PyTorch's _format_param: one value for every group, or exactly one per group.
std::vector<double> per_group_values(const char* name, const std::vector<double>& values, size_t groups) {
  if (values.size() == 1) return std::vector<double>(groups, values[0]);
  GRAFT_CHECK(values.size() == groups, ValueError, "expected ", groups, " values for ", name, ", got ", values.size());
  return values;
}

}  // namespace

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o) : LRScheduler(optimizer) {
  // ---- validate (PyTorch's order and messages) ----
  if (o.total_steps()) {
    GRAFT_CHECK(*o.total_steps() > 0, ValueError, "Expected positive integer total_steps, but got ", *o.total_steps());
    total_steps_ = *o.total_steps();
  } else if (o.epochs() && o.steps_per_epoch()) {
    GRAFT_CHECK(*o.epochs() > 0, ValueError, "Expected positive integer epochs, but got ", *o.epochs());
    GRAFT_CHECK(*o.steps_per_epoch() > 0, ValueError, "Expected positive integer steps_per_epoch, but got ",
                *o.steps_per_epoch());
    GRAFT_CHECK(*o.epochs() <= INT64_MAX / *o.steps_per_epoch(), ValueError,
                "OneCycleLR: epochs * steps_per_epoch overflows int64");
    total_steps_ = *o.epochs() * *o.steps_per_epoch();
  } else {
    throw ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)");
  }
  GRAFT_CHECK(!(o.pct_start() < 0 || o.pct_start() > 1), ValueError,
              "Expected float between 0 and 1 pct_start, but got ", graft::detail::python_float(o.pct_start()));
  GRAFT_CHECK(o.anneal_strategy() == "cos" || o.anneal_strategy() == "linear", ValueError,
              "anneal_strategy must be one of 'cos' or 'linear', instead got ", o.anneal_strategy());
  pct_start_ = o.pct_start();
  anneal_linear_ = o.anneal_strategy() == "linear";
  three_phase_ = o.three_phase();
  auto& groups = optimizer.param_groups();
  max_lrs_ = per_group_values("max_lr", o.max_lr(), groups.size());
  cycle_momentum_ = o.cycle_momentum();
  if (cycle_momentum_) {
    const auto& defaults = optimizer.defaults();
    GRAFT_CHECK(defaults.has_option("momentum") || defaults.has_option("betas"), ValueError,
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled");
    use_beta1_ = defaults.has_option("betas");
  }
  max_momentums_.assign(groups.size(), o.max_momentum());
  base_momentums_.assign(groups.size(), o.base_momentum());

  // ---- set the groups' initial_lr and momentum, then step 0 ----
  std::vector<std::optional<double>> saved_initial;
  std::vector<std::vector<double>> saved_momentum;
  for (size_t i = 0; i < groups.size(); ++i) {
    initial_lrs_.push_back(max_lrs_[i] / o.div_factor());
    min_lrs_.push_back(initial_lrs_[i] / o.final_div_factor());
    saved_initial.push_back(groups[i].initial_lr());
    groups[i].set_initial_lr(initial_lrs_[i]);
    if (cycle_momentum_) {
      OptimizerOptions& opts = groups[i].options();
      saved_momentum.push_back(opts.get_option(use_beta1_ ? "betas" : "momentum"));
      if (use_beta1_)
        opts.set_option("betas", {max_momentums_[i], opts.get_option("betas")[1]});
      else
        opts.set_option("momentum", {max_momentums_[i]});
    }
  }
  try {
    initial_step();
  } catch (...) {
    for (size_t i = 0; i < groups.size(); ++i) {
      groups[i].set_initial_lr(saved_initial[i]);
      if (cycle_momentum_) groups[i].options().set_option(use_beta1_ ? "betas" : "momentum", saved_momentum[i]);
    }
    throw;
  }
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (anneal_linear_) return (end - start) * pct + start;
  const double cos_out = std::cos(std::numbers::pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

std::vector<double> OneCycleLR::get_lr() {
  const int64_t step_num = last_epoch_;
  GRAFT_CHECK(step_num <= total_steps_, ValueError, "Tried to step ", step_num,
              " times. The specified number of total steps is ", total_steps_);
  enum Which { Initial, Max, Min, MaxMom, BaseMom };
  struct Phase {
    double end_step;
    Which start_lr, end_lr, start_momentum, end_momentum;
  };
  const double total = static_cast<double>(total_steps_);
  std::vector<Phase> phases;
  if (three_phase_) {
    phases = {{pct_start_ * total - 1, Initial, Max, MaxMom, BaseMom},
              {2 * pct_start_ * total - 2, Max, Initial, BaseMom, MaxMom},
              {total - 1, Initial, Min, MaxMom, MaxMom}};
  } else {
    phases = {{pct_start_ * total - 1, Initial, Max, MaxMom, BaseMom}, {total - 1, Max, Min, BaseMom, MaxMom}};
  }
  auto& groups = optimizer_.param_groups();
  const size_t n = std::min(groups.size(), max_lrs_.size());
  std::vector<double> lrs, momenta;
  for (size_t i = 0; i < n; ++i) {
    auto value = [&](Which w) {
      switch (w) {
        case Initial:
          return initial_lrs_[i];
        case Max:
          return max_lrs_[i];
        case Min:
          return min_lrs_[i];
        case MaxMom:
          return max_momentums_[i];
        case BaseMom:
          return base_momentums_[i];
      }
      return 0.0;
    };
    double start_step = 0, lr = 0, momentum = 0;
    for (size_t p = 0; p < phases.size(); ++p) {
      const Phase& ph = phases[p];
      if (static_cast<double>(step_num) <= ph.end_step || p == phases.size() - 1) {
        const double pct = (static_cast<double>(step_num) - start_step) / (ph.end_step - start_step);
        lr = anneal(value(ph.start_lr), value(ph.end_lr), pct);
        if (cycle_momentum_) momentum = anneal(value(ph.start_momentum), value(ph.end_momentum), pct);
        break;
      }
      start_step = ph.end_step;
    }
    lrs.push_back(lr);
    momenta.push_back(momentum);
  }
  if (cycle_momentum_) {
    for (size_t i = 0; i < n; ++i) {
      OptimizerOptions& opts = groups[i].options();
      if (use_beta1_)
        opts.set_option("betas", {momenta[i], opts.get_option("betas")[1]});
      else
        opts.set_option("momentum", {momenta[i]});
    }
  }
  return lrs;
}

void OneCycleLR::visit_state(SchedulerStateVisitor& v) {
  LRScheduler::visit_state(v);
  v.integer("total_steps", total_steps_);
  v.number("pct_start", pct_start_);
  v.flag("anneal_linear", anneal_linear_);
  v.flag("three_phase", three_phase_);
  v.flag("cycle_momentum", cycle_momentum_);
  v.flag("use_beta1", use_beta1_);
  v.per_group("initial_lrs", initial_lrs_);
  v.per_group("max_lrs", max_lrs_);
  v.per_group("min_lrs", min_lrs_);
  v.per_group("max_momentums", max_momentums_);
  v.per_group("base_momentums", base_momentums_);
}

}  // namespace graft::optim

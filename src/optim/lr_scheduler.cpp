// LRScheduler: the step driver, initial step and the state dict.
#include "graft/optim/lr_scheduler.h"

#include <set>

#include "graft/ops/ops.h"

namespace graft::optim {

namespace {

struct StateWriter final : SchedulerStateVisitor {
  StateDict& out;
  explicit StateWriter(StateDict& o) : out(o) {}
  void integer(const char* name, int64_t& v) override { out.insert(name, scalar_tensor(v, kInt64)); }
  void number(const char* name, double& v) override { out.insert(name, scalar_tensor(v, kFloat64)); }
  void flag(const char* name, bool& v) override { out.insert(name, scalar_tensor(v ? 1.0 : 0.0, kFloat64)); }
  void per_group(const char* name, std::vector<double>& v) override { out.insert(name, tensor(v, kFloat64)); }
  void integers(const char* name, std::vector<int64_t>& v) override { out.insert(name, tensor(v, kInt64)); }
};

// Pass 1 (assign == false) checks every entry; pass 2 assigns (cannot fail after pass 1).
struct StateReader final : SchedulerStateVisitor {
  const StateDict& in;
  size_t num_groups;
  bool assign;
  std::set<std::string> visited;
  StateReader(const StateDict& i, size_t groups, bool a) : in(i), num_groups(groups), assign(a) {}

  const Tensor& entry(const char* name, DType dtype, int dim) {
    visited.insert(name);
    const Tensor* t = in.find(name);
    GRAFT_CHECK(t && t->defined(), KeyError, "LRScheduler.load_state_dict: missing key '", name, "'");
    GRAFT_CHECK(t->dtype() == dtype, TypeError, "LRScheduler.load_state_dict: '", name, "' has dtype ", t->dtype(),
                ", expected ", dtype);
    GRAFT_CHECK(t->dim() == dim, ValueError, "LRScheduler.load_state_dict: '", name, "' has shape ", t->sizes(),
                ", expected a ", dim, "-D tensor");
    return *t;
  }
  void integer(const char* name, int64_t& v) override {
    const Tensor& t = entry(name, kInt64, 0);
    if (assign) v = t.item<int64_t>();
  }
  void number(const char* name, double& v) override {
    const Tensor& t = entry(name, kFloat64, 0);
    if (assign) v = t.item<double>();
  }
  void flag(const char* name, bool& v) override {
    const Tensor& t = entry(name, kFloat64, 0);
    const double x = t.item<double>();
    GRAFT_CHECK(x == 0 || x == 1, ValueError, "LRScheduler.load_state_dict: '", name,
                "' is a flag and must be 0 or 1, got ", x);
    if (assign) v = x != 0;
  }
  void per_group(const char* name, std::vector<double>& v) override {
    const Tensor& t = entry(name, kFloat64, 1);
    GRAFT_CHECK(static_cast<size_t>(t.numel()) == num_groups, ValueError, "LRScheduler.load_state_dict: '", name,
                "' has ", t.numel(), " values but the optimizer has ", num_groups, " parameter groups");
    if (assign) v = t.to_vector<double>();
  }
  void integers(const char* name, std::vector<int64_t>& v) override {
    const Tensor& t = entry(name, kInt64, 1);
    if (assign) v = t.to_vector<int64_t>();
  }
};

}  // namespace

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}
LRScheduler::~LRScheduler() = default;

int64_t LRScheduler::positive_integer(const char* scheduler, const char* name, int64_t value) {
  GRAFT_CHECK(value >= 1, ValueError, scheduler, ": ", name, " must be a positive integer, got ", value);
  return value;
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (const auto& g : optimizer_.param_groups()) lrs.push_back(g.options().get_lr());
  return lrs;
}

std::vector<double> LRScheduler::scaled_group_lrs(double factor) const {
  std::vector<double> lrs = group_lrs();
  for (double& lr : lrs) lr = lr * factor;
  return lrs;
}

void LRScheduler::initial_step() {
  auto& groups = optimizer_.param_groups();
  std::vector<std::optional<double>> saved_initial;
  const std::vector<double> saved_lrs = group_lrs();
  for (auto& g : groups) {
    saved_initial.push_back(g.initial_lr());
    if (!g.initial_lr()) g.set_initial_lr(g.options().get_lr());  // group.setdefault("initial_lr", lr)
  }
  base_lrs_.clear();
  for (auto& g : groups) base_lrs_.push_back(*g.initial_lr());
  step_count_ = 0;
  try {
    step();
  } catch (...) {
    for (size_t i = 0; i < groups.size(); ++i) {
      groups[i].set_initial_lr(saved_initial[i]);
      groups[i].options().set_lr(saved_lrs[i]);
    }
    throw;
  }
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  std::vector<double> lrs;
  try {
    lrs = get_lr();
  } catch (...) {
    --step_count_;
    --last_epoch_;
    throw;
  }
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); ++i) groups[i].options().set_lr(lrs[i]);
  last_lr_ = group_lrs();
}

void LRScheduler::visit_state(SchedulerStateVisitor& v) {
  v.integer("last_epoch", last_epoch_);
  v.integer("_step_count", step_count_);
  v.per_group("base_lrs", base_lrs_);
  v.per_group("_last_lr", last_lr_);
}

StateDict LRScheduler::state_dict() const {
  StateDict out;
  StateWriter w(out);
  const_cast<LRScheduler*>(this)->visit_state(w);  // the writer only reads
  return out;
}

void LRScheduler::load_state_dict(const StateDict& state_dict) {
  const size_t groups = optimizer_.param_groups().size();
  StateReader check(state_dict, groups, /*assign=*/false);
  visit_state(check);
  for (const auto& item : state_dict)
    GRAFT_CHECK(check.visited.count(item.key()), KeyError, "LRScheduler.load_state_dict: unexpected key '", item.key(),
                "'");
  StateReader assign(state_dict, groups, /*assign=*/true);
  visit_state(assign);
}

}  // namespace graft::optim

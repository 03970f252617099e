// The optimizer base: options access by name, parameter groups, zero_grad and the step driver.
#include "graft/optim/optimizer.h"

#include "graft/core/lifetime.h"

#include <typeinfo>
#include <unordered_set>

#include "graft/autograd/autograd.h"
#include "graft/core/grad_mode.h"
#include "update_util.h"

namespace graft::optim {

// ---- OptimizerOptions: options by name ----

namespace {

// Collects (name, values) of every option.
struct OptionReader final : OptionVisitor {
  std::vector<std::pair<std::string, std::vector<double>>> items;
  void number(const char* name, double& v) override { items.push_back({name, {v}}); }
  void flag(const char* name, bool& v) override { items.push_back({name, {v ? 1.0 : 0.0}}); }
  void pair(const char* name, std::tuple<double, double>& v) override {
    items.push_back({name, {std::get<0>(v), std::get<1>(v)}});
  }
};

// Writes the option called `target`.
struct OptionWriter final : OptionVisitor {
  const std::string& target;
  const std::vector<double>& values;
  bool found = false;
  OptionWriter(const std::string& t, const std::vector<double>& v) : target(t), values(v) {}
  void check(const char* name, size_t n) {
    GRAFT_CHECK(values.size() == n, ValueError, "set_option: option '", name, "' takes ", n, " value",
                n == 1 ? "" : "s", ", got ", values.size());
  }
  void number(const char* name, double& v) override {
    if (target != name) return;
    check(name, 1);
    v = values[0];
    found = true;
  }
  void flag(const char* name, bool& v) override {
    if (target != name) return;
    check(name, 1);
    v = values[0] != 0;
    found = true;
  }
  void pair(const char* name, std::tuple<double, double>& v) override {
    if (target != name) return;
    check(name, 2);
    v = {values[0], values[1]};
    found = true;
  }
};

std::vector<std::pair<std::string, std::vector<double>>> read_options(const OptimizerOptions& o) {
  OptionReader r;
  const_cast<OptimizerOptions&>(o).visit(r);  // the reader changes nothing
  return std::move(r.items);
}

}  // namespace

std::vector<std::string> OptimizerOptions::option_names() const {
  std::vector<std::string> names;
  for (auto& [name, values] : read_options(*this)) names.push_back(name);
  return names;
}

bool OptimizerOptions::has_option(const std::string& name) const {
  for (auto& item : read_options(*this))
    if (item.first == name) return true;
  return false;
}

std::vector<double> OptimizerOptions::get_option(const std::string& name) const {
  for (auto& item : read_options(*this))
    if (item.first == name) return item.second;
  throw KeyError(graft::detail::str("get_option: no option named '", name, "'"));
}

void OptimizerOptions::set_option(const std::string& name, const std::vector<double>& values) {
  OptionWriter w(name, values);
  visit(w);
  GRAFT_CHECK(w.found, KeyError, "set_option: no option named '", name, "'");
}

// ---- OptimizerParamGroup ----

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}
OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr),
      initial_lr_(other.initial_lr_) {}
OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    auto options = other.options_ ? other.options_->clone() : nullptr;
    params_ = other.params_;
    options_ = std::move(options);
    initial_lr_ = other.initial_lr_;
  }
  return *this;
}
OptimizerOptions& OptimizerParamGroup::options() {
  GRAFT_CHECK(options_, RuntimeError, "OptimizerParamGroup::options: the group has no options");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  GRAFT_CHECK(options_, RuntimeError, "OptimizerParamGroup::options: the group has no options");
  return *options_;
}

// ---- Optimizer ----

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  GRAFT_INTERNAL_ASSERT(defaults_ != nullptr, "optimizer without defaults");
  defaults_->validate();  // PyTorch checks the arguments before the parameter list
  GRAFT_CHECK(!param_groups.empty(), ValueError, "optimizer got an empty parameter list");
  for (const auto& g : param_groups) add_param_group(g);
}

Optimizer::~Optimizer() = default;

std::vector<OptimizerParamGroup> Optimizer::single_group(std::vector<Tensor> params) {
  std::vector<OptimizerParamGroup> groups;
  if (!params.empty()) groups.emplace_back(std::move(params));
  return groups;
}

bool Optimizer::same_options_type(const OptimizerOptions& options) const {
  return typeid(options) == typeid(*defaults_);
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  // Validate everything first: a rejected group leaves the optimizer as it was.
  if (param_group.has_options()) {
    GRAFT_CHECK(same_options_type(param_group.options()), TypeError,
                "add_param_group: the group's options are another optimizer's options type");
    param_group.options().validate();
  }
  std::unordered_set<const TensorImpl*> in_group;
  bool duplicates = false;
  for (const Tensor& p : param_group.params()) {
    GRAFT_CHECK(p.defined(), TypeError, "optimizer can only optimize Tensors, but one of the params is NoneType");
    GRAFT_CHECK(p.is_leaf() || p.retains_grad(), ValueError, "can't optimize a non-leaf Tensor");
    if (!in_group.insert(p.impl()).second) duplicates = true;
  }
  for (const auto& g : param_groups_)
    for (const Tensor& p : g.params())
      GRAFT_CHECK(!in_group.count(p.impl()), ValueError, "some parameters appear in more than one parameter group");
  if (duplicates)
    autograd::warn(
        "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; see "
        "github.com/pytorch/pytorch/issues/40967 for more information");
  OptimizerParamGroup group(param_group);
  if (!group.has_options()) group.set_options(defaults_->clone());
  param_groups_.push_back(std::move(group));
  on_param_group_added(param_groups_.back());
}

size_t Optimizer::size() const noexcept {
  size_t n = 0;
  for (const auto& g : param_groups_) n += g.params().size();
  return n;
}

const ParamState* Optimizer::find_state(const Tensor& param) const {
  if (!param.defined()) return nullptr;
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : param_groups_) {
    for (Tensor& p : g.params()) {
      if (!p.grad().defined()) continue;
      Tensor& grad = p.mutable_grad();
      if (set_to_none) {
        grad = Tensor();
        continue;
      }
      if (grad.grad_fn())
        grad.detach_();
      else
        grad.requires_grad_(false);
      grad.zero_();
    }
  }
}

void Optimizer::check_before_step() const {
  int64_t index = 0;
  for (const auto& g : param_groups_) {
    for (const Tensor& p : g.params()) {
      const Tensor& grad = p.grad();
      if (grad.defined()) {
        GRAFT_CHECK(grad.sizes().equals(p.sizes()), RuntimeError, name(), ".step: parameter ", index,
                    " has a gradient of shape ", grad.sizes(), " but the parameter's shape is ", p.sizes());
        GRAFT_CHECK(grad.dtype() == p.dtype(), TypeError, name(), ".step: parameter ", index, " (", p.dtype(),
                    ") has a gradient of dtype ", grad.dtype());
        GRAFT_CHECK(p.is_floating_point(), TypeError, name(), ".step: parameter ", index, " is not floating point (",
                    p.dtype(), ")");
        detail::check_writable(p);
      }
      ++index;
    }
  }
}

Tensor Optimizer::step(const LossClosure& closure) {
  lifetime::note_optimizer_step(this, false);  // a leak doctor's steps follow the optimizers'
  Tensor loss;
  if (closure) {
    EnableGradGuard enable_grad;
    loss = closure();
  }
  NoGradGuard no_grad;
  check_before_step();
  for (auto& g : param_groups_) update_group(g);
  if (lifetime::counting())  // the doctor's LD008: did this step use gradients carried over?
    for (auto& g : param_groups_)
      for (const Tensor& p : g.params()) autograd::note_leaf_stepped(p);
  lifetime::note_optimizer_step(this, true);
  return loss;
}

}  // namespace graft::optim

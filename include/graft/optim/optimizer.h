#pragma once
/// The optimizer base: parameter groups with their own options, zero_grad, step (with an
/// optional loss closure), per-parameter state and a flat state dict. Names follow libtorch's
/// torch::optim; behaviour follows PyTorch 2.x's torch.optim. See docs/optim.md.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "graft/core/ordered_dict.h"
#include "graft/core/tensor.h"

/// Declares an option `name` of type T with a chained setter `name(value)` returning *this and
/// a getter `name()` (libtorch's TORCH_ARG). Follow it with the default:
/// `GRAFT_OPTIM_ARG(double, lr) = 1e-3;`.
#define GRAFT_OPTIM_ARG(T, name) GRAFT_OPTIM_ARG_RETURNING(decltype(*this), *this, T, name)

/// GRAFT_OPTIM_ARG whose setter returns `self` of type Self.
#define GRAFT_OPTIM_ARG_RETURNING(Self, self, T, name)            \
 public:                                                          \
  inline auto name(const T& new_##name)->Self {                   \
    this->name##_ = new_##name;                                   \
    return self;                                                  \
  }                                                               \
  inline const T& name() const noexcept { return this->name##_; } \
  inline T& name() noexcept { return this->name##_; }             \
                                                                  \
 private:                                                         \
  T name##_

/// GRAFT_OPTIM_ARG for a CRTP base of options (template parameter `Derived`): the setter
/// returns the derived options, so that chaining keeps the derived type.
#define GRAFT_OPTIM_CRTP_ARG(T, name) GRAFT_OPTIM_ARG_RETURNING(Derived&, static_cast<Derived&>(*this), T, name)

namespace graft::optim {

/// Returns the loss; step(closure) evaluates it with grad mode enabled.
using LossClosure = std::function<Tensor()>;

/// Receives every option of an options object by its PyTorch param_groups name.
class OptionVisitor {
 public:
  virtual ~OptionVisitor() = default;
  /// A real-valued option ("lr", "momentum", ...).
  virtual void number(const char* name, double& value) = 0;
  /// A boolean option ("nesterov", "maximize", ...).
  virtual void flag(const char* name, bool& value) = 0;
  /// A pair of numbers ("betas").
  virtual void pair(const char* name, std::tuple<double, double>& value) = 0;
};

/// The hyper-parameters of one parameter group. Each optimizer has its own subclass
/// (SGDOptions, AdamOptions, ...) with chained setters.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  /// A copy of the same concrete type.
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  /// The learning rate (what LR schedulers read and write).
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  /// Visits every option in PyTorch's param_groups order; the visitor may change the values.
  virtual void visit(OptionVisitor& visitor) = 0;
  /// Throws ValueError with PyTorch's text when a value is out of range.
  virtual void validate() const = 0;

  /// Names of the options, in visit() order.
  std::vector<std::string> option_names() const;
  /// Whether an option called `name` exists.
  bool has_option(const std::string& name) const;
  /// The value(s) of option `name` (two for a pair, 0/1 for a flag); KeyError if missing.
  std::vector<double> get_option(const std::string& name) const;
  /// Sets option `name` from value(s) as get_option returns them; KeyError if missing,
  /// ValueError for a wrong count. Not validated: call validate() afterwards.
  void set_option(const std::string& name, const std::vector<double>& values);
};

/// Base for concrete options: clone() by copy, and the learning rate through Derived's lr().
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
};

/// The options every built-in optimizer has: lr, weight_decay and maximize (default false),
/// with chained setters returning Derived, as Derived's own options' setters do
/// (`SGDOptions(0.1).weight_decay(1e-4).momentum(0.9)`). Derived's constructor gives the
/// defaults of lr and weight_decay.
template <class Derived>
class OptimizerCommonOptions : public OptimizerCloneableOptions<Derived> {
 public:
  OptimizerCommonOptions(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}
  GRAFT_OPTIM_CRTP_ARG(double, lr);
  GRAFT_OPTIM_CRTP_ARG(double, weight_decay);
  GRAFT_OPTIM_CRTP_ARG(bool, maximize) = false;
};

/// A list of parameters optimized with the same options. A group built without options
/// takes a copy of the optimizer's defaults when it is added.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: implicit like libtorch
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) noexcept = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) noexcept = default;

  bool has_options() const { return options_ != nullptr; }
  /// The group's options (RuntimeError when it has none yet).
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  /// The learning rate an LR scheduler started from (PyTorch's group['initial_lr']); set by
  /// the first scheduler attached to the optimizer.
  const std::optional<double>& initial_lr() const { return initial_lr_; }
  void set_initial_lr(std::optional<double> lr) { initial_lr_ = lr; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

/// One parameter's state by PyTorch's names ("step", "exp_avg", "momentum_buffer", ...).
using ParamState = OrderedDict<std::string, Tensor>;

/// Base of every optimizer. Not copyable; holds the parameters (shared handles) and their state.
class Optimizer {
 public:
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;
  virtual ~Optimizer();

  /// The optimizer's name in messages ("SGD", "Adam", ...).
  virtual std::string name() const = 0;

  /// Appends a group (its options default to a copy of defaults()). ValueError for a
  /// non-leaf tensor or a parameter already in another group; TypeError for an undefined
  /// tensor or options of another optimizer; ValueError for invalid options.
  void add_param_group(const OptimizerParamGroup& param_group);
  /// Clears the gradients: set_to_none drops them; otherwise each is detached and zeroed in
  /// place (the same tensor stays).
  void zero_grad(bool set_to_none = true);
  /// One update of every parameter that has a gradient (others are skipped and get no state).
  /// With a closure, first evaluates it with grad mode enabled and returns its loss.
  Tensor step(const LossClosure& closure = nullptr);

  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  /// The options groups take when added without their own.
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  /// Which state names a parameter of a group with these options must have and may have.
  struct StateSchema {
    std::vector<std::string> required;
    std::vector<std::string> allowed;
  };
  /// Number of parameters over all groups.
  size_t size() const noexcept;

  /// Per-parameter state, keyed by the parameter's TensorImpl.
  std::unordered_map<const TensorImpl*, ParamState>& state() noexcept { return state_; }
  const std::unordered_map<const TensorImpl*, ParamState>& state() const noexcept { return state_; }
  /// The state of `param`, or nullptr when it has none (no step taken with a gradient yet).
  const ParamState* find_state(const Tensor& param) const;

  /// PyTorch's nested state dict, flattened: "state.<i>.<name>" (i numbers the parameters
  /// over all groups in order; the live state tensors, not copies), "param_groups.<g>.<option>"
  /// (0-d float64; flags 0/1; pairs as 1-D of 2), "param_groups.<g>.initial_lr" when a
  /// scheduler set it, "param_groups.<g>.params" (1-D int64 of the indices).
  StateDict state_dict() const;
  /// Loads a state dict made by state_dict(): checks every entry first (group count and sizes
  /// with PyTorch's messages, keys, dtypes, shapes, option values), then replaces options and
  /// state. Loaded state is copied and cast to each parameter's dtype ("step" keeps its dtype).
  /// A failed load changes nothing.
  void load_state_dict(const StateDict& state_dict);

 protected:
  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  /// `params` as one group (none when empty, so the constructor reports the empty list).
  static std::vector<OptimizerParamGroup> single_group(std::vector<Tensor> params);

  virtual StateSchema state_schema(const OptimizerOptions& options) const = 0;
  /// Updates every parameter of `group` that has a gradient (under NoGradGuard).
  virtual void update_group(OptimizerParamGroup& group) = 0;
  /// Called for each group added after construction (Adagrad creates its state here).
  virtual void on_param_group_added(OptimizerParamGroup& group) { (void)group; }
  /// Whether `options` is of this optimizer's options type.
  bool same_options_type(const OptimizerOptions& options) const;
  /// The state of `param`, created empty if missing.
  ParamState& state_for(const Tensor& param) { return state_[param.impl()]; }

 private:
  void check_before_step() const;

  std::vector<OptimizerParamGroup> param_groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

/// An optimizer whose parameter groups hold `Options`, with the two constructors every
/// built-in optimizer has: from parameter groups, or from one list of parameters, each with
/// the default options.
template <class Options>
class OptimizerWithOptions : public Optimizer {
 public:
  explicit OptimizerWithOptions(std::vector<OptimizerParamGroup> param_groups, Options defaults = {})
      : Optimizer(std::move(param_groups), std::make_unique<Options>(defaults)) {}
  explicit OptimizerWithOptions(std::vector<Tensor> params, Options defaults = {})
      : OptimizerWithOptions(single_group(std::move(params)), defaults) {}
};

}  // namespace graft::optim

// Optimizer state dicts: PyTorch's layout flattened, round trips that continue bit-identically,
// copies on load, dtype casts, and loads that fail without changing anything.
#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;
using namespace graft::optim;

namespace {

// Every entry of the optimizer's state dict, bitwise.
bool same_state(const StateDict& a, const StateDict& b) {
  if (a.keys() != b.keys()) return false;
  for (const auto& item : a)
    if (!bitwise_equal(item.value(), b[item.key()])) return false;
  return true;
}

// A copy of a state dict's tensors (the optimizer's state_dict holds the live state).
StateDict deep_copy(const StateDict& sd) {
  StateDict out;
  for (const auto& item : sd) out.insert(item.key(), item.value().clone());
  return out;
}

void set_grads(std::vector<Tensor>& params, int t) {
  for (size_t k = 0; k < params.size(); ++k)
    params[k].set_grad(
        tensor(grad_values(t, static_cast<int>(k), static_cast<size_t>(params[k].numel()))).view(params[k].sizes()));
}

std::vector<Tensor> fresh_params() {
  return {tensor(param_values(0, 4)).requires_grad_(),
          tensor(param_values(1, 6)).view({2, 3}).detach().requires_grad_(),
          tensor(param_values(2, 3)).requires_grad_()};
}

std::vector<Tensor> clones(const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  for (const Tensor& p : params) out.push_back(p.detach().clone().requires_grad_());
  return out;
}

// Two groups: {p0, p1} with the defaults, {p2} with its own options.
template <class Opt, class Options>
std::unique_ptr<Opt> two_groups(const std::vector<Tensor>& p, Options defaults, Options second) {
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{p[0], p[1]});
  groups.emplace_back(std::vector<Tensor>{p[2]}, std::make_unique<Options>(second));
  return std::make_unique<Opt>(std::move(groups), defaults);
}

}  // namespace

TEST(OptimizerStateDict, LayoutIsPyTorchsFlattened) {
  auto p = fresh_params();
  auto opt = two_groups<Adam>(p, AdamOptions(0.1).amsgrad(true), AdamOptions(0.01).betas({0.8, 0.9}));
  set_grads(p, 1);
  p[1].mutable_grad() = Tensor();  // p1 has no gradient: no state
  opt->step();
  const StateDict sd = opt->state_dict();
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"state.0.step",
                                                 "state.0.exp_avg",
                                                 "state.0.exp_avg_sq",
                                                 "state.0.max_exp_avg_sq",
                                                 "state.2.step",
                                                 "state.2.exp_avg",
                                                 "state.2.exp_avg_sq",
                                                 "param_groups.0.lr",
                                                 "param_groups.0.betas",
                                                 "param_groups.0.eps",
                                                 "param_groups.0.weight_decay",
                                                 "param_groups.0.amsgrad",
                                                 "param_groups.0.maximize",
                                                 "param_groups.0.params",
                                                 "param_groups.1.lr",
                                                 "param_groups.1.betas",
                                                 "param_groups.1.eps",
                                                 "param_groups.1.weight_decay",
                                                 "param_groups.1.amsgrad",
                                                 "param_groups.1.maximize",
                                                 "param_groups.1.params"}));
  // State entries are the live state tensors, as PyTorch's state_dict returns references.
  EXPECT_TRUE(sd["state.0.exp_avg"].is_same(*opt->find_state(p[0])->find("exp_avg")));
  EXPECT_EQ(sd["state.0.step"].dtype(), kFloat32);
  EXPECT_EQ(sd["state.0.step"].dim(), 0);
  for (const char* k : {"param_groups.0.lr", "param_groups.0.amsgrad", "param_groups.1.maximize"}) {
    EXPECT_EQ(sd[k].dtype(), kFloat64) << k;
    EXPECT_EQ(sd[k].dim(), 0) << k;
  }
  EXPECT_EQ(sd["param_groups.0.lr"].item<double>(), 0.1);
  EXPECT_EQ(sd["param_groups.0.amsgrad"].item<double>(), 1.0);
  EXPECT_EQ(sd["param_groups.1.amsgrad"].item<double>(), 0.0);
  EXPECT_EQ(sd["param_groups.1.betas"].to_vector<double>(), (std::vector<double>{0.8, 0.9}));
  EXPECT_EQ(sd["param_groups.0.params"].dtype(), kInt64);
  EXPECT_EQ(sd["param_groups.0.params"].to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(sd["param_groups.1.params"].to_vector<int64_t>(), (std::vector<int64_t>{2}));
}

TEST(OptimizerStateDict, SchedulerInitialLrIsSavedAndLoaded) {
  auto p = fresh_params();
  SGD a({p[0]}, SGDOptions(0.5));
  StepLR sched(a, 2);
  const StateDict sd = a.state_dict();
  ASSERT_TRUE(sd.contains("param_groups.0.initial_lr"));
  EXPECT_EQ(sd["param_groups.0.initial_lr"].item<double>(), 0.5);
  SGD b({p[1]}, SGDOptions(0.1));
  EXPECT_FALSE(b.param_groups()[0].initial_lr().has_value());
  b.load_state_dict(sd);
  EXPECT_EQ(b.param_groups()[0].initial_lr(), std::optional<double>(0.5));
  EXPECT_EQ(b.param_groups()[0].options().get_lr(), 0.5);
}

namespace {

// Trains `steps` steps, saves, loads into a fresh optimizer over copies of the parameters,
// then trains both further: every parameter and state entry must match bitwise, and match an
// uninterrupted run.
template <class Opt, class Options>
void check_round_trip(Options defaults, Options second) {
  auto p = fresh_params();
  auto uninterrupted = clones(p);
  auto a = two_groups<Opt>(p, defaults, second);
  auto c = two_groups<Opt>(uninterrupted, defaults, second);
  for (int t = 1; t <= 3; ++t) {
    set_grads(p, t);
    set_grads(uninterrupted, t);
    a->step();
    c->step();
  }
  const StateDict saved = deep_copy(a->state_dict());
  a.reset();  // the original optimizer is gone: only the state dict carries on
  auto resumed = clones(p);
  auto b = two_groups<Opt>(resumed, Options(0.5), Options(0.25));  // different options: the load replaces them
  b->load_state_dict(saved);
  EXPECT_TRUE(same_state(b->state_dict(), saved));
  for (int t = 4; t <= 7; ++t) {
    set_grads(resumed, t);
    set_grads(uninterrupted, t);
    b->step();
    c->step();
    for (size_t k = 0; k < p.size(); ++k)
      ASSERT_TRUE(bitwise_equal(resumed[k], uninterrupted[k])) << "param " << k << " at step " << t;
  }
  EXPECT_TRUE(same_state(b->state_dict(), c->state_dict()));
}

}  // namespace

TEST(OptimizerStateDict, RoundTripContinuesBitIdentically) {
  check_round_trip<SGD>(SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(0.01),
                        SGDOptions(0.05).momentum(0.5).dampening(0.2));
  check_round_trip<Adam>(AdamOptions(0.1).amsgrad(true).weight_decay(0.01), AdamOptions(0.03).betas({0.8, 0.95}));
  check_round_trip<AdamW>(AdamWOptions(0.1), AdamWOptions(0.02).maximize(true));
  check_round_trip<RMSprop>(RMSpropOptions(0.01).momentum(0.9).centered(true),
                            RMSpropOptions(0.02).alpha(0.9).weight_decay(0.1));
  check_round_trip<Adagrad>(AdagradOptions(0.1).lr_decay(0.1), AdagradOptions(0.2).initial_accumulator_value(0.1));
}

TEST(OptimizerStateDict, LoadCopiesAndCastsToTheParameterDtype) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());  // float32
  Adam opt({w});
  StateDict sd;
  sd.insert("state.7.step", scalar_tensor(4.0, kFloat64));
  sd.insert("state.7.exp_avg", tensor({0.5, 0.25}, kFloat64));
  sd.insert("state.7.exp_avg_sq", tensor({0.125, 1.0}, kFloat64));
  sd.insert("param_groups.0.lr", scalar_tensor(0.01, kFloat64));
  sd.insert("param_groups.0.betas", tensor({0.5, 0.75}, kFloat64));
  sd.insert("param_groups.0.eps", scalar_tensor(1e-6, kFloat64));
  sd.insert("param_groups.0.weight_decay", scalar_tensor(0.0, kFloat64));
  sd.insert("param_groups.0.amsgrad", scalar_tensor(0.0, kFloat64));
  sd.insert("param_groups.0.maximize", scalar_tensor(1.0, kFloat64));
  sd.insert("param_groups.0.params", tensor(std::vector<int64_t>{7}));  // saved numbers map by position
  opt.load_state_dict(sd);
  const ParamState& st = *opt.find_state(w);
  EXPECT_EQ(st.find("exp_avg")->dtype(), kFloat32);  // cast to the parameter's dtype
  EXPECT_EQ(st.find("step")->dtype(), kFloat64);     // step keeps its dtype
  EXPECT_FALSE(st.find("exp_avg")->is_same(sd["state.7.exp_avg"]));
  sd["state.7.exp_avg"].fill_(100.0);  // the loaded state is a copy
  sd["state.7.step"].fill_(100.0);
  graft::testing::expect_tensor(*st.find("exp_avg"), {2}, {0.5, 0.25});
  EXPECT_EQ(st.find("step")->item<double>(), 4.0);
  EXPECT_EQ(memory_category(*st.find("exp_avg")), MemoryCategory::OptimizerState);
  const auto& o = static_cast<const AdamOptions&>(opt.param_groups()[0].options());
  EXPECT_EQ(o.lr(), 0.01);
  EXPECT_EQ(o.betas(), std::make_tuple(0.5, 0.75));
  EXPECT_EQ(o.eps(), 1e-6);
  EXPECT_TRUE(o.maximize());
  EXPECT_FALSE(o.amsgrad());
  // And the step continues from the loaded state (t = 5).
  w.set_grad(tensor({1.0, -1.0}));
  opt.step();
  EXPECT_EQ(st.find("step")->item<double>(), 5.0);
}

TEST(OptimizerStateDict, FailedLoadsChangeNothing) {
  auto p = fresh_params();
  auto opt = two_groups<Adam>(p, AdamOptions(0.1).amsgrad(true), AdamOptions(0.01));
  set_grads(p, 1);
  opt->step();
  const StateDict good = deep_copy(opt->state_dict());
  // The target: a second optimizer with its own, different state.
  auto q = clones(p);
  auto target = two_groups<Adam>(q, AdamOptions(0.3), AdamOptions(0.2).betas({0.5, 0.6}));
  set_grads(q, 2);
  target->step();
  const StateDict before = deep_copy(target->state_dict());
  const std::vector<Tensor> params_before = clones(q);

  struct Bad {
    std::function<void(StateDict&)> edit;
    std::string type;  // which error
    std::string message;
  };
  const std::vector<Bad> cases = {
      {[](StateDict& sd) {
         for (const std::string k : {"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "params"})
           sd.erase("param_groups.1." + k);
       },
       "ValueError", "loaded state dict has a different number of parameter groups"},
      {[](StateDict& sd) { sd.insert("param_groups.2.params", tensor(std::vector<int64_t>{9})); }, "ValueError",
       "loaded state dict has a different number of parameter groups"},
      {[](StateDict& sd) { sd["param_groups.0.params"] = tensor(std::vector<int64_t>{0}); }, "ValueError",
       "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"},
      // The second group is bad: the first group's options must not have been applied.
      {[](StateDict& sd) { sd["param_groups.1.lr"] = scalar_tensor(0.5, kFloat32); }, "TypeError",
       "load_state_dict: 'param_groups.1.lr' has dtype graft.float32, expected graft.float64"},
      {[](StateDict& sd) { sd.erase("param_groups.1.eps"); }, "KeyError",
       "load_state_dict: missing key 'param_groups.1.eps'"},
      {[](StateDict& sd) { sd.insert("param_groups.1.momentum", scalar_tensor(0.9, kFloat64)); }, "KeyError",
       "load_state_dict: unexpected key 'param_groups.1.momentum' (Adam has no option 'momentum')"},
      {[](StateDict& sd) { sd["param_groups.1.betas"] = scalar_tensor(0.9, kFloat64); }, "ValueError",
       "load_state_dict: 'param_groups.1.betas' has shape [], expected a 1-D tensor of 2 values"},
      {[](StateDict& sd) { sd["param_groups.1.amsgrad"] = scalar_tensor(2.0, kFloat64); }, "ValueError",
       "load_state_dict: 'param_groups.1.amsgrad' is a flag and must be 0 or 1, got 2"},
      {[](StateDict& sd) { sd["param_groups.1.lr"] = scalar_tensor(-1.0, kFloat64); }, "ValueError",
       "Invalid learning rate: -1.0"},
      {[](StateDict& sd) { sd["param_groups.1.params"] = tensor({2.0}, kFloat64); }, "TypeError",
       "load_state_dict: 'param_groups.1.params' has dtype graft.float64, expected graft.int64"},
      {[](StateDict& sd) { sd["state.2.exp_avg"] = zeros({4}); }, "ValueError",
       "load_state_dict: 'state.2.exp_avg' has shape [4] but its parameter has shape [3]"},
      {[](StateDict& sd) { sd["state.2.exp_avg_sq"] = zeros({3}, kInt64); }, "TypeError",
       "load_state_dict: 'state.2.exp_avg_sq' has dtype graft.int64, expected a floating point dtype"},
      {[](StateDict& sd) { sd["state.1.step"] = zeros({1}); }, "ValueError",
       "load_state_dict: 'state.1.step' has shape [1], expected a 0-d tensor"},
      {[](StateDict& sd) { sd.insert("state.2.momentum_buffer", zeros({3})); }, "KeyError",
       "load_state_dict: unexpected key 'state.2.momentum_buffer' (Adam keeps no state called 'momentum_buffer')"},
      {[](StateDict& sd) { sd.erase("state.1.max_exp_avg_sq"); }, "KeyError",
       "load_state_dict: missing key 'state.1.max_exp_avg_sq'"},  // group 0 has amsgrad
      {[](StateDict& sd) { sd.insert("state.5.step", zeros({})); }, "ValueError",
       "load_state_dict: 'state.5' belongs to no parameter of the loaded param_groups"},
      {[](StateDict& sd) { sd.insert("optimizer.lr", zeros({})); }, "KeyError",
       "load_state_dict: unexpected key 'optimizer.lr' (expected 'state.<i>.<name>' or 'param_groups.<g>.<option>')"},
      {[](StateDict& sd) { sd.insert("state.x.step", zeros({})); }, "KeyError",
       "load_state_dict: unexpected key 'state.x.step' (expected 'state.<i>.<name>' or 'param_groups.<g>.<option>')"},
  };
  for (const auto& c : cases) {
    StateDict bad = deep_copy(good);
    c.edit(bad);
    std::string type, what;
    try {
      target->load_state_dict(bad);
    } catch (const ValueError& e) {
      type = "ValueError", what = e.what();
    } catch (const TypeError& e) {
      type = "TypeError", what = e.what();
    } catch (const KeyError& e) {
      type = "KeyError", what = e.what();
    }
    EXPECT_EQ(type, c.type) << c.message;
    EXPECT_EQ(what, c.message);
    EXPECT_TRUE(same_state(target->state_dict(), before)) << "changed by: " << c.message;
    for (size_t k = 0; k < q.size(); ++k) EXPECT_TRUE(bitwise_equal(q[k], params_before[k]));
  }
  // The good one loads.
  target->load_state_dict(good);
  EXPECT_TRUE(same_state(target->state_dict(), good));
}

TEST(OptimizerStateDict, LoadReplacesTheWholeState) {
  Tensor a = tensor({1.0}, requires_grad()), b = tensor({2.0}, requires_grad());
  SGD saved_from({a, b}, SGDOptions(0.1).momentum(0.9));
  a.set_grad(tensor({1.0}));
  saved_from.step();  // state for a only
  const StateDict sd = saved_from.state_dict();
  SGD target({a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()}, SGDOptions(0.1).momentum(0.9));
  target.param_groups()[0].params()[1].set_grad(tensor({1.0}));
  target.step();  // state for b only
  target.load_state_dict(sd);
  EXPECT_NE(target.find_state(target.param_groups()[0].params()[0]), nullptr);
  EXPECT_EQ(target.find_state(target.param_groups()[0].params()[1]), nullptr);
}

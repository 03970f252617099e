// The optimizer base: construction checks with PyTorch's messages, parameter groups,
// zero_grad, step with a closure, skipping parameters without gradient, version counters,
// memory categories, options by name and the documented defaults.
#include <type_traits>
#include <utility>

#include "optim_test_util.h"

using namespace graft;
using namespace graft::optim_test;
using namespace graft::optim;

// ---- construction checks ----

TEST(OptimizerChecks, EmptyParameterList) {
  EXPECT_THROW_MSG(SGD(std::vector<Tensor>{}), ValueError, "optimizer got an empty parameter list");
  EXPECT_THROW_MSG(Adam(std::vector<OptimizerParamGroup>{}), ValueError, "optimizer got an empty parameter list");
  // Like PyTorch, a list with an empty group is not an empty list.
  EXPECT_NO_THROW(SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::vector<Tensor>{})}));
}

TEST(OptimizerChecks, NonLeafAndUndefinedTensors) {
  Tensor a = ones({2}, requires_grad());
  Tensor b = a * 2;
  EXPECT_THROW_MSG(SGD({b}), ValueError, "can't optimize a non-leaf Tensor");
  EXPECT_THROW_MSG(Adam({a, Tensor()}), TypeError,
                   "optimizer can only optimize Tensors, but one of the params is NoneType");
  b.retain_grad();  // PyTorch accepts a non-leaf that retains its grad
  EXPECT_NO_THROW(SGD({b}));
}

TEST(OptimizerChecks, ParameterInTwoGroups) {
  Tensor a = ones({2}, requires_grad()), b = ones({3}, requires_grad());
  EXPECT_THROW_MSG(SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup({a, b}), OptimizerParamGroup({b})}),
                   ValueError, "some parameters appear in more than one parameter group");
  SGD opt({a});
  EXPECT_THROW_MSG(opt.add_param_group(OptimizerParamGroup({b, a})), ValueError,
                   "some parameters appear in more than one parameter group");
  EXPECT_EQ(opt.param_groups().size(), 1u);  // rejected: nothing added
}

TEST(OptimizerChecks, DuplicateInOneGroupWarnsAsPyTorch) {
  Tensor a = ones({2}, requires_grad());
  graft::testing::WarningCapture warnings;
  SGD opt({a, a});
  ASSERT_EQ(warnings.messages().size(), 1u);
  EXPECT_EQ(warnings.messages()[0],
            "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error; "
            "see github.com/pytorch/pytorch/issues/40967 for more information");
}

TEST(OptimizerChecks, SGDArguments) {
  Tensor w = ones({2}, requires_grad());
  EXPECT_THROW_MSG(SGD({w}, SGDOptions(-1)), ValueError, "Invalid learning rate: -1.0");
  EXPECT_THROW_MSG(SGD({w}, SGDOptions(0.1).momentum(-0.5)), ValueError, "Invalid momentum value: -0.5");
  EXPECT_THROW_MSG(SGD({w}, SGDOptions(0.1).weight_decay(-1e-5)), ValueError, "Invalid weight_decay value: -1e-05");
  EXPECT_THROW_MSG(SGD({w}, SGDOptions(0.1).nesterov(true)), ValueError,
                   "Nesterov momentum requires a momentum and zero dampening");
  EXPECT_THROW_MSG(SGD({w}, SGDOptions(0.1).nesterov(true).momentum(0.9).dampening(0.1)), ValueError,
                   "Nesterov momentum requires a momentum and zero dampening");
  // Arguments are checked before the parameter list, as in PyTorch.
  EXPECT_THROW_MSG(SGD(std::vector<Tensor>{}, SGDOptions(-1)), ValueError, "Invalid learning rate: -1.0");
}

TEST(OptimizerChecks, NumbersPrintAsPythonFloats) {
  Tensor w = ones({2}, requires_grad());
  const std::pair<double, const char*> cases[] = {{-0.001, "-0.001"},
                                                  {-1e-4, "-0.0001"},
                                                  {-1e-5, "-1e-05"},
                                                  {-123.456, "-123.456"},
                                                  {-1e15, "-1000000000000000.0"},
                                                  {-1e16, "-1e+16"},
                                                  {-2.5e-300, "-2.5e-300"},
                                                  {-0.1 - 0.2, "-0.30000000000000004"},
                                                  {-std::numeric_limits<double>::infinity(), "-inf"}};
  for (const auto& [value, text] : cases)
    EXPECT_THROW_MSG(SGD({w}, SGDOptions(value)), ValueError, std::string("Invalid learning rate: ") + text);
}

TEST(OptimizerChecks, AdamArguments) {
  Tensor w = ones({2}, requires_grad());
  EXPECT_THROW_MSG(Adam({w}, AdamOptions(-1)), ValueError, "Invalid learning rate: -1.0");
  EXPECT_THROW_MSG(Adam({w}, AdamOptions().eps(-1)), ValueError, "Invalid epsilon value: -1.0");
  EXPECT_THROW_MSG(Adam({w}, AdamOptions().betas({1.0, 0.999})), ValueError, "Invalid beta parameter at index 0: 1.0");
  EXPECT_THROW_MSG(Adam({w}, AdamOptions().betas({-0.1, 0.999})), ValueError,
                   "Invalid beta parameter at index 0: -0.1");
  EXPECT_THROW_MSG(Adam({w}, AdamOptions().betas({0.9, 1.5})), ValueError, "Invalid beta parameter at index 1: 1.5");
  EXPECT_THROW_MSG(Adam({w}, AdamOptions().weight_decay(-0.01)), ValueError, "Invalid weight_decay value: -0.01");
  EXPECT_THROW_MSG(AdamW({w}, AdamWOptions().betas({0.9, 1.0})), ValueError, "Invalid beta parameter at index 1: 1.0");
  EXPECT_THROW_MSG(AdamW({w}, AdamWOptions(-0.5)), ValueError, "Invalid learning rate: -0.5");
}

TEST(OptimizerChecks, RMSpropAndAdagradArguments) {
  Tensor w = ones({2}, requires_grad());
  EXPECT_THROW_MSG(RMSprop({w}, RMSpropOptions(-0.1)), ValueError, "Invalid learning rate: -0.1");
  EXPECT_THROW_MSG(RMSprop({w}, RMSpropOptions().eps(-1e-8)), ValueError, "Invalid epsilon value: -1e-08");
  EXPECT_THROW_MSG(RMSprop({w}, RMSpropOptions().momentum(-1)), ValueError, "Invalid momentum value: -1.0");
  EXPECT_THROW_MSG(RMSprop({w}, RMSpropOptions().weight_decay(-2)), ValueError, "Invalid weight_decay value: -2.0");
  EXPECT_THROW_MSG(RMSprop({w}, RMSpropOptions().alpha(-0.5)), ValueError, "Invalid alpha value: -0.5");
  EXPECT_THROW_MSG(Adagrad({w}, AdagradOptions(-1)), ValueError, "Invalid learning rate: -1.0");
  EXPECT_THROW_MSG(Adagrad({w}, AdagradOptions().lr_decay(-1)), ValueError, "Invalid lr_decay value: -1.0");
  EXPECT_THROW_MSG(Adagrad({w}, AdagradOptions().weight_decay(-1)), ValueError, "Invalid weight_decay value: -1.0");
  EXPECT_THROW_MSG(Adagrad({w}, AdagradOptions().initial_accumulator_value(-0.5)), ValueError,
                   "Invalid initial_accumulator_value value: -0.5");
  EXPECT_THROW_MSG(Adagrad({w}, AdagradOptions().eps(-1e-10)), ValueError, "Invalid epsilon value: -1e-10");
}

TEST(OptimizerChecks, GroupOptionsAreCheckedAndTyped) {
  Tensor a = ones({2}, requires_grad()), b = ones({2}, requires_grad());
  SGD opt({a}, SGDOptions(0.1));
  EXPECT_THROW_MSG(opt.add_param_group(OptimizerParamGroup({b}, std::make_unique<SGDOptions>(SGDOptions(-2)))),
                   ValueError, "Invalid learning rate: -2.0");
  EXPECT_THROW_HAS(opt.add_param_group(OptimizerParamGroup({b}, std::make_unique<AdamOptions>())), TypeError,
                   "another optimizer's options type");
  EXPECT_EQ(opt.param_groups().size(), 1u);
  EXPECT_EQ(opt.size(), 1u);
}

TEST(OptimizerChecks, DefaultsAreDocumentedOnes) {
  EXPECT_EQ(SGDOptions().lr(), 1e-3);
  EXPECT_EQ(SGDOptions().momentum(), 0);
  EXPECT_EQ(SGDOptions().dampening(), 0);
  EXPECT_EQ(SGDOptions().weight_decay(), 0);
  EXPECT_FALSE(SGDOptions().nesterov());
  EXPECT_FALSE(SGDOptions().maximize());
  EXPECT_EQ(AdamOptions().lr(), 1e-3);
  EXPECT_EQ(AdamOptions().betas(), std::make_tuple(0.9, 0.999));
  EXPECT_EQ(AdamOptions().eps(), 1e-8);
  EXPECT_EQ(AdamOptions().weight_decay(), 0);
  EXPECT_FALSE(AdamOptions().amsgrad());
  EXPECT_EQ(AdamWOptions().lr(), 1e-3);
  EXPECT_EQ(AdamWOptions().weight_decay(), 1e-2);
  EXPECT_EQ(AdamWOptions().betas(), std::make_tuple(0.9, 0.999));
  EXPECT_EQ(AdamWOptions().eps(), 1e-8);
  EXPECT_EQ(RMSpropOptions().lr(), 1e-2);
  EXPECT_EQ(RMSpropOptions().alpha(), 0.99);
  EXPECT_EQ(RMSpropOptions().eps(), 1e-8);
  EXPECT_EQ(RMSpropOptions().momentum(), 0);
  EXPECT_FALSE(RMSpropOptions().centered());
  EXPECT_EQ(AdagradOptions().lr(), 1e-2);
  EXPECT_EQ(AdagradOptions().lr_decay(), 0);
  EXPECT_EQ(AdagradOptions().initial_accumulator_value(), 0);
  EXPECT_EQ(AdagradOptions().eps(), 1e-10);
}

// lr, weight_decay and maximize are declared once (OptimizerCommonOptions); their setters
// return the concrete options, so they chain with each optimizer's own setters either way round.
template <class Options>
void expect_common_setters_chain() {
  Options o;
  static_assert(std::is_same_v<decltype(o.lr(0.5)), Options&>);
  static_assert(std::is_same_v<decltype(o.weight_decay(0.5)), Options&>);
  static_assert(std::is_same_v<decltype(o.maximize(true)), Options&>);
  static_assert(std::is_same_v<decltype(std::as_const(o).lr()), const double&>);
  static_assert(std::is_same_v<decltype(o.lr()), double&>);
  EXPECT_EQ(&o.lr(0.25).weight_decay(0.125).maximize(true), &o);
  EXPECT_EQ(o.lr(), 0.25);
  EXPECT_EQ(o.weight_decay(), 0.125);
  EXPECT_TRUE(o.maximize());
  EXPECT_EQ(o.get_lr(), 0.25);
  o.set_lr(0.75);
  EXPECT_EQ(o.lr(), 0.75);
  o.lr() = 0.5;  // the non-const getter gives the value itself, as libtorch's
  EXPECT_EQ(o.get_option("lr"), std::vector<double>{0.5});
  EXPECT_EQ(static_cast<Options&>(*o.clone()).weight_decay(), 0.125);
}

TEST(OptimizerOptions, CommonSettersChainWithTheConcreteType) {
  expect_common_setters_chain<SGDOptions>();
  expect_common_setters_chain<AdamOptions>();
  expect_common_setters_chain<AdamWOptions>();
  expect_common_setters_chain<RMSpropOptions>();
  expect_common_setters_chain<AdagradOptions>();
  const SGDOptions sgd = SGDOptions(0.1).weight_decay(0.2).momentum(0.9).maximize(true).nesterov(true);
  EXPECT_EQ(sgd.lr(), 0.1);
  EXPECT_EQ(sgd.weight_decay(), 0.2);
  EXPECT_EQ(sgd.momentum(), 0.9);
  EXPECT_TRUE(sgd.maximize() && sgd.nesterov());
  const AdamWOptions adamw = AdamWOptions(0.1).maximize(true).amsgrad(true).weight_decay(0.0).eps(1e-6);
  EXPECT_EQ(adamw.weight_decay(), 0.0);
  EXPECT_TRUE(adamw.maximize() && adamw.amsgrad());
  EXPECT_EQ(adamw.eps(), 1e-6);
}

TEST(OptimizerOptions, ByNameInPyTorchsOrder) {
  EXPECT_EQ(SGDOptions().option_names(),
            (std::vector<std::string>{"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"}));
  EXPECT_EQ(AdamOptions().option_names(),
            (std::vector<std::string>{"lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"}));
  EXPECT_EQ(RMSpropOptions().option_names(),
            (std::vector<std::string>{"lr", "momentum", "alpha", "eps", "centered", "weight_decay", "maximize"}));
  EXPECT_EQ(AdagradOptions().option_names(), (std::vector<std::string>{"lr", "lr_decay", "eps", "weight_decay",
                                                                       "initial_accumulator_value", "maximize"}));
  AdamOptions o(0.5);
  EXPECT_EQ(o.get_option("betas"), (std::vector<double>{0.9, 0.999}));
  o.set_option("betas", {0.5, 0.6});
  o.set_option("amsgrad", {1});
  EXPECT_EQ(o.betas(), std::make_tuple(0.5, 0.6));
  EXPECT_TRUE(o.amsgrad());
  EXPECT_THROW_MSG(o.get_option("momentum"), KeyError, "get_option: no option named 'momentum'");
  EXPECT_THROW_MSG(o.set_option("betas", {0.5}), ValueError, "set_option: option 'betas' takes 2 values, got 1");
  EXPECT_TRUE(o.has_option("eps"));
  EXPECT_FALSE(o.has_option("momentum"));
}

// ---- parameter groups ----

TEST(ParamGroups, EachGroupUsesItsOwnOptions) {
  Tensor a = tensor({1.0, 1.0}, requires_grad()), b = tensor({1.0}, requires_grad()),
         c = tensor({1.0}, requires_grad());
  std::vector<OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<SGDOptions>(SGDOptions(0.01)));
  SGD opt(std::move(groups), SGDOptions(0.1).momentum(0.5));
  opt.add_param_group(OptimizerParamGroup({c}));  // takes the defaults
  ASSERT_EQ(opt.param_groups().size(), 3u);
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_EQ(opt.param_groups()[1].options().get_lr(), 0.01);
  EXPECT_EQ(static_cast<SGDOptions&>(opt.param_groups()[1].options()).momentum(), 0);  // its own, full options
  EXPECT_EQ(static_cast<SGDOptions&>(opt.param_groups()[2].options()).momentum(), 0.5);
  for (int step = 0; step < 2; ++step) {
    a.set_grad(tensor({1.0, 2.0}));
    b.set_grad(tensor({1.0}));
    c.set_grad(tensor({1.0}));
    opt.step();
  }
  // a, c: lr 0.1 with momentum 0.5: buf 1 then 1.5 (times g) -> p = 1 - 0.1 * g * 2.5
  graft::testing::expect_tensor(a, {2}, {0.75, 0.5});
  graft::testing::expect_tensor(c, {1}, {0.75});
  // b: lr 0.01, no momentum
  graft::testing::expect_tensor(b, {1}, {0.98});
  // Changing a group's lr affects only that group.
  opt.param_groups()[1].options().set_lr(0.5);
  b.set_grad(tensor({1.0}));
  a.mutable_grad() = Tensor();
  c.mutable_grad() = Tensor();
  opt.step();
  graft::testing::expect_tensor(b, {1}, {0.48});
  graft::testing::expect_tensor(a, {2}, {0.75, 0.5});
}

TEST(ParamGroups, CopiesOwnTheirOptions) {
  OptimizerParamGroup g({ones({1})}, std::make_unique<SGDOptions>(SGDOptions(0.3)));
  OptimizerParamGroup h = g;
  h.options().set_lr(0.7);
  EXPECT_EQ(g.options().get_lr(), 0.3);
  EXPECT_EQ(h.options().get_lr(), 0.7);
  OptimizerParamGroup none({ones({1})});
  EXPECT_FALSE(none.has_options());
  EXPECT_THROW_HAS(none.options(), RuntimeError, "has no options");
}

// ---- zero_grad ----

TEST(ZeroGrad, SetToNoneDropsTheGradient) {
  Tensor w = ones({3}, requires_grad());
  Tensor v = ones({2}, requires_grad());
  SGD opt({w, v});
  (w * 2).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  opt.zero_grad();  // set_to_none defaults to true
  EXPECT_FALSE(w.grad().defined());
  EXPECT_FALSE(v.grad().defined());  // had none: stays none
  (w * 3).sum().backward();          // a fresh gradient, not accumulated onto the old one
  graft::testing::expect_tensor(w.grad(), {3}, {3, 3, 3});
}

TEST(ZeroGrad, KeepsTheSameTensorZeroedAndDetached) {
  Tensor w = ones({3}, requires_grad());
  SGD opt({w});
  (w * 2).sum().backward();
  Tensor before = w.grad();
  void* data = before.data_ptr();
  const uint32_t version = before._version();
  opt.zero_grad(false);
  EXPECT_TRUE(w.grad().is_same(before));
  EXPECT_EQ(w.grad().data_ptr(), data);
  EXPECT_GT(w.grad()._version(), version);  // zeroed in place
  graft::testing::expect_tensor(w.grad(), {3}, {0, 0, 0});
  (w * 3).sum().backward();  // accumulates into the same tensor
  EXPECT_TRUE(w.grad().is_same(before));
  graft::testing::expect_tensor(w.grad(), {3}, {3, 3, 3});
}

TEST(ZeroGrad, DetachesAGradientThatHasHistory) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  SGD opt({w});
  graft::testing::WarningCapture warnings;  // PyTorch's create_graph reference-cycle warning
  (w * w).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  EXPECT_EQ(warnings.messages().size(), 1u);
  ASSERT_TRUE(w.grad().requires_grad());
  ASSERT_TRUE(w.grad().grad_fn());
  Tensor g = w.grad();
  opt.zero_grad(false);
  EXPECT_TRUE(w.grad().is_same(g));
  EXPECT_FALSE(w.grad().grad_fn());
  EXPECT_FALSE(w.grad().requires_grad());
  graft::testing::expect_tensor(w.grad(), {2}, {0, 0});
}

// ---- step ----

TEST(Step, SkipsParametersWithoutGradientAndCreatesNoState) {
  Tensor a = tensor({1.0, 2.0}, requires_grad()), b = tensor({3.0}, requires_grad());
  Adam opt({a, b}, AdamOptions(0.1));
  a.set_grad(tensor({1.0, -1.0}));
  opt.step();
  EXPECT_NE(opt.find_state(a), nullptr);
  EXPECT_EQ(opt.find_state(b), nullptr);
  EXPECT_EQ(opt.state().size(), 1u);
  graft::testing::expect_tensor(b, {1}, {3.0});
}

TEST(Step, AZeroGradientStillSteps) {
  Tensor w = tensor({1.0, -2.0}, requires_grad());
  SGD opt({w}, SGDOptions(0.1).momentum(0.9).weight_decay(0.5));
  w.set_grad(zeros({2}));
  opt.step();  // g = 0 + 0.5 * p; buf = g; p -= 0.1 * g
  graft::testing::expect_tensor(w, {2}, {0.95, -1.9});
  graft::testing::expect_tensor(*opt.find_state(w)->find("momentum_buffer"), {2}, {0.5, -1.0});
  Tensor v = tensor({1.0}, requires_grad());
  Adam adam({v});
  v.set_grad(zeros({1}));
  adam.step();
  EXPECT_EQ(adam.find_state(v)->find("step")->item<float>(), 1.0f);  // state created, step counted
}

TEST(Step, ClosureRunsWithGradModeAndItsLossIsReturned) {
  Tensor w = tensor({1.0, -1.0}, requires_grad());
  SGD opt({w}, SGDOptions(0.25));
  Tensor seen;
  int calls = 0;
  NoGradGuard outer;  // the closure still records a graph
  Tensor loss = opt.step([&] {
    ++calls;
    EXPECT_TRUE(GradMode::is_enabled());
    opt.zero_grad();
    seen = (w * w).sum();
    seen.backward();
    return seen;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(loss.is_same(seen));
  EXPECT_EQ(loss.item<float>(), 2.0f);
  graft::testing::expect_tensor(w, {2}, {0.5, -0.5});  // p -= 0.25 * 2p
  EXPECT_FALSE(GradMode::is_enabled());                // restored
  EXPECT_FALSE(opt.step().defined());                  // no closure: undefined loss
}

TEST(Step, UpdatesRunWithoutRecordingAndBumpVersions) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  Adam opt({w});
  Tensor y = (w * w).sum();  // saves w for backward
  w.set_grad(tensor({1.0, 1.0}));
  const uint32_t version = w._version();
  opt.step();  // the fused loop writes w in place
  EXPECT_GT(w._version(), version);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_FALSE(opt.find_state(w)->find("exp_avg")->requires_grad());
  EXPECT_THROW_HAS(y.backward(), RuntimeError, "modified by an inplace operation");
}

TEST(Step, RejectsAGradientOfTheWrongShape) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  Tensor v = tensor({1.0, 2.0}, requires_grad());
  SGD opt({v, w}, SGDOptions(0.1));
  v.set_grad(ones({2}));
  // set_grad validates; a gradient swapped in through mutable_grad() is caught by step.
  w.mutable_grad() = ones({3});
  EXPECT_THROW_MSG(opt.step(), RuntimeError,
                   "SGD.step: parameter 1 has a gradient of shape [3] but the parameter's shape is [2]");
  graft::testing::expect_tensor(v, {2}, {1.0, 2.0});  // checked before any update
}

TEST(Step, OptimizesAModel) {
  // Least squares for y = 2x - 1 with a closure; every optimizer gets close.
  Tensor x = linspace(-1, 1, 16).view({16, 1});
  Tensor y = x * 2 - 1;
  auto run = [&](auto make) {
    Tensor w = zeros({1, 1}, requires_grad()), b = zeros({1}, requires_grad());
    auto opt = make(std::vector<Tensor>{w, b});
    Tensor loss;
    for (int i = 0; i < 300; ++i)
      loss = opt.step([&] {
        opt.zero_grad();
        Tensor l = ((linear(x, w, b) - y) * (linear(x, w, b) - y)).mean();
        l.backward();
        return l;
      });
    return std::make_tuple(loss.item<double>(), w.item<double>(), b.item<double>());
  };
  for (auto [loss, w, b] : {run([](auto p) { return SGD(p, SGDOptions(0.2).momentum(0.5)); }),
                            run([](auto p) { return Adam(p, AdamOptions(0.05)); }),
                            run([](auto p) { return AdamW(p, AdamWOptions(0.05).weight_decay(0)); }),
                            run([](auto p) { return RMSprop(p, RMSpropOptions(0.01)); }),
                            run([](auto p) { return Adagrad(p, AdagradOptions(0.5)); })}) {
    EXPECT_LT(loss, 1e-3);
    EXPECT_NEAR(w, 2.0, 0.05);
    EXPECT_NEAR(b, -1.0, 0.05);
  }
}

// ---- memory ----

TEST(OptimizerMemory, StateIsTaggedOptimizerState) {
  const int64_t base = memory_by_category().at("optimizer_state");
  {
    Tensor w = zeros({1000}, requires_grad());  // 4000 bytes: 4096-byte blocks
    Adam opt({w});
    EXPECT_EQ(memory_by_category().at("optimizer_state"), base);  // Adam's state is lazy
    w.set_grad(ones({1000}));
    opt.step();
    // step (0-d float32: one 512-byte block) + exp_avg + exp_avg_sq
    EXPECT_EQ(memory_by_category().at("optimizer_state") - base, 512 + 4096 + 4096);
    for (const auto& item : *opt.find_state(w))
      EXPECT_EQ(memory_category(item.value()), MemoryCategory::OptimizerState) << item.key();
    EXPECT_NE(memory_category(w), MemoryCategory::OptimizerState);
  }
  EXPECT_EQ(memory_by_category().at("optimizer_state"), base);  // freed with the optimizer
  {
    Tensor w = zeros({1000}, requires_grad());
    SGD sgd({w}, SGDOptions(0.1).momentum(0.9));
    w.set_grad(ones({1000}));
    sgd.step();
    EXPECT_EQ(memory_by_category().at("optimizer_state") - base, 4096);
    Adagrad adagrad({w});  // eager state
    EXPECT_EQ(memory_by_category().at("optimizer_state") - base, 4096 + 512 + 4096);
    RMSprop rms({w}, RMSpropOptions().momentum(0.9).centered(true));
    rms.step();
    EXPECT_EQ(memory_by_category().at("optimizer_state") - base, 4096 + 512 + 4096 + 512 + 3 * 4096);
  }
  EXPECT_EQ(memory_by_category().at("optimizer_state"), base);
}

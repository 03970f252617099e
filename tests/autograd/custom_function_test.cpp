// Custom autograd Functions (graft::autograd::Function<T>): node naming, saved tensors,
// backward return checks, ctx flags, double backward (reference section 6; behaviours 23-25).
#include <cmath>

#include "support/test_util.h"

using namespace graft;
using graft::autograd::AutogradContext;
using graft::autograd::Function;
using graft::testing::expect_tensor;

namespace {

struct Cube : Function<Cube> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * 3 * x * x};
  }
};

struct Square : Function<Square> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * 2 * x};
  }
};

// Saves its output.
struct MyExp : Function<MyExp> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    Tensor y = x.exp();
    ctx->save_for_backward({y});
    return y;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) { return {g[0] * ctx->get_saved_variables()[0]}; }
};

struct WrongN : Function<WrongN> {
  static Tensor forward(AutogradContext*, Tensor a, Tensor b) { return a + b; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0]}; }
};
struct WrongN2 : Function<WrongN2> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 2; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0], g[0], g[0]}; }
};
struct TrailingNones : Function<TrailingNones> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 2; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 2, Tensor(), Tensor()}; }
};
struct WrongShape : Function<WrongShape> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 2; }
  static TensorList backward(AutogradContext*, TensorList) { return {ones({5})}; }
};
struct Broadcastable : Function<Broadcastable> {
  static Tensor forward(AutogradContext*, Tensor a) { return a * 2; }
  static TensorList backward(AutogradContext*, TensorList) { return {ones({2, 3})}; }
};
struct GradForNonTensor : Function<GradForNonTensor> {
  static Tensor forward(AutogradContext*, Tensor a, double k) { return a * k; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0], g[0]}; }
};
struct ScaleBy : Function<ScaleBy> {
  static Tensor forward(AutogradContext* ctx, Tensor a, double k) {
    ctx->saved_data["k"] = k;
    return a * k;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    return {g[0] * ctx->saved_data["k"].toDouble(), Tensor()};
  }
};

std::vector<bool> g_needs;
struct NeedsGrad : Function<NeedsGrad> {
  static Tensor forward(AutogradContext* ctx, Tensor a, Tensor b, int64_t k) {
    g_needs = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    return a + b * static_cast<double>(k);
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    g_needs = {ctx->needs_input_grad(0), ctx->needs_input_grad(1), ctx->needs_input_grad(2)};
    return {g[0], Tensor(), Tensor()};
  }
};

struct AddOneInplace : Function<AddOneInplace> {
  static Tensor forward(AutogradContext* ctx, Tensor a) {
    a.add_(1);
    ctx->mark_dirty({a});
    return a;
  }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0]}; }
};
struct DirtyNotReturned : Function<DirtyNotReturned> {
  static Tensor forward(AutogradContext* ctx, Tensor a) {
    a.add_(1);
    ctx->mark_dirty({a});
    return a * 2;
  }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 2}; }
};

std::vector<bool> g_defined;
std::vector<std::vector<double>> g_values;
struct SortLike : Function<SortLike> {  // (values, indices-like) with the second non-differentiable
  static TensorList forward(AutogradContext* ctx, Tensor a) {
    Tensor v = a * 2;
    Tensor idx = a * 0;
    ctx->mark_non_differentiable({idx});
    return {v, idx};
  }
  static TensorList backward(AutogradContext*, TensorList g) {
    g_defined = {g[0].defined(), g[1].defined()};
    g_values.clear();
    for (auto& t : g) g_values.push_back(t.defined() ? t.to_vector<double>() : std::vector<double>{});
    return {g[0] * 2};
  }
};
struct TwoOut : Function<TwoOut> {
  static TensorList forward(AutogradContext* ctx, Tensor a, bool materialize) {
    ctx->set_materialize_grads(materialize);
    return {a * 2, a * 3};
  }
  static TensorList backward(AutogradContext*, TensorList g) {
    g_defined = {g[0].defined(), g[1].defined()};
    Tensor r;
    if (g[0].defined()) r = g[0] * 2;
    if (g[1].defined()) r = r.defined() ? r + g[1] * 3 : g[1] * 3;
    return {r, Tensor()};
  }
};
struct Identity : Function<Identity> {
  static Tensor forward(AutogradContext*, Tensor a) { return a; }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 5}; }
};

std::vector<bool> g_modes;
struct ModeProbe : Function<ModeProbe> {
  static Tensor forward(AutogradContext* ctx, Tensor a) {
    g_modes.push_back(GradMode::is_enabled());
    ctx->save_for_backward({a});
    return a * a;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    g_modes.push_back(GradMode::is_enabled());
    return {g[0] * 2 * ctx->get_saved_variables()[0]};
  }
};
}  // namespace

TEST(CustomFunction, NodeNameAndGradient) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = Cube::apply(x);
  expect_tensor(y, {2}, {1, 8});
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "CubeBackward");
  ASSERT_EQ(y.grad_fn()->next_functions().size(), 1u);
  EXPECT_EQ(y.grad_fn()->next_functions()[0].function->name(), "torch::autograd::AccumulateGrad");
  y.sum().backward();
  expect_tensor(x.grad(), {2}, {3, 12});
}

TEST(CustomFunction, NoGraphWhenNothingRequiresGradOrNoGrad) {
  Tensor c = tensor({1.0, 2.0});
  Tensor y = Cube::apply(c);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_FALSE(y.grad_fn());
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  NoGradGuard ng;
  Tensor z = Cube::apply(x);
  EXPECT_FALSE(z.requires_grad());
  EXPECT_FALSE(z.grad_fn());
}

TEST(CustomFunction, DoubleBackwardThroughDifferentiableBackward) {
  Tensor x = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor g = autograd::grad({Cube::apply(x).sum()}, {x}, {}, std::nullopt, true)[0];
  expect_tensor(g, {3}, {3, 12, 27});
  EXPECT_TRUE(g.requires_grad());
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  expect_tensor(gg, {3}, {6, 12, 18});  // 6x
  Tensor s = autograd::grad({Square::apply(x).sum()}, {x}, {}, std::nullopt, true)[0];
  Tensor ss = autograd::grad({s.sum()}, {x})[0];
  expect_tensor(ss, {3}, {2, 2, 2});
}

TEST(CustomFunction, SavedTensorsReleasedAfterBackward) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = Cube::apply(x).sum();
  y.backward(Tensor(), true);
  y.backward();
  expect_tensor(x.grad(), {2}, {6, 24});
  EXPECT_THROW_MSG(y.backward(), RuntimeError, graft::testing::kSecondTimeMessage);
}

TEST(CustomFunction, SavedOutputRoundTripsAndIsVersionChecked) {
  Tensor x = tensor({0.0, 1.0}, requires_grad());
  Tensor y = MyExp::apply(x);
  y.sum().backward();
  expect_tensor(x.grad(), {2}, {1, std::exp(1.0)}, 1e-5);
  Tensor y2 = MyExp::apply(x);
  Tensor s = y2.sum();
  y2.mul_(2);
  EXPECT_THROW_HAS(s.backward(), RuntimeError,
                   "[torch.FloatTensor [2]], which is output 0 of MyExpBackward, is at version 1; expected version 0");
}

TEST(CustomFunction, SavedInputIsVersionChecked) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x * 1;
  Tensor y = Cube::apply(h).sum();
  h.add_(1);
  EXPECT_THROW_HAS(y.backward(), RuntimeError,
                   "[torch.FloatTensor [2]], which is output 0 of AddBackward0, is at version 1; expected version 0");
}

TEST(CustomFunction, WrongNumberOfGradients) {
  Tensor a = ones({3}, requires_grad());
  Tensor b = ones({3}, requires_grad());
  EXPECT_THROW_MSG(WrongN::apply(a, b).sum().backward(), RuntimeError,
                   "function WrongNBackward returned an incorrect number of gradients (expected 2, got 1)");
  EXPECT_THROW_MSG(WrongN2::apply(a).sum().backward(), RuntimeError,
                   "function WrongN2Backward returned an incorrect number of gradients (expected 1, got 3)");
  EXPECT_FALSE(a.grad().defined());
  TrailingNones::apply(a).sum().backward();
  expect_tensor(a.grad(), {3}, {2, 2, 2});
}

TEST(CustomFunction, InvalidGradientShape) {
  Tensor a = ones({3}, requires_grad());
  EXPECT_THROW_MSG(WrongShape::apply(a).sum().backward(), RuntimeError,
                   "Function WrongShapeBackward returned an invalid gradient at index 0 - got [5] but expected shape "
                   "compatible with [3]");
  Broadcastable::apply(a).sum().backward();  // [2, 3] sums down to [3]
  expect_tensor(a.grad(), {3}, {2, 2, 2});
}

TEST(CustomFunction, GradientForNonTensorInput) {
  Tensor a = ones({3}, requires_grad());
  EXPECT_THROW_MSG(GradForNonTensor::apply(a, 2.0).sum().backward(), RuntimeError,
                   "function GradForNonTensorBackward returned a gradient different than None at position 2, but the "
                   "corresponding forward input was not a Variable");
  ScaleBy::apply(a, 4.0).sum().backward();
  expect_tensor(a.grad(), {3}, {4, 4, 4});
}

TEST(CustomFunction, GradientForInputNotRequiringGradIsIgnored) {
  Tensor a = ones({2}, requires_grad());
  Tensor b = ones({2});
  WrongN2::apply(a);  // unused
  Tensor y = WrongN::apply(a, b);
  EXPECT_THROW_HAS(y.sum().backward(), RuntimeError, "incorrect number of gradients");
  NeedsGrad::apply(a, b, 2).sum().backward();
  expect_tensor(a.grad(), {2}, {1, 1});
  EXPECT_FALSE(b.grad().defined());
}

TEST(CustomFunction, NeedsInputGrad) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = NeedsGrad::apply(x, ones({3}), 2);
  EXPECT_EQ(g_needs, (std::vector<bool>{true, false, false}));
  y.sum().backward();
  EXPECT_EQ(g_needs, (std::vector<bool>{true, false, false}));
  {
    NoGradGuard ng;
    NeedsGrad::apply(x, ones({3}), 2);
    EXPECT_EQ(g_needs, (std::vector<bool>{false, false, false}));
  }
}

TEST(CustomFunction, MarkDirty) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x * 3;
  const uint32_t v0 = h._version();
  Tensor out = AddOneInplace::apply(h);
  EXPECT_TRUE(out.is_same(h));  // the input object itself
  // once by forward's in-place add, once more for mark_dirty (libtorch's get_and_bump_dirty)
  EXPECT_EQ(h._version(), v0 + 2);
  ASSERT_TRUE(h.grad_fn());
  EXPECT_EQ(h.grad_fn()->name(), "AddOneInplaceBackward");
  expect_tensor(h, {2}, {4, 7});
  (h * h).sum().backward();
  expect_tensor(x.grad(), {2}, {24, 42});
}

TEST(CustomFunction, MarkDirtyErrors) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x * 3;
  EXPECT_THROW_MSG(DirtyNotReturned::apply(h), RuntimeError,
                   "Some elements marked as dirty during the forward method were not returned as output. The inputs "
                   "that are modified inplace must all be outputs of the Function.");
  EXPECT_THROW_MSG(AddOneInplace::apply(x), RuntimeError,
                   "a leaf Variable that requires grad has been used in an in-place operation.");
}

TEST(CustomFunction, MarkNonDifferentiable) {
  Tensor x = tensor({1.0, 2.0, 3.0}, requires_grad());
  TensorList outs = SortLike::apply(x);
  EXPECT_TRUE(outs[0].requires_grad());
  EXPECT_FALSE(outs[1].requires_grad());
  EXPECT_TRUE(outs[1].is_leaf());
  outs[0].sum().backward();
  EXPECT_EQ(g_defined, (std::vector<bool>{true, true}));  // materialized zeros
  EXPECT_EQ(g_values[1], (std::vector<double>{0, 0, 0}));
  expect_tensor(x.grad(), {3}, {2, 2, 2});
}

TEST(CustomFunction, MaterializeGrads) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  TensorList outs = TwoOut::apply(x, true);
  outs[0].sum().backward();
  EXPECT_EQ(g_defined, (std::vector<bool>{true, true}));
  expect_tensor(x.grad(), {2}, {2, 2});
  TensorList outs2 = TwoOut::apply(x, false);
  outs2[0].sum().backward();
  EXPECT_EQ(g_defined, (std::vector<bool>{true, false}));  // undefined, not zeros
  expect_tensor(x.grad(), {2}, {4, 4});
  outs2 = TwoOut::apply(x, false);
  outs2[1].sum().backward();
  EXPECT_EQ(g_defined, (std::vector<bool>{false, true}));
  expect_tensor(x.grad(), {2}, {7, 7});
}

TEST(CustomFunction, ReturningAnInputGivesAViewWithCustomGradFn) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor o = Identity::apply(x);
  EXPECT_FALSE(o.is_same(x));
  EXPECT_TRUE(o.is_view());
  EXPECT_TRUE(o._base().is_same(x));
  EXPECT_EQ(o.data_ptr(), x.data_ptr());
  ASSERT_TRUE(o.grad_fn());
  EXPECT_EQ(o.grad_fn()->name(), "IdentityBackward");
  o.sum().backward();
  expect_tensor(x.grad(), {2}, {5, 5});
}

TEST(CustomFunction, GradModeInForwardAndBackward) {
  g_modes.clear();
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = ModeProbe::apply(x).sum();
  autograd::grad({y}, {x}, {}, true, false);
  autograd::grad({y}, {x}, {}, true, true);
  EXPECT_EQ(g_modes, (std::vector<bool>{false, false, true}));
}

TEST(CustomFunction, SavedVariablesReadableFromOutsideBeforeBackward) {
  // reading saved tensors from the node after release raises the second-time error
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = Cube::apply(x);
  auto* node = dynamic_cast<autograd::detail::CppNodeBase*>(y.grad_fn().get());
  ASSERT_NE(node, nullptr);
  TensorList saved = node->ctx.get_saved_variables();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_TRUE(saved[0].is_same(x));
  saved.clear();
  y.sum().backward();
  EXPECT_THROW_MSG(node->ctx.get_saved_variables(), RuntimeError, graft::testing::kSecondTimeMessage);
}

struct CubeOnce : Function<CubeOnce> {
  static constexpr bool once_differentiable = true;
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    EXPECT_FALSE(GradMode::is_enabled());  // once_differentiable backward records nothing
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * 3 * x * x};
  }
};

TEST(CustomFunction, OnceDifferentiable) {
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  // first derivative works
  Tensor y = CubeOnce::apply(x);
  y.sum().backward();
  expect_tensor(x.grad(), {2}, {3.0, 12.0});
  // grad_outputs that require grad: differentiating the result raises
  Tensor y2 = CubeOnce::apply(x);
  Tensor v = ones({2}, requires_grad());
  TensorList g = autograd::grad({y2}, {x}, {v}, std::nullopt, /*create_graph=*/true);
  ASSERT_TRUE(g[0].requires_grad());
  EXPECT_THROW_MSG(g[0].sum().backward(), RuntimeError,
                   "trying to differentiate twice a function that was marked with @once_differentiable");
  // the usual pitfall: grad_outputs without grad -> the result simply does not require grad
  Tensor y3 = CubeOnce::apply(x);
  TensorList g3 = autograd::grad({y3.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_FALSE(g3[0].requires_grad());
}

// mark_dirty on a view: the base is rebased through CopySlices onto the custom node.
struct DoubleInplace : Function<DoubleInplace> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    x.mul_(2);
    ctx->mark_dirty({x});
    return x;
  }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 2}; }
};

TEST(CustomFunction, MarkDirtyOnAView) {
  Tensor a = ones({4}, requires_grad());
  Tensor b = a * 1;
  DoubleInplace::apply(b.narrow(0, 0, 2));
  expect_tensor(b, {4}, {2, 2, 1, 1});
  EXPECT_EQ(b.grad_fn()->name(), "torch::autograd::CopySlices");
  b.sum().backward();
  expect_tensor(a.grad(), {4}, {2, 2, 1, 1});
}

// A write marked dirty bumps the version even when forward wrote through data_ptr, so a
// tensor saved earlier is caught by the version check.
struct ScaleRaw : Function<ScaleRaw> {
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    double* p = x.data_ptr<double>();
    for (int64_t i = 0; i < x.numel(); ++i) p[i] *= 2;
    ctx->mark_dirty({x});
    return x;
  }
  static TensorList backward(AutogradContext*, TensorList g) { return {g[0] * 2}; }
};

TEST(CustomFunction, MarkDirtyBumpsVersion) {
  Tensor a = tensor({1.0, 2.0}, TensorOptions(kFloat64).requires_grad(true));
  Tensor b = a * 1;
  Tensor c = b * b;  // saves b
  ScaleRaw::apply(b);
  EXPECT_THROW_HAS(c.sum().backward(), RuntimeError, "modified by an inplace operation");
}

namespace {
// Records which backward pass runs it, and runs a nested (reentrant) backward of its own:
// the recomputation that reentrant checkpointing does.
struct Reentrant : Function<Reentrant> {
  static inline std::vector<int64_t> ids;
  static inline std::vector<bool> valid;
  static Tensor forward(AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x;
  }
  static TensorList backward(AutogradContext* ctx, TensorList g) {
    ids.push_back(autograd::current_graph_task_id());
    valid.push_back(autograd::is_checkpoint_valid());
    Tensor x = ctx->get_saved_variables()[0].detach().requires_grad_(true);
    Tensor y = [&] {
      AutoGradMode enable(true);
      return x * x;
    }();
    autograd::backward({y}, {g[0]});
    ids.push_back(autograd::current_graph_task_id());  // the outer pass again
    return {x.grad()};
  }
};
}  // namespace

TEST(CustomFunction, ReentrantBackwardAndGraphTaskIds) {
  EXPECT_EQ(autograd::current_graph_task_id(), -1);
  EXPECT_TRUE(autograd::is_checkpoint_valid());
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Reentrant::ids.clear();
  Reentrant::valid.clear();
  Reentrant::apply(x).sum().backward();
  expect_tensor(x.grad(), {2}, {2.0, 4.0});
  ASSERT_EQ(Reentrant::ids.size(), 2u);
  EXPECT_GE(Reentrant::ids[0], 0);
  EXPECT_EQ(Reentrant::ids[0], Reentrant::ids[1]);
  EXPECT_EQ(Reentrant::valid, std::vector<bool>{true});

  // grad() and backward(inputs=) compute only some gradients: checkpointing is not valid there
  auto g = autograd::grad({Reentrant::apply(x).sum()}, {x});
  expect_tensor(g[0], {2}, {2.0, 4.0});
  x.mutable_grad() = Tensor();
  Reentrant::apply(x).sum().backward({}, std::nullopt, false, TensorList{x});
  EXPECT_EQ(Reentrant::valid, (std::vector<bool>{true, false, false}));
  EXPECT_NE(Reentrant::ids[2], Reentrant::ids[0]);  // each pass has its own id
  EXPECT_EQ(autograd::current_graph_task_id(), -1);
  EXPECT_TRUE(autograd::is_checkpoint_valid());
}

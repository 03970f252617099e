// The README's autograd snippet, compiled and checked.
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

namespace {
struct Cube : autograd::Function<Cube> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x) {
    ctx->save_for_backward({x});
    return x * x * x;
  }
  static TensorList backward(autograd::AutogradContext* ctx, TensorList g) {
    Tensor x = ctx->get_saved_variables()[0];
    return {g[0] * 3 * x * x};
  }
};
}  // namespace

TEST(Readme, AutogradSnippet) {
  Tensor w = tensor({1.0, 2.0}, requires_grad());
  Tensor f = w.pow(3).sum() + w[0] * w[1];
  auto g = autograd::grad({f}, {w}, {}, std::nullopt, /*create_graph=*/true);
  expect_tensor(g[0], {2}, {3 + 2, 12 + 1});
  auto hv = autograd::grad({g[0]}, {w}, {tensor({1.0, 0.0})});
  expect_tensor(hv[0], {2}, {6, 1});
  f.backward();
  expect_tensor(w.grad(), {2}, {5, 13});
  {
    NoGradGuard no_grad;
    w.sub_(w.grad() * 0.1);
  }
  expect_tensor(w, {2}, {0.5, 0.7});
  Tensor x = tensor({2.0}, requires_grad());
  auto d1 = autograd::grad({Cube::apply(x)}, {x}, {}, std::nullopt, true);
  auto d2 = autograd::grad({d1[0]}, {x});
  expect_tensor(d1[0], {1}, {12});
  expect_tensor(d2[0], {1}, {12});  // 6x
}

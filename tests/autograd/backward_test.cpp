// backward(): the gradient argument, accumulation into .grad, retain_graph defaults,
// inputs= (reference sections 2.1-2.3, 2.6; behaviours 4-7, 12).
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;
using graft::testing::WarningCapture;

namespace {
const char* kCreateGraphWarning =
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak.";
}

TEST(Backward, ImplicitGradientOnlyForScalarOutputs) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  EXPECT_THROW_MSG(y.backward(), RuntimeError, "grad can be implicitly created only for scalar outputs");
  EXPECT_FALSE(x.grad().defined());
  // a one-element non-0-d output is fine
  Tensor z = (x * 2).sum().view({1, 1});
  z.backward();
  expect_tensor(x.grad(), {3}, {2, 2, 2});
}

TEST(Backward, GradientShapeMismatch) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  EXPECT_THROW_MSG(y.backward(ones({4})), RuntimeError,
                   "Mismatch in shape: grad_output[0] has a shape of torch.Size([4]) and output[0] has a shape of "
                   "torch.Size([3]).");
  Tensor z = x * 3;
  EXPECT_THROW_MSG(autograd::backward({y, z}, {ones({3}), ones({2, 2})}), RuntimeError,
                   "Mismatch in shape: grad_output[1] has a shape of torch.Size([2, 2]) and output[1] has a shape of "
                   "torch.Size([3]).");
}

TEST(Backward, RealDtypeMismatchIsCast) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  y.backward(tensor({1.0, 2.0, 3.0}, kFloat64));
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  expect_tensor(x.grad(), {3}, {2, 4, 6});
}

TEST(Backward, RootErrors) {
  Tensor x = ones({3}, requires_grad());
  Tensor c = ones({3});
  EXPECT_THROW_MSG(c.sum().backward(), RuntimeError,
                   "element 0 of tensors does not require grad and does not have a grad_fn");
  Tensor nog;
  {
    NoGradGuard ng;
    nog = (x * 2).sum();
  }
  EXPECT_THROW_MSG(nog.backward(), RuntimeError,
                   "element 0 of tensors does not require grad and does not have a grad_fn");
  EXPECT_THROW_MSG(autograd::backward({x.sum(), c.sum()}), RuntimeError,
                   "element 1 of tensors does not require grad and does not have a grad_fn");
  EXPECT_THROW_MSG(autograd::backward({x * 2, x * 3}, {ones({3})}), RuntimeError, "got 2 tensors and 1 gradients");
  EXPECT_FALSE(x.grad().defined());
}

TEST(Backward, LeafCanBeTheRoot) {
  Tensor x = ones({3}, requires_grad());
  x.backward(full({3}, 2.0));
  expect_tensor(x.grad(), {3}, {2, 2, 2});
}

TEST(Backward, LeafUsedTwiceGetsTheSum) {
  Tensor x = ones({2}, requires_grad());
  (x * 3 + x * 4).sum().backward();
  expect_tensor(x.grad(), {2}, {7, 7});
}

TEST(Backward, AccumulatesInPlaceWithoutCreateGraph) {
  Tensor x = ones({3}, requires_grad());
  (x * 2).sum().backward();
  Tensor g1 = x.grad();
  ASSERT_TRUE(g1.defined());
  TensorImpl* impl = g1.impl();
  void* ptr = g1.data_ptr();
  expect_tensor(g1, {3}, {2, 2, 2});
  (x * 2).sum().backward();
  EXPECT_EQ(x.grad().impl(), impl);     // same tensor object
  EXPECT_EQ(x.grad().data_ptr(), ptr);  // same buffer
  expect_tensor(g1, {3}, {4, 4, 4});    // the old handle sees the update
  EXPECT_FALSE(x.grad().requires_grad());
}

TEST(Backward, FirstGradIsNotAnAliasOfAnotherTensor) {
  // x.backward(g): the stored grad must not be g itself (g is still referenced by the caller)
  Tensor x = ones({3}, requires_grad());
  Tensor g = full({3}, 2.0);
  x.backward(g);
  x.backward(g);
  expect_tensor(x.grad(), {3}, {4, 4, 4});
  expect_tensor(g, {3}, {2, 2, 2});
}

TEST(Backward, AccumulatesOutOfPlaceWithCreateGraph) {
  WarningCapture w;
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  (x * x).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  ASSERT_EQ(w.messages().size(), 1u);
  EXPECT_EQ(w.messages()[0], kCreateGraphWarning);
  Tensor g1 = x.grad();
  expect_tensor(g1, {2}, {2, 4});
  EXPECT_TRUE(g1.requires_grad());
  ASSERT_TRUE(g1.grad_fn());
  (x * x).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  EXPECT_NE(x.grad().impl(), g1.impl());  // replaced, not updated
  expect_tensor(g1, {2}, {2, 4});         // old value untouched
  expect_tensor(x.grad(), {2}, {4, 8});
  ASSERT_TRUE(x.grad().grad_fn());
  EXPECT_EQ(x.grad().grad_fn()->name(), "AddBackward0");
  x.mutable_grad() = Tensor();  // break the x -> grad -> graph -> x cycle
}

TEST(Backward, ManuallyAssignedGradIsAccumulatedInto) {
  Tensor x = ones({2}, requires_grad());
  Tensor g = full({2}, 10.0);
  x.set_grad(g);
  (x * 2).sum().backward();
  expect_tensor(x.grad(), {2}, {12, 12});
  EXPECT_EQ(x.grad().impl(), g.impl());
  EXPECT_THROW_MSG(x.set_grad(ones({4})), RuntimeError,
                   "attempting to assign a gradient of size '[4]' to a tensor of size '[2]'. Please ensure that the "
                   "gradient and the tensor are the same size");
  EXPECT_THROW_MSG(x.set_grad(ones({2}, kFloat64)), RuntimeError,
                   "attempting to assign a gradient with dtype 'double' to a tensor with dtype 'float'. Please ensure "
                   "that the gradient and the tensor have the same dtype");
  x.set_grad(Tensor());
  EXPECT_FALSE(x.grad().defined());
}

TEST(Backward, RetainGraphDefaultsToCreateGraph) {
  WarningCapture w;
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor y = x.exp().sum();
  y.backward(Tensor(), std::nullopt, /*create_graph=*/true);  // retain_graph := true
  y.backward();                                               // works, then frees
  EXPECT_THROW_HAS(y.backward(), RuntimeError, "Trying to backward through the graph a second time");
  x.mutable_grad() = Tensor();
  // create_graph=true with an explicit retain_graph=false frees
  Tensor z = x.exp().sum();
  z.backward(Tensor(), false, true);
  EXPECT_THROW_HAS(z.backward(), RuntimeError, "Trying to backward through the graph a second time");
  x.mutable_grad() = Tensor();
}

TEST(Backward, InputsRestrictsAccumulation) {
  Tensor x1 = tensor({1.0, 2.0}, requires_grad());
  Tensor x2 = tensor({3.0, 4.0}, requires_grad());
  (x1 * x2 * 3).sum().backward(Tensor(), std::nullopt, false, TensorList{x1});
  expect_tensor(x1.grad(), {2}, {9, 12});
  EXPECT_FALSE(x2.grad().defined());
  (x1 * x2 * 3).sum().backward(Tensor(), std::nullopt, false, TensorList{x2});
  expect_tensor(x1.grad(), {2}, {9, 12});
  expect_tensor(x2.grad(), {2}, {3, 6});
}

TEST(Backward, EmptyInputsIsAnError) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = (x * 2).sum();
  EXPECT_THROW_MSG(y.backward(Tensor(), std::nullopt, false, TensorList{}), RuntimeError,
                   "`inputs` argument to `backward()` cannot be empty.");
  EXPECT_FALSE(x.grad().defined());
  y.backward();  // the failed call freed nothing
  expect_tensor(x.grad(), {2}, {2, 2});
}

TEST(Backward, NonLeafInInputsGetsGradWithoutWarning) {
  WarningCapture w;
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x * 2;
  Tensor y = (h * h).sum();
  y.backward(Tensor(), true, false, TensorList{h});
  expect_tensor(h.grad(), {2}, {4, 8});
  EXPECT_FALSE(x.grad().defined());
  y.backward(Tensor(), std::nullopt, false, TensorList{h});
  expect_tensor(h.grad(), {2}, {8, 16});  // accumulates
  EXPECT_TRUE(w.messages().empty());
}

TEST(Backward, InputNotInGraphIsLeftUndefined) {
  Tensor x = ones({2}, requires_grad());
  Tensor other = ones({2}, requires_grad());
  (x * 2).sum().backward(Tensor(), std::nullopt, false, TensorList{x, other});
  expect_tensor(x.grad(), {2}, {2, 2});
  EXPECT_FALSE(other.grad().defined());
}

TEST(Backward, MultipleRootsSum) {
  Tensor x = ones({2}, requires_grad());
  autograd::backward({(x * 2).sum(), (x * 3).sum()});
  expect_tensor(x.grad(), {2}, {5, 5});
  autograd::backward({x * 2}, {tensor({1.0, 10.0})});
  expect_tensor(x.grad(), {2}, {7, 25});
}

TEST(Backward, FirstCreateGraphGradIsCopyBackwards) {
  WarningCapture w;
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  (x * x).sum().backward(Tensor(), std::nullopt, true);
  ASSERT_TRUE(x.grad().grad_fn());
  EXPECT_EQ(x.grad().grad_fn()->name(), "CopyBackwards");
  // the gradient of the gradient flows through the copy
  Tensor gg = autograd::grad({x.grad().sum()}, {x})[0];
  expect_tensor(gg, {2}, {2, 2});
  x.mutable_grad() = Tensor();
}

TEST(Backward, NonLeafInputThatRetainsGradIsNotCountedTwice) {
  WarningCapture w;
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x * 2;
  h.retain_grad();
  Tensor y = (h * h).sum();
  y.backward(Tensor(), std::nullopt, false, TensorList{h, x});
  expect_tensor(h.grad(), {2}, {4, 8});
  expect_tensor(x.grad(), {2}, {8, 16});
}

TEST(Backward, NonLeafInInputsBecomesRetainingGrad) {
  // PyTorch calls retain_grad() on non-leaf `inputs`
  Tensor x = tensor({1.0, 2.0}, requires_grad());
  Tensor h = x + 1.0;  // AddBackward0 saves nothing: it may run (and be released) twice
  EXPECT_FALSE(h.retains_grad());
  (h * h).sum().backward(Tensor(), std::nullopt, false, TensorList{h});
  EXPECT_TRUE(h.retains_grad());
  EXPECT_FALSE(x.grad().defined());
  (h * 3).sum().backward();
  expect_tensor(h.grad(), {2}, {7, 9});
  expect_tensor(x.grad(), {2}, {3, 3});
}

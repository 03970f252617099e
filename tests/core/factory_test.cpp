// Factories: empty, zeros, ones, full, arange, linspace, eye, random, _like, tensor, from_blob.
#include <algorithm>
#include <cmath>

#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;
using V = std::vector<int64_t>;

TEST(Factory, EmptyZerosOnesFull) {
  Tensor e = empty({2, 3});
  EXPECT_EQ(e.sizes().vec(), (V{2, 3}));
  EXPECT_EQ(e.dtype(), kFloat32);
  EXPECT_EQ(empty({}).dim(), 0);
  EXPECT_EQ(empty({}).numel(), 1);
  EXPECT_EQ(empty({0}).numel(), 0);
  expect_tensor(zeros({2, 2}), {2, 2}, {0, 0, 0, 0});
  expect_tensor(ones({3}, kInt32), {3}, {1, 1, 1});
  EXPECT_EQ(ones({3}, kInt32).dtype(), kInt32);
  EXPECT_EQ(zeros({1}, kBool).dtype(), kBool);
  Tensor s = empty_strided({2, 3}, {1, 2});
  EXPECT_EQ(s.strides().vec(), (V{1, 2}));
  // full takes its dtype from the scalar
  Tensor fi = full({2}, 7);
  EXPECT_EQ(fi.dtype(), kInt64);
  expect_tensor(fi, {2}, {7, 7});
  EXPECT_EQ(full({2}, 1.5).dtype(), kFloat32);
  EXPECT_EQ(full({2}, true).dtype(), kBool);
  EXPECT_EQ(full({2}, 3, kFloat64).dtype(), kFloat64);
  expect_tensor(full({2}, 2.5, kFloat64), {2}, {2.5, 2.5});
  EXPECT_EQ(full({}, 4.0).dim(), 0);
}

TEST(Factory, Arange) {
  Tensor a = arange(5);
  EXPECT_EQ(a.dtype(), kInt64);
  EXPECT_EQ(a.to_vector<int64_t>(), (V{0, 1, 2, 3, 4}));
  Tensor b = arange(1, 10, 3);
  EXPECT_EQ(b.dtype(), kInt64);
  EXPECT_EQ(b.to_vector<int64_t>(), (V{1, 4, 7}));
  Tensor f = arange(0, 1, 0.25);
  EXPECT_EQ(f.dtype(), kFloat32);
  expect_tensor(f, {4}, {0, 0.25, 0.5, 0.75});
  EXPECT_EQ(arange(5.0).dtype(), kFloat32);
  EXPECT_EQ(arange(1.0, 4).to_vector<float>(), (std::vector<float>{1, 2, 3}));
  // negative step
  Tensor n = arange(5, 0, -2);
  EXPECT_EQ(n.to_vector<int64_t>(), (V{5, 3, 1}));
  Tensor nf = arange(1.0, -1.0, -0.5);
  expect_tensor(nf, {4}, {1, 0.5, 0, -0.5});
  EXPECT_EQ(arange(10, 0, -1).numel(), 10);
  EXPECT_EQ(arange(-3, 3).to_vector<int64_t>(), (V{-3, -2, -1, 0, 1, 2}));
  EXPECT_EQ(arange(0).numel(), 0);
  EXPECT_EQ(arange(3, 3).numel(), 0);
  EXPECT_EQ(arange(4, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(arange(0, 10, 3, kInt32).to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 6, 9}));
  EXPECT_EQ(arange(0.0, 1.0, 0.1).numel(), 10);
  EXPECT_THROW_HAS(arange(0, 5, 0), RuntimeError, "step must be nonzero");
  EXPECT_THROW_HAS(arange(0, 5, -1), RuntimeError, "upper bound and larger bound inconsistent with step sign");
  EXPECT_THROW_HAS(arange(0.0, INFINITY), RuntimeError, "unsupported range");
}

TEST(Factory, Linspace) {
  Tensor l = linspace(0, 1, 5);
  EXPECT_EQ(l.dtype(), kFloat32);
  expect_tensor(l, {5}, {0, 0.25, 0.5, 0.75, 1});
  expect_tensor(linspace(-1, 1, 3, kFloat64), {3}, {-1, 0, 1});
  expect_tensor(linspace(3, -3, 4), {4}, {3, 1, -1, -3});
  expect_tensor(linspace(2, 5, 1), {1}, {2});
  EXPECT_EQ(linspace(0, 1, 0).numel(), 0);
  EXPECT_EQ(linspace(0, 10, 6, kInt64).to_vector<int64_t>(), (V{0, 2, 4, 6, 8, 10}));
  EXPECT_THROW_HAS(linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative");
}

TEST(Factory, Eye) {
  expect_tensor(eye(3), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  expect_tensor(eye(2, 3), {2, 3}, {1, 0, 0, 0, 1, 0});
  expect_tensor(eye(3, 2), {3, 2}, {1, 0, 0, 1, 0, 0});
  EXPECT_EQ(eye(2, std::nullopt, kInt64).dtype(), kInt64);
  EXPECT_EQ(eye(0).sizes().vec(), (V{0, 0}));
  Tensor r = eye(2, std::nullopt, requires_grad());
  EXPECT_TRUE(r.requires_grad());
  EXPECT_THROW_HAS(eye(-1), RuntimeError, "n and m must be non-negative");
  EXPECT_THROW_HAS(eye(2, -3), RuntimeError, "n and m must be non-negative");
}

TEST(Factory, RandomRangesAndSeed) {
  manual_seed(123);
  Tensor r = rand({1000});
  auto v = r.to_vector<double>();
  double mn = 1, mx = 0, sum = 0;
  for (double x : v) {
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    sum += x;
  }
  EXPECT_GE(mn, 0.0);
  EXPECT_LT(mx, 1.0);
  EXPECT_NEAR(sum / 1000, 0.5, 0.05);
  EXPECT_EQ(rand({2}, kFloat64).dtype(), kFloat64);
  Tensor n = randn({4000});
  double m = n.mean().item<double>(), sd = n.std().item<double>();
  EXPECT_NEAR(m, 0.0, 0.1);
  EXPECT_NEAR(sd, 1.0, 0.1);
  Tensor ri = randint(-2, 3, {500});
  EXPECT_EQ(ri.dtype(), kInt64);
  auto iv = ri.to_vector<int64_t>();
  EXPECT_EQ(*std::min_element(iv.begin(), iv.end()), -2);
  EXPECT_EQ(*std::max_element(iv.begin(), iv.end()), 2);
  Tensor r2 = randint(4, {3, 3});
  EXPECT_EQ(r2.sizes().vec(), (V{3, 3}));
  EXPECT_EQ(randint(0, 5, {2}, kFloat32).dtype(), kFloat32);
  // reproducible
  manual_seed(7);
  Tensor a1 = rand({5}), b1 = randn({5}), c1 = randint(0, 100, {5});
  manual_seed(7);
  Tensor a2 = rand({5}), b2 = randn({5}), c2 = randint(0, 100, {5});
  EXPECT_TRUE(equal(a1, a2));
  EXPECT_TRUE(equal(b1, b2));
  EXPECT_TRUE(equal(c1, c2));
  EXPECT_FALSE(equal(a1, rand({5})));
  EXPECT_THROW_HAS(rand({2}, kInt64), RuntimeError, "\"check_uniform_bounds\" not implemented for 'Long'");
  EXPECT_THROW_HAS(randn({2}, kInt32), RuntimeError, "\"normal_kernel_cpu\" not implemented for 'Int'");
  EXPECT_THROW_MSG(randint(3, 3, {2}), RuntimeError,
                   "random_ expects 'from' to be less than 'to', but got from=3 >= to=3");
}

TEST(Factory, RngStateRoundTrips) {
  manual_seed(11);
  EXPECT_EQ(initial_seed(), 11u);
  static_cast<void>(randn({7}));  // somewhere in the middle of the engine's block
  Tensor state = get_rng_state();
  EXPECT_EQ(state.dtype(), kInt64);
  EXPECT_EQ(state.dim(), 1);
  EXPECT_EQ(state.data_ptr<int64_t>()[0], 11);  // the initial seed comes first
  Tensor a = rand({5}), b = randn({5}), c = randint(0, 1000, {5}), d = randperm(20);
  manual_seed(99);
  EXPECT_EQ(initial_seed(), 99u);
  set_rng_state(state);
  EXPECT_EQ(initial_seed(), 11u);
  EXPECT_TRUE(equal(a, rand({5})));
  EXPECT_TRUE(equal(b, randn({5})));
  EXPECT_TRUE(equal(c, randint(0, 1000, {5})));
  EXPECT_TRUE(equal(d, randperm(20)));
  // the state is a copy: changing it changes neither the generator nor a later restore
  Tensor again = get_rng_state();
  state.data_ptr<int64_t>()[5] += 1;
  EXPECT_TRUE(equal(again, get_rng_state()));
  // bad states change nothing
  EXPECT_THROW_MSG(set_rng_state(zeros({3})), TypeError, "RNG state must be a torch.LongTensor");
  EXPECT_THROW_MSG(set_rng_state(Tensor()), TypeError, "RNG state must be a torch.LongTensor");
  EXPECT_THROW_MSG(set_rng_state(zeros({10}, kInt64)), RuntimeError,
                   "Expected a graft RNG state of size " + std::to_string(again.numel()) +
                       " but found the input RNG state size to be 10");
  Tensor strided = stack({again, again}, 1).select(1, 0);  // the right words, every other element
  ASSERT_FALSE(strided.is_contiguous());
  EXPECT_THROW_MSG(set_rng_state(strided), RuntimeError, "RNG state must be contiguous");
  EXPECT_TRUE(equal(again, get_rng_state()));
}

TEST(Factory, LikeForms) {
  Tensor base = ones({2, 3}, kFloat64).t();
  for (Tensor t :
       {empty_like(base), zeros_like(base), ones_like(base), full_like(base, 2), rand_like(base), randn_like(base)}) {
    EXPECT_EQ(t.sizes().vec(), (V{3, 2}));
    EXPECT_EQ(t.dtype(), kFloat64);
    EXPECT_FALSE(t.requires_grad());
  }
  expect_tensor(zeros_like(base), {3, 2}, {0, 0, 0, 0, 0, 0});
  expect_tensor(full_like(base, 2.5), {3, 2}, {2.5, 2.5, 2.5, 2.5, 2.5, 2.5});
  Tensor i = tensor(std::vector<int64_t>{1, 2});
  EXPECT_EQ(full_like(i, 7).dtype(), kInt64);
  EXPECT_EQ(ones_like(i, kFloat32).dtype(), kFloat32);
  EXPECT_THROW_HAS(zeros_like(i, TensorOptions().requires_grad()), RuntimeError, "floating point");
  Tensor ri = randint_like(i, 5, 6);
  EXPECT_EQ(ri.dtype(), kInt64);
  EXPECT_EQ(ri.to_vector<int64_t>(), (V{5, 5}));
  Tensor rg = zeros_like(base, requires_grad());
  EXPECT_TRUE(rg.requires_grad());
  EXPECT_EQ(rg.dtype(), kFloat64);
  EXPECT_FALSE(zeros_like(base.requires_grad_()).requires_grad());
}

TEST(Factory, TensorFromValues) {
  Tensor a = tensor({1.0, 2.5, -3.0});
  EXPECT_EQ(a.dtype(), kFloat32);
  expect_tensor(a, {3}, {1, 2.5, -3});
  Tensor d = tensor(std::vector<double>{1.0, 2.0});
  EXPECT_EQ(d.dtype(), kFloat32);  // Python floats become the default dtype
  EXPECT_EQ(tensor(std::vector<float>{1.0f}).dtype(), kFloat32);
  Tensor i = tensor(std::vector<int64_t>{4, 5});
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (V{4, 5}));
  EXPECT_EQ(tensor(std::vector<int32_t>{1}).dtype(), kInt32);
  Tensor x = tensor({1.0, 2.0}, kFloat64);
  EXPECT_EQ(x.dtype(), kFloat64);
  EXPECT_EQ(tensor({1.9, -1.9}, kInt64).to_vector<int64_t>(), (V{1, -1}));
  EXPECT_EQ(tensor(std::vector<double>{}).sizes().vec(), (V{0}));
  EXPECT_EQ(tensor({0.5}).sizes().vec(), (V{1}));
  // a copy: changing the source vector does not change the tensor
  std::vector<double> src{1, 2};
  Tensor c = tensor(src);
  src[0] = 9;
  expect_tensor(c, {2}, {1, 2});
  Tensor g = tensor({1.0}, requires_grad());
  EXPECT_TRUE(g.requires_grad());
  EXPECT_TRUE(g.is_leaf());
}

TEST(Factory, ScalarTensor) {
  Tensor s = scalar_tensor(2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_FLOAT_EQ(s.item<float>(), 2.5f);
  EXPECT_EQ(scalar_tensor(3).dtype(), kInt64);
  EXPECT_EQ(scalar_tensor(false).dtype(), kBool);
  EXPECT_EQ(scalar_tensor(3, kFloat64).item<double>(), 3.0);
  EXPECT_FALSE(s.impl()->is_wrapped_number);
}

TEST(Factory, FromBlob) {
  std::vector<float> buf{1, 2, 3, 4, 5, 6};
  int64_t before = memory_allocated();
  int64_t count_before = memory_stats().at("allocation.all.current");
  int deleted = 0;
  void* deleted_ptr = nullptr;
  {
    Tensor t = from_blob(buf.data(), {2, 3}, [&](void* p) {
      ++deleted;
      deleted_ptr = p;
    });
    EXPECT_EQ(memory_allocated(), before);  // not counted
    EXPECT_EQ(memory_stats().at("allocation.all.current"), count_before);
    EXPECT_EQ(t.data_ptr(), buf.data());
    EXPECT_EQ(t.strides().vec(), (V{3, 1}));
    expect_tensor(t, {2, 3}, {1, 2, 3, 4, 5, 6});
    buf[0] = 10;  // shares the caller's memory
    EXPECT_EQ(t.to_vector<float>()[0], 10.0f);
    t.select(1, 2).fill_(0);
    EXPECT_EQ(buf[2], 0.0f);
    EXPECT_EQ(buf[5], 0.0f);
    Tensor alias = t.t();
    t = Tensor();
    EXPECT_EQ(deleted, 0);  // a view keeps the blob alive
    EXPECT_EQ(alias.to_vector<float>()[1], 4.0f);
  }
  EXPECT_EQ(deleted, 1);
  EXPECT_EQ(deleted_ptr, buf.data());
  // strided blob, other dtype, no deleter
  std::vector<int64_t> ibuf{0, 1, 2, 3, 4, 5};
  Tensor s = from_blob(ibuf.data(), {3}, {2}, nullptr, kInt64);
  EXPECT_EQ(s.to_vector<int64_t>(), (V{0, 2, 4}));
  Tensor d = from_blob(ibuf.data(), {2, 2}, nullptr, kInt64);
  EXPECT_EQ(d.to_vector<int64_t>(), (V{0, 1, 2, 3}));
  Tensor g = from_blob(buf.data(), {2}, nullptr, requires_grad());
  EXPECT_TRUE(g.requires_grad());
  EXPECT_THROW_HAS(from_blob(nullptr, {2}), ValueError, "from_blob: data is null");
  EXPECT_THROW_HAS(from_blob(buf.data(), {2}, {1, 1}), ValueError, "must have the same length");
  EXPECT_THROW_HAS(from_blob(buf.data(), {-2}), ValueError, "negative size");
}

TEST(Factory, RequiresGradNeedsFloat) {
  const char* msg = "Only Tensors of floating point and complex dtype can require gradients";
  EXPECT_THROW_MSG(zeros({2}, TensorOptions(kInt64).requires_grad()), RuntimeError, msg);
  EXPECT_THROW_MSG(ones({2}, TensorOptions(kBool).requires_grad()), RuntimeError, msg);
  EXPECT_THROW_MSG(arange(3, requires_grad()), RuntimeError, msg);
  EXPECT_THROW_MSG(full({2}, 1, requires_grad()), RuntimeError, msg);
  EXPECT_THROW_MSG(tensor(std::vector<int64_t>{1}, requires_grad()), RuntimeError, msg);
  EXPECT_THROW_MSG(randint(0, 3, {2}, TensorOptions(kInt64).requires_grad()), RuntimeError, msg);
  // requires_grad_() on an existing tensor (src/autograd) words it differently; see tests/autograd
  EXPECT_THROW_HAS(tensor(std::vector<int64_t>{1}).requires_grad_(), RuntimeError, "can require gradients");
  EXPECT_THROW_MSG(empty({2}, TensorOptions(kInt32).requires_grad()), RuntimeError, msg);
  // and no memory leaks from the failed factories (checked by the listener)
  Tensor ok = full({2}, 1.0, requires_grad());
  EXPECT_TRUE(ok.requires_grad());
  EXPECT_TRUE(arange(3.0, requires_grad()).requires_grad());
}

TEST(Factory, NegativeSizes) {
  EXPECT_THROW_MSG(empty({2, -1}), RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]");
  EXPECT_THROW_HAS(zeros({-3}), RuntimeError, "negative dimension -3");
  EXPECT_THROW_HAS(ones({-3}), RuntimeError, "negative dimension -3");
  EXPECT_THROW_HAS(full({-3}, 1.0), RuntimeError, "negative dimension -3");
  EXPECT_THROW_HAS(rand({-3}), RuntimeError, "negative dimension -3");
  EXPECT_THROW_HAS(randn({-3}), RuntimeError, "negative dimension -3");
  EXPECT_THROW_HAS(randint(0, 2, {-3}), RuntimeError, "negative dimension -3");
  EXPECT_THROW_HAS(empty_strided({-3}, {1}), ValueError, "negative size or stride");
}

TEST(Factory, RandpermIsASeededPermutation) {
  manual_seed(7);
  Tensor p = randperm(50);
  EXPECT_EQ(p.dtype(), kInt64);
  auto v = p.to_vector<int64_t>();
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_NE(v, sorted);  // shuffled (a sorted draw has probability 1/50!)
  manual_seed(7);
  EXPECT_TRUE(equal(randperm(50), p));
  EXPECT_EQ(randperm(0).numel(), 0);
  EXPECT_EQ(randperm(5, kFloat32).dtype(), kFloat32);
  EXPECT_THROW_HAS(randperm(-1), RuntimeError, "randperm: n must be non-negative");
}

TEST(Parallel, SetAndGetNumThreads) {
  const int before = get_num_threads();
  ASSERT_GE(before, 1);
  set_num_threads(1);
  EXPECT_EQ(get_num_threads(), 1);
  Tensor a = randn({64, 64}), b = randn({64, 64});
  Tensor one = mm(a, b);
  set_num_threads(2);  // OpenBLAS may cap this at the machine's cores
  EXPECT_GE(get_num_threads(), 1);
  EXPECT_TRUE(allclose(mm(a, b), one, 1e-5, 1e-5));  // the same product with two threads
  EXPECT_THROW_MSG(set_num_threads(0), RuntimeError, "set_num_threads expects a positive integer");
  set_num_threads(before);
}

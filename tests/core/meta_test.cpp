// The meta device: tensors with sizes, strides and dtype but no data. Ops compute only their
// outputs' metadata (the op registry's Meta test covers every op); this file covers the device
// itself: parsing, factories, moves, what refuses (PyTorch's errors), the allocator's figures.
#include <gtest/gtest.h>

#include "graft/graft.h"
#include "support/test_util.h"

using namespace graft;

TEST(MetaDevice, ParsesPrintsAndCompares) {
  Device d("meta");
  EXPECT_TRUE(d.is_meta());
  EXPECT_FALSE(d.is_cpu());
  EXPECT_EQ(d.str(), "meta");
  EXPECT_EQ(d, kMeta);
  EXPECT_NE(kMeta, kCPU);
  EXPECT_THROW(Device("meta:0"), ValueError);
}

TEST(MetaDevice, FactoriesMakeMetadataOnly) {
  Tensor t = empty({2, 3}, TensorOptions(kFloat64).device(kMeta));
  EXPECT_TRUE(t.device().is_meta());
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.dtype(), kFloat64);
  EXPECT_EQ(t.data_ptr(), nullptr);  // PyTorch: data_ptr() is 0 on meta
  EXPECT_EQ(t.toString(), "MetaDoubleType");
  for (Tensor u : {zeros({4}, TensorOptions(kMeta)), ones({4}, TensorOptions(kMeta)), randn({4}, TensorOptions(kMeta)),
                   arange(0, 4, 1, TensorOptions(kMeta)), rand({4}, TensorOptions(kMeta))})
    EXPECT_TRUE(u.device().is_meta());
  EXPECT_EQ(t.str(), "tensor(..., device='meta', size=(2, 3), dtype=graft.float64)");
  EXPECT_EQ(empty({}, TensorOptions(kMeta)).str(), "tensor(..., device='meta', size=())");
}

TEST(MetaDevice, RandomFactoriesLeaveTheGeneratorAlone) {
  manual_seed(7);
  Tensor want = randn({3});
  manual_seed(7);
  (void)randn({1000}, TensorOptions(kMeta));
  const std::vector<float> got = randn({3}).to_vector<float>(), expected = want.to_vector<float>();
  EXPECT_EQ(got, expected);
}

TEST(MetaDevice, DefaultDeviceGoesToFactories) {
  set_default_device(kMeta);
  Tensor t = zeros({2});
  Tensor c = zeros({2}, TensorOptions(kCPU));
  set_default_device(kCPU);
  EXPECT_TRUE(t.device().is_meta());
  EXPECT_TRUE(c.device().is_cpu());
  EXPECT_TRUE(zeros({2}).device().is_cpu());
  // *_like keep their source's device unless told otherwise
  EXPECT_TRUE(zeros_like(t).device().is_meta());
  EXPECT_TRUE(ones_like(t, TensorOptions(kInt64)).device().is_meta());
}

TEST(MetaDevice, ToMetaKeepsGeometryAndAutograd) {
  Tensor x = randn({3, 4}, TensorOptions(kFloat64).requires_grad(true));
  Tensor m = x.t().to(kMeta);  // a dense transposed layout keeps its strides, as PyTorch's to()
  EXPECT_TRUE(m.device().is_meta());
  EXPECT_EQ(m.strides().vec(), (std::vector<int64_t>{1, 4}));
  ASSERT_TRUE(m.grad_fn());
  EXPECT_EQ(m.grad_fn()->name(), "ToCopyBackward0");
  // backward would bring a meta gradient back to the CPU leaf: there are no values to bring
  EXPECT_THROW(m.sum().backward(), NotImplementedError);
  Tensor leaf = x.detach().to(kMeta).requires_grad_(true);
  (leaf * 2).sum().backward();
  ASSERT_TRUE(leaf.grad().defined());
  EXPECT_TRUE(leaf.grad().device().is_meta());
  EXPECT_EQ(leaf.grad().sizes().vec(), (std::vector<int64_t>{3, 4}));
}

TEST(MetaDevice, DataDependentOperationsRaisePyTorchsErrors) {
  Tensor t = ones({3}, TensorOptions(kMeta));
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const NotImplementedError& e) {
      return std::string(e.what());
    }
    return std::string("no NotImplementedError");
  };
  EXPECT_EQ(message([&] { (void)t.sum().item(); })
                .rfind("Could not run 'aten::_local_scalar_dense' with arguments "
                       "from the 'Meta' backend. This could be because",
                       0),
            0u);
  EXPECT_NE(message([&] { (void)nonzero(t); }).find("'aten::nonzero' with arguments from the 'Meta' backend"),
            std::string::npos);
  EXPECT_NE(message([&] { (void)equal(t, t); }).find("'aten::equal'"), std::string::npos);
  EXPECT_EQ(message([&] { (void)t.to(kCPU); }), "Cannot copy out of meta tensor; no data!");
  EXPECT_EQ(message([&] { (void)t.to_vector<float>(); }), "Cannot copy out of meta tensor; no data!");
  EXPECT_EQ(message([&] { (void)t.data_ptr<float>(); }), "Cannot copy out of meta tensor; no data!");
}

TEST(MetaDevice, MixingDevicesRaisesExceptForZeroDimCpuTensors) {
  Tensor m = ones({3}, TensorOptions(kMeta));
  try {
    (void)(m + ones({3}));
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!");
  }
  try {
    (void)(ones({3}) * m);
    ADD_FAILURE() << "no error";
  } catch (const RuntimeError& e) {
    EXPECT_STREQ(e.what(),
                 "Expected all tensors to be on the same device, but found at least two devices, meta and cpu!");
  }
  EXPECT_THROW((void)matmul(ones({2, 3}), ones({3, 2}, TensorOptions(kMeta))), RuntimeError);
  Tensor s = m + scalar_tensor(2.0);  // a 0-d CPU tensor goes with any device, as in PyTorch
  EXPECT_TRUE(s.device().is_meta());
}

TEST(MetaDevice, AllocatorCountsMetaBytesApartFromTheCpus) {
  const int64_t cpu_before = memory_allocated(kCPU), meta_before = memory_allocated(kMeta);
  reset_peak_memory_stats(kMeta);
  {
    Tensor a = empty({1000}, TensorOptions(kMeta));  // 4000 bytes, rounded to 4096 as on a device
    Tensor b = a * 2;
    EXPECT_EQ(memory_allocated(kMeta) - meta_before, 8192);
    EXPECT_EQ(memory_allocated(kCPU), cpu_before);
    EXPECT_GE(memory_reserved(kMeta), 2 << 20);  // a small-pool segment, as on a device
  }
  EXPECT_EQ(memory_allocated(kMeta), meta_before);
  EXPECT_EQ(max_memory_allocated(kMeta) - meta_before, 8192);
  empty_cache(kMeta);
}

TEST(MetaDevice, TrainingStepRunsAndCostsWhatTheCpuRunCosts) {
  // Linear -> ReLU -> Linear, MSE, backward, SGD with momentum: the same peak on both devices
  auto peak_of_step = [](Device d) {
    const int64_t before = memory_allocated(d);
    nn::Sequential net(nn::Linear(nn::LinearOptions(8, 16)), nn::ReLU(), nn::Linear(nn::LinearOptions(16, 4)));
    net->to(d);
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
    Tensor x = randn({5, 8}, TensorOptions(d)), y = randn({5, 4}, TensorOptions(d));
    reset_peak_memory_stats(d);
    for (int step = 0; step < 2; ++step) {
      opt.zero_grad();
      Tensor loss = mse_loss(net->forward(x), y);
      loss.backward();
      opt.step();
      EXPECT_EQ(loss.device(), d);
    }
    for (auto& p : net->parameters()) EXPECT_EQ(p.grad().device(), d);
    return max_memory_allocated(d) - before;
  };
  const int64_t cpu = peak_of_step(kCPU), meta = peak_of_step(kMeta);
  EXPECT_GT(cpu, 0);
  EXPECT_EQ(meta, cpu);
}

TEST(MetaDevice, EstimateMemoryMeasuresAStepAndRestoresTheDefaultDevice) {
  auto build = [](nn::Sequential& net, std::unique_ptr<optim::Adam>& opt, Tensor& x) {
    net = nn::Sequential(nn::Linear(nn::LinearOptions(6, 12)), nn::Tanh(), nn::Linear(nn::LinearOptions(12, 3)));
    opt = std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(1e-3));
    x = randn({7, 6});
  };
  auto step = [](nn::Sequential& net, optim::Adam& opt, const Tensor& x) {
    opt.zero_grad();
    net->forward(x).square().mean().backward();
    opt.step();
  };
  // the real run, on the CPU
  const int64_t cpu_before = memory_allocated(kCPU);
  nn::Sequential net{nullptr};
  std::unique_ptr<optim::Adam> opt;
  Tensor x;
  build(net, opt, x);
  reset_peak_memory_stats(kCPU);
  for (int i = 0; i < 2; ++i) step(net, *opt, x);
  const int64_t cpu_peak = max_memory_allocated(kCPU) - cpu_before;
  // the estimate: the same model built on meta, then two steps there
  const int64_t meta_before = memory_allocated(kMeta);
  nn::Sequential mnet{nullptr};
  std::unique_ptr<optim::Adam> mopt;
  Tensor mx;
  set_default_device(kMeta);
  build(mnet, mopt, mx);
  set_default_device(kCPU);
  const MemoryEstimate e = estimate_memory([&] { step(mnet, *mopt, mx); }, 2);
  EXPECT_EQ(e.peak_allocated - meta_before, cpu_peak);
  EXPECT_EQ(e.steps, 2);
  EXPECT_GT(e.by_category.at("optimizer_state"), 0);
  EXPECT_GE(e.peak_reserved, e.peak_allocated);
  EXPECT_TRUE(default_device().is_cpu());
  EXPECT_THROW(estimate_memory([] { (void)zeros({2}).sum().item(); }), NotImplementedError);  // meta by default
  EXPECT_TRUE(default_device().is_cpu());
  EXPECT_THROW(estimate_memory([] {}, 0), ValueError);
  mopt.reset();
  empty_cache(kMeta);
}

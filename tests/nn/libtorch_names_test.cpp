// libtorch's spellings (graft/libtorch_names.h, graft/core/device.h): a libtorch-style program
// written against `namespace torch = graft;` builds and behaves as under libtorch.
#include <string>

#include "support/test_util.h"

namespace torch = graft;

namespace {

struct NetImpl : torch::nn::Module {
  NetImpl() : torch::nn::Module("Net") { fc = register_module("fc", torch::nn::Linear(3, 2)); }
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(Net);

TEST(LibtorchNames, ModulesDevicesAndCudaQueries) {
  Net net;
  EXPECT_EQ(net->forward(torch::ones({4, 3})).sizes(), torch::IntArrayRef({4, 2}));
  EXPECT_FALSE(torch::cuda::is_available());
  EXPECT_EQ(torch::cuda::device_count(), 0);
  const torch::Device device = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  EXPECT_EQ(device.type(), torch::kCPU);
  EXPECT_FALSE(device.has_index());
  EXPECT_EQ(torch::Device("cuda:3").index(), 3);
  EXPECT_EQ(torch::Device(torch::kCUDA).type(), torch::DeviceType::CUDA);
  EXPECT_TRUE(torch::ones({2}).to(torch::kCPU).device() == torch::kCPU);
}

TEST(LibtorchNames, BracedTensorsTakeLibtorchsDtypes) {
  EXPECT_EQ(torch::tensor({1, 2}).dtype(), torch::kInt64);
  EXPECT_EQ(torch::tensor({1.5, 2.0}).dtype(), torch::kFloat32);
  EXPECT_EQ(torch::tensor({true, false}).dtype(), torch::kBool);
  EXPECT_EQ(torch::tensor({1, 0, 1}, torch::kBool).dtype(), torch::kBool);
  EXPECT_EQ(torch::tensor({3, 4}).sum().item<int64_t>(), 7);
}

TEST(LibtorchNames, NormAllAnyAsTensorMethods) {
  torch::Tensor x = torch::tensor({3.0, -4.0});
  EXPECT_DOUBLE_EQ(x.norm().item<float>(), 5.0);
  EXPECT_DOUBLE_EQ(x.norm(1).item<float>(), 7.0);
  EXPECT_EQ(torch::tensor({3.0, -4.0, 0.0, 1.0}).reshape({2, 2}).norm(2, {1}, true).sizes(),
            torch::IntArrayRef({2, 1}));
  EXPECT_FALSE(x.eq(3).all().item<bool>());
  EXPECT_TRUE(x.eq(3).any().item<bool>());
  EXPECT_TRUE(torch::tensor({1, 2}).all().item<bool>());
  EXPECT_EQ(torch::tensor({0, 2, 0, 0}).reshape({2, 2}).any(1).sizes(), torch::IntArrayRef({2}));
}

TEST(LibtorchNames, ChecksAndVariables) {
  try {
    TORCH_CHECK(1 + 1 == 3, "arithmetic ", 42);
    FAIL() << "TORCH_CHECK did not throw";
  } catch (const torch::RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "arithmetic 42");
  }
  try {
    TORCH_CHECK(false);
    FAIL() << "TORCH_CHECK did not throw";
  } catch (const torch::RuntimeError& e) {
    EXPECT_EQ(std::string(e.what()), "Expected false to be true, but got false.");
  }
  TORCH_CHECK(true, "never built");
  AT_ASSERT(2 > 1);
  torch::autograd::Variable v = torch::ones({2}, torch::TensorOptions().requires_grad(true));
  torch::autograd::variable_list grads = torch::autograd::grad({(v * 3).sum()}, {v});
  EXPECT_DOUBLE_EQ(grads[0][0].item<float>(), 3.0);
}

}  // namespace

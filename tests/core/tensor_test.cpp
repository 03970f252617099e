// Tensor basics: metadata, dtypes, item, to_vector, to(dtype), refcounting, devices.
#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

TEST(TensorBasics, MetadataOfContiguousTensor) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.strides().vec(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.dtype(), kFloat32);
  EXPECT_EQ(t.scalar_type(), kFloat);
  EXPECT_EQ(t.device(), kCPU);
  EXPECT_TRUE(t.device().is_cpu());
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(t.is_floating_point());
  EXPECT_EQ(t.nbytes(), 96u);
  EXPECT_EQ(t.toString(), "CPUFloatType");
  Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_EQ(u.str(), "[ Tensor (undefined) ]");
}

TEST(TensorBasics, DTypesAndElementSize) {
  struct Case {
    DType dt;
    size_t size;
    const char* name;
    bool fp;
  };
  for (auto c : {Case{kFloat32, 4, "float32", true}, Case{kFloat64, 8, "float64", true},
                 Case{kInt64, 8, "int64", false}, Case{kInt32, 4, "int32", false}, Case{kBool, 1, "bool", false}}) {
    Tensor t = ones({2, 2}, c.dt);
    EXPECT_EQ(t.dtype(), c.dt);
    EXPECT_EQ(t.element_size(), c.size);
    EXPECT_EQ(element_size(c.dt), c.size);
    EXPECT_EQ(t.nbytes(), 4 * c.size);
    EXPECT_STREQ(dtype_name(c.dt), c.name);
    EXPECT_EQ(t.is_floating_point(), c.fp);
    EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{1, 1, 1, 1}));
  }
  std::ostringstream os;
  os << kFloat64;
  EXPECT_EQ(os.str(), "graft.float64");
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_EQ(promote_types(kBool, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kInt64, kFloat32), kFloat32);
}

TEST(TensorBasics, Item) {
  EXPECT_FLOAT_EQ(tensor({2.5}).item<float>(), 2.5f);
  EXPECT_DOUBLE_EQ(scalar_tensor(1.25, kFloat64).item<double>(), 1.25);
  EXPECT_EQ(scalar_tensor(7).item<int64_t>(), 7);
  EXPECT_EQ(full({1, 1}, 3, kInt32).item<int32_t>(), 3);
  EXPECT_EQ(scalar_tensor(true).item<bool>(), true);
  EXPECT_EQ(tensor({-2.75}).item<int64_t>(), -2);  // truncation toward zero, as int(x.item())
  Scalar s = scalar_tensor(3).item();
  EXPECT_TRUE(s.is_integral());
  EXPECT_EQ(s.to_long(), 3);
  EXPECT_TRUE(tensor({1.5}).item().is_floating_point());
  EXPECT_THROW_MSG(tensor({1.0, 2.0}).item<float>(), RuntimeError,
                   "a Tensor with 2 elements cannot be converted to Scalar");
  EXPECT_THROW_MSG(zeros({0}).item<float>(), RuntimeError, "a Tensor with 0 elements cannot be converted to Scalar");
}

TEST(TensorBasics, ToVectorAnyLayout) {
  Tensor t = arange(6).view({2, 3});
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(t.t().to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.select(1, 1).to_vector<int32_t>(), (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(zeros({0, 3}).to_vector<float>().empty());
}

TEST(TensorBasics, ToDtype) {
  Tensor f = tensor({1.7, -2.2, 0.0});
  Tensor i = f.to(kInt64);
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, -2, 0}));
  Tensor b = f.to(kBool);
  EXPECT_EQ(b.dtype(), kBool);
  expect_tensor(b, {3}, {1, 1, 0});
  Tensor d = f.to(kFloat64);
  EXPECT_EQ(d.dtype(), kFloat64);
  EXPECT_NEAR(d.to_vector<double>()[0], 1.7, 1e-6);
  // same dtype: returns self unless copy
  EXPECT_TRUE(f.to(kFloat32).is_same(f));
  Tensor c = f.to(kFloat32, /*copy=*/true);
  EXPECT_FALSE(c.is_same(f));
  EXPECT_NE(c.data_ptr(), f.data_ptr());
  EXPECT_EQ(f.long_().dtype(), kInt64);
  EXPECT_EQ(i.float_().dtype(), kFloat32);
  EXPECT_EQ(i.double_().dtype(), kFloat64);
  EXPECT_TRUE(f.to(kCPU).is_same(f));
  EXPECT_EQ(f.to(kCPU, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(f.to(ones({1}, kInt32)).dtype(), kInt32);
  // non-contiguous source
  Tensor nc = arange(6.0).view({2, 3}).t().to(kInt32);
  EXPECT_EQ(nc.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_TRUE(nc.is_contiguous());
}

TEST(TensorBasics, IntrusiveRefcount) {
  Tensor a = zeros({3});
  EXPECT_EQ(a.use_count(), 1u);
  {
    Tensor b = a;
    EXPECT_TRUE(b.is_same(a));
    EXPECT_EQ(b.impl(), a.impl());
    EXPECT_EQ(a.use_count(), 2u);
    Tensor c = std::move(b);
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_FALSE(b.defined());  // NOLINT(bugprone-use-after-move)
    c.fill_(4);
    EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{4, 4, 4}));
  }
  EXPECT_EQ(a.use_count(), 1u);
  // a view holds its own impl but shares (and keeps alive) the storage
  int64_t before = memory_allocated();
  Tensor v;
  {
    Tensor base = ones({4});
    v = base.view({2, 2});
    EXPECT_FALSE(v.is_same(base));
    EXPECT_EQ(v.impl()->storage().get(), base.impl()->storage().get());
  }
  EXPECT_EQ(memory_allocated(), before + 512);  // one 512-byte block (16 bytes rounded up)
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
  v = Tensor();
  EXPECT_EQ(memory_allocated(), before);
}

TEST(TensorBasics, DataPtrTypeCheck) {
  Tensor t = zeros({2});
  EXPECT_NE(t.data_ptr<float>(), nullptr);
  EXPECT_THROW_HAS(t.data_ptr<double>(), TypeError, "expected scalar type float64 but found float32");
  Tensor base = arange(5);
  Tensor s = base.slice(0, 2);
  EXPECT_EQ(s.data_ptr<int64_t>(), base.data_ptr<int64_t>() + 2);
  EXPECT_EQ(*s.data_ptr<int64_t>(), 2);
}

TEST(Device, Parsing) {
  Device cpu("cpu");
  EXPECT_TRUE(cpu.is_cpu());
  EXPECT_EQ(cpu, kCPU);
  EXPECT_EQ(cpu.str(), "cpu");
  Device c1("cuda:1");
  EXPECT_TRUE(c1.is_cuda());
  EXPECT_EQ(c1.index(), 1);
  EXPECT_EQ(c1.str(), "cuda:1");
  Device c("cuda");
  EXPECT_TRUE(c.is_cuda());
  EXPECT_EQ(c.index(), -1);
  EXPECT_EQ(c.str(), "cuda");
  EXPECT_EQ(Device("cuda:12").index(), 12);
  EXPECT_NE(Device("cuda:0"), Device("cuda:1"));
  EXPECT_NE(kCPU, kCUDA);
  std::ostringstream os;
  os << c1;
  EXPECT_EQ(os.str(), "cuda:1");
  for (const char* bad :
       {"", "gpu", "CPU", "cpu:0x", "cuda:", "cuda:-1", "cuda:1a", "cuda1", "cuda:128", "cuda:1:2", "cudax", " cpu"}) {
    EXPECT_THROW_MSG(Device{std::string(bad)}, ValueError, std::string("Invalid device string: '") + bad + "'");
  }
}

TEST(Device, CudaUnavailable) {
  EXPECT_FALSE(cuda_is_available());
  EXPECT_THROW_HAS(zeros({2}, kCUDA), RuntimeError, "graft was built without CUDA");
  EXPECT_THROW_HAS(empty({2}, TensorOptions().device(Device("cuda:0"))), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(ones({2}, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(full({2}, 1.0, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(arange(3, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(rand({2}, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(randn({2}, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(eye(2, std::nullopt, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(tensor({1.0}, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(empty_strided({2}, {1}, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  EXPECT_THROW_HAS(zeros_like(zeros({2}), TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  float buf[2] = {0, 0};
  EXPECT_THROW_HAS(from_blob(buf, {2}, nullptr, TensorOptions(kCUDA)), RuntimeError, "built without CUDA");
  Tensor t = zeros({2});
  EXPECT_THROW_HAS(t.to(kCUDA), RuntimeError, "graft was built without CUDA");
  EXPECT_THROW_HAS(t.to(Device("cuda:1"), kFloat64), RuntimeError, "graft was built without CUDA");
}

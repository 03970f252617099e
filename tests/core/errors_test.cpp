// Bad input: every public op throws a typed graft error naming the op and the shapes or
// dtypes involved, never crashes (this suite also runs under ASan/UBSan).
#include <cmath>
#include <functional>

#include "graft/core/checked_math.h"
#include "support/test_util.h"

using namespace graft;

namespace {
Tensor f2x3() { return arange(6.0).view({2, 3}); }
Tensor idx(std::vector<int64_t> v) { return tensor(v); }
}  // namespace

TEST(Errors, UndefinedTensorArguments) {
  const Tensor u;
  const Tensor x = ones({2});
  const Tensor m = ones({2, 2});
  const Tensor bmask = ones({2}, kBool);
  std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"add", [&] { add(u, x); }},
      {"add", [&] { add(x, u); }},
      {"add", [&] { add(u, 1); }},
      {"sub", [&] { sub(u, x); }},
      {"mul", [&] { mul(x, u); }},
      {"mul", [&] { mul(u, 2.0); }},
      {"div", [&] { div(u, x); }},
      {"div", [&] { div(u, 2); }},
      {"neg", [&] { neg(u); }},
      {"pow", [&] { pow(u, 2); }},
      {"pow", [&] { pow(x, u); }},
      {"pow", [&] { pow(2.0, u); }},
      {"exp", [&] { exp(u); }},
      {"log", [&] { log(u); }},
      {"log1p", [&] { log1p(u); }},
      {"sqrt", [&] { sqrt(u); }},
      {"rsqrt", [&] { rsqrt(u); }},
      {"abs", [&] { abs(u); }},
      {"sign", [&] { sign(u); }},
      {"sin", [&] { sin(u); }},
      {"cos", [&] { cos(u); }},
      {"tanh", [&] { tanh(u); }},
      {"sigmoid", [&] { sigmoid(u); }},
      {"erf", [&] { erf(u); }},
      {"relu", [&] { relu(u); }},
      {"gelu", [&] { gelu(u); }},
      {"silu", [&] { silu(u); }},
      {"softplus", [&] { softplus(u); }},
      {"clamp", [&] { clamp(u, 0); }},
      {"where", [&] { where(u, x, x); }},
      {"where", [&] { where(bmask, u, x); }},
      {"where", [&] { where(bmask, x, u); }},
      {"where", [&] { where(bmask, u, 1.0); }},
      {"where", [&] { where(bmask, 1.0, u); }},
      {"maximum", [&] { maximum(u, x); }},
      {"minimum", [&] { minimum(x, u); }},
      {"eq", [&] { eq(u, x); }},
      {"ne", [&] { ne(u, 1); }},
      {"lt", [&] { lt(x, u); }},
      {"le", [&] { le(u, 1); }},
      {"gt", [&] { gt(u, x); }},
      {"ge", [&] { ge(u, 1); }},
      {"logical_and", [&] { logical_and(u, bmask); }},
      {"logical_or", [&] { logical_or(bmask, u); }},
      {"logical_not", [&] { logical_not(u); }},
      {"isnan", [&] { isnan(u); }},
      {"allclose", [&] { allclose(u, x); }},
      {"equal", [&] { equal(x, u); }},
      {"sum", [&] { sum(u); }},
      {"mean", [&] { mean(u); }},
      {"prod", [&] { prod(u); }},
      {"max", [&] { max(u); }},
      {"min", [&] { min(u); }},
      {"max", [&] { max(u, 0); }},
      {"min", [&] { min(u, 0); }},
      {"argmax", [&] { argmax(u); }},
      {"argmin", [&] { argmin(u, 0); }},
      {"var", [&] { var(u); }},
      {"std", [&] { graft::std(u); }},
      {"logsumexp", [&] { logsumexp(u, {0}); }},
      {"softmax", [&] { softmax(u, 0); }},
      {"log_softmax", [&] { log_softmax(u, 0); }},
      {"sum_to", [&] { sum_to(u, {1}); }},
      {"matmul", [&] { matmul(u, m); }},
      {"mm", [&] { mm(m, u); }},
      {"bmm", [&] { bmm(u, u); }},
      {"linear", [&] { linear(u, m); }},
      {"linear", [&] { linear(m, u); }},
      {"cat",
       [&] {
         cat({x, u});
       }},
      {"stack", [&] { stack({u}); }},
      {"split", [&] { split(u, 1); }},
      {"split_with_sizes", [&] { split_with_sizes(u, {1}); }},
      {"chunk", [&] { chunk(u, 1); }},
      {"index_select", [&] { index_select(u, 0, idx({0})); }},
      {"index_select", [&] { index_select(x, 0, u); }},
      {"index_add", [&] { index_add(u, 0, idx({0}), x); }},
      {"index_add", [&] { index_add(x, 0, u, x); }},
      {"index_add", [&] { index_add(x, 0, idx({0}), u); }},
      {"gather", [&] { gather(u, 0, idx({0})); }},
      {"gather", [&] { gather(x, 0, u); }},
      {"scatter_add", [&] { scatter_add(u, 0, idx({0}), x); }},
      {"scatter_add", [&] { scatter_add(x, 0, u, x); }},
      {"scatter_add", [&] { scatter_add(x, 0, idx({0}), u); }},
      {"masked_fill", [&] { masked_fill(u, bmask, 0); }},
      {"masked_fill", [&] { masked_fill(x, u, 0); }},
      {"clone", [&] { clone(u); }},
      {"as_strided_scatter", [&] { as_strided_scatter(u, x, {2}, {1}, 0); }},
      {"as_strided_scatter", [&] { as_strided_scatter(x, u, {2}, {1}, 0); }},
      {"empty_like", [&] { empty_like(u); }},
      {"zeros_like", [&] { zeros_like(u); }},
      {"ones_like", [&] { ones_like(u); }},
      {"full_like", [&] { full_like(u, 1); }},
      {"rand_like", [&] { rand_like(u); }},
      {"randn_like", [&] { randn_like(u); }},
      {"randint_like", [&] { randint_like(u, 0, 2); }},
      // Tensor methods
      {"view", [&] { u.view({1}); }},
      {"reshape", [&] { u.reshape({1}); }},
      {"transpose", [&] { u.transpose(0, 1); }},
      {"t", [&] { u.t(); }},
      {"permute", [&] { u.permute({0}); }},
      {"expand", [&] { u.expand({1}); }},
      {"expand", [&] { x.expand_as(u); }},
      {"squeeze", [&] { u.squeeze(); }},
      {"unsqueeze", [&] { u.unsqueeze(0); }},
      {"flatten", [&] { u.flatten(); }},
      {"narrow", [&] { u.narrow(0, 0, 1); }},
      {"select", [&] { u.select(0, 0); }},
      {"slice", [&] { u.slice(0); }},
      {"as_strided", [&] { u.as_strided({1}, {1}); }},
      {"contiguous", [&] { u.contiguous(); }},
      {"to", [&] { u.to(kFloat64); }},
      {"to", [&] { u.to(kCPU); }},
      {"to", [&] { x.to(u); }},
      {"item", [&] { u.item(); }},
      {"to_vector", [&] { u.to_vector<float>(); }},
      {"size", [&] { u.size(0); }},
      {"stride", [&] { u.stride(0); }},
      {"data_ptr", [&] { u.data_ptr<float>(); }},
      {"add_",
       [&] {
         Tensor v;
         v.add_(x);
       }},
      {"add_",
       [&] {
         Tensor v = ones({2});
         v.add_(u);
       }},
      {"mul_",
       [&] {
         Tensor v;
         v.mul_(2);
       }},
      {"fill_",
       [&] {
         Tensor v;
         v.fill_(1);
       }},
      {"zero_",
       [&] {
         Tensor v;
         v.zero_();
       }},
      {"copy_",
       [&] {
         Tensor v;
         v.copy_(x);
       }},
      {"copy_",
       [&] {
         Tensor v = ones({2});
         v.copy_(u);
       }},
      {"clamp_",
       [&] {
         Tensor v;
         v.clamp_(0);
       }},
      {"relu_",
       [&] {
         Tensor v;
         v.relu_();
       }},
      {"div_",
       [&] {
         Tensor v = ones({2});
         v.div_(u);
       }},
      {"sub_",
       [&] {
         Tensor v = ones({2});
         v.sub_(u);
       }},
  };
  for (auto& [name, fn] : calls) {
    try {
      fn();
      ADD_FAILURE() << name << ": no error for an undefined tensor";
    } catch (const ValueError& e) {
      std::string what = e.what();
      std::string op = name;  // an in-place op may report its out-of-place form (add_ -> add)
      if (what.find(op) == std::string::npos && op.back() == '_') op.pop_back();
      EXPECT_NE(what.find(op), std::string::npos) << "message does not name the op: " << what;
      EXPECT_NE(what.find("undefined"), std::string::npos) << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": expected ValueError, got: " << e.what();
    }
  }
}

TEST(Errors, DimOutOfRange) {
  Tensor a = f2x3();
  const char* msg = "Dimension out of range (expected to be in range of [-2, 1], but got 2)";
  EXPECT_THROW_HAS(a.size(2), IndexError, msg);
  EXPECT_THROW_HAS(a.stride(-3), IndexError, "but got -3)");
  EXPECT_THROW_HAS(a.transpose(0, 2), IndexError, msg);
  EXPECT_THROW_HAS(a.select(2, 0), IndexError, msg);
  EXPECT_THROW_HAS(a.narrow(2, 0, 1), IndexError, msg);
  EXPECT_THROW_HAS(a.slice(2), IndexError, msg);
  EXPECT_THROW_HAS(a.squeeze(2), IndexError, msg);
  EXPECT_THROW_HAS(a.flatten(0, 2), IndexError, msg);
  EXPECT_THROW_HAS(a.permute({0, 2}), IndexError, msg);
  EXPECT_THROW_HAS(sum(a, {2}), IndexError, msg);
  EXPECT_THROW_HAS(a.sum({2}), IndexError, msg);
  EXPECT_THROW_HAS(mean(a, {-3}), IndexError, "but got -3)");
  EXPECT_THROW_HAS(prod(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(max(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(min(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(argmax(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(argmin(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(var(a, {2}), IndexError, msg);
  EXPECT_THROW_HAS(graft::std(a, {2}), IndexError, msg);
  EXPECT_THROW_HAS(logsumexp(a, {2}), IndexError, msg);
  EXPECT_THROW_HAS(softmax(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(log_softmax(a, 2), IndexError, msg);
  EXPECT_THROW_HAS(cat({a, a}, 2), IndexError, msg);
  EXPECT_THROW_HAS(stack({a, a}, 3), IndexError,
                   "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  EXPECT_THROW_HAS(split(a, 1, 2), IndexError, msg);
  EXPECT_THROW_HAS(chunk(a, 1, 2), IndexError, msg);
  EXPECT_THROW_HAS(index_select(a, 2, idx({0})), IndexError, msg);
  EXPECT_THROW_HAS(gather(a, 2, idx({0, 0}).view({1, 2})), IndexError, msg);
  EXPECT_THROW_HAS(scatter_add(a, 2, idx({0, 0}).view({1, 2}), a), IndexError, msg);
  EXPECT_THROW_HAS(index_add(a, 2, idx({0}), a), IndexError, msg);
  EXPECT_THROW_HAS(sum(a, {0, 0}), RuntimeError, "dim 0 appears multiple times in the list of dims");
  // the message is PyTorch's whole: no op named before it
  for (auto call : {std::function<void()>([&] { softmax(a, 2); }), std::function<void()>([&] { a.select(2, 0); })}) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const IndexError& e) {
      EXPECT_EQ(std::string(e.what()), msg);
    }
  }
  // 0-d tensors
  Tensor s = scalar_tensor(1.0);
  EXPECT_THROW_HAS(s.size(0), IndexError, "dimension specified as 0 but tensor has no dimensions");
  EXPECT_THROW_HAS(s.select(0, 0), IndexError, "select() cannot be applied to a 0-dim tensor.");
  EXPECT_THROW_HAS(s.slice(0), IndexError, "slice() cannot be applied to a 0-dim tensor.");
  EXPECT_THROW_HAS(s.narrow(0, 0, 1), RuntimeError, "narrow() cannot be applied to a 0-dim tensor.");
  EXPECT_THROW_HAS(sum(s, {1}), IndexError, "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  EXPECT_THROW_HAS(cat({s, s}), RuntimeError, "zero-dimensional tensor (at position 0) cannot be concatenated");
}

TEST(Errors, IndexOutOfRange) {
  Tensor a = f2x3();
  EXPECT_THROW_MSG(a.select(0, 2), IndexError,
                   "select(): index 2 out of range for tensor of size [2, 3] at dimension 0");
  EXPECT_THROW_HAS(a.select(1, -4), IndexError,
                   "select(): index -4 out of range for tensor of size [2, 3] at dimension 1");
  EXPECT_THROW_HAS(a[5], IndexError, "index 5 out of range");
  EXPECT_THROW_HAS(a.narrow(1, 2, 2), RuntimeError, "start (2) + length (2) exceeds dimension size (3).");
  EXPECT_THROW_HAS(a.narrow(1, 4, 0), IndexError, "start out of range");
  EXPECT_THROW_HAS(a.narrow(1, 0, -1), RuntimeError, "length (-1)");
  EXPECT_THROW_MSG(index_select(a, 1, idx({0, 3})), IndexError, "index out of range in self");
  EXPECT_THROW_MSG(index_select(a, 1, idx({-1})), IndexError, "index out of range in self");
  EXPECT_THROW_HAS(index_select(a, 0, idx({0, 1}).view({1, 2})), IndexError, "Index is supposed to be a vector");
  EXPECT_THROW_MSG(gather(a, 1, tensor(std::vector<int64_t>{0, 5, 1, 1}).view({2, 2})), RuntimeError,
                   "index 5 is out of bounds for dimension 1 with size 3");
  EXPECT_THROW_HAS(gather(a, 1, idx({0, 1})), RuntimeError, "Index tensor must have the same number of dimensions");
  EXPECT_THROW_HAS(gather(a, 1, zeros({3, 1}, kInt64)), RuntimeError, "Size does not match at dimension 0");
  EXPECT_THROW_MSG(scatter_add(a, 1, tensor(std::vector<int64_t>{3}).view({1, 1}), ones({1, 1})), RuntimeError,
                   "index 3 is out of bounds for dimension 1 with size 3");
  EXPECT_THROW_MSG(index_add(a, 0, idx({2}), ones({1, 3})), IndexError, "index out of range in self");
  EXPECT_THROW_HAS(index_add(a, 0, idx({0, 1}), ones({1, 3})), RuntimeError,
                   "Number of indices (2) should be equal to source.size(dim) (1)");
  EXPECT_THROW_HAS(index_add(a, 0, idx({0}), ones({1, 2})), RuntimeError, "must have same slice shapes");
}

TEST(Errors, WrongIndexDtype) {
  Tensor a = f2x3();
  EXPECT_THROW_HAS(index_select(a, 0, tensor({0.0})), TypeError,
                   "index_select(): Expected dtype int64 for index but got graft.float32");
  EXPECT_THROW_HAS(gather(a, 0, zeros({1, 1}, kBool)), TypeError, "gather(): Expected dtype int64 for index");
  EXPECT_THROW_HAS(scatter_add(a, 0, zeros({1, 1}), a), TypeError, "scatter_add(): Expected dtype int64 for index");
  EXPECT_THROW_HAS(index_add(a, 0, tensor({0.0}), ones({1, 3})), TypeError, "index_add(): Expected dtype int64");
  // int32 indices are accepted
  EXPECT_EQ(index_select(a, 1, tensor(std::vector<int32_t>{2})).to_vector<float>(), (std::vector<float>{2, 5}));
  EXPECT_THROW_HAS(scatter_add(a, 0, zeros({1, 1}, kInt64), ones({1, 1}, kFloat64)), RuntimeError,
                   "scatter_add(): Expected self.dtype to be equal to src.dtype");
}

TEST(Errors, MatmulShapes) {
  EXPECT_THROW_MSG(mm(zeros({2, 3}), zeros({4, 5})), RuntimeError,
                   "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_THROW_HAS(mm(zeros({3}), zeros({3, 3})), RuntimeError,
                   "mm: self must be a matrix, got 1-D tensor of shape [3]");
  EXPECT_THROW_HAS(mm(zeros({3, 3}), zeros({3, 3, 1})), RuntimeError, "mat2 must be a matrix");
  EXPECT_THROW_HAS(mm(zeros({2, 2}), zeros({2, 2}, kFloat64)), RuntimeError,
                   "expected mat1 and mat2 to have the same dtype, but got: float != double");
  EXPECT_THROW_HAS(mm(zeros({2, 2}, kBool), zeros({2, 2}, kBool)), RuntimeError, "not implemented for 'Bool'");
  EXPECT_THROW_HAS(bmm(zeros({2, 2}), zeros({2, 2, 2})), RuntimeError, "batch1 must be a 3D tensor, got shape [2, 2]");
  EXPECT_THROW_HAS(bmm(zeros({2, 2, 3}), zeros({2, 4, 2})), RuntimeError,
                   "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [2, 4].");
  EXPECT_THROW_HAS(bmm(zeros({2, 2, 3}), zeros({3, 3, 2})), RuntimeError,
                   "Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3].");
  EXPECT_THROW_HAS(matmul(zeros({3}), zeros({4})), RuntimeError,
                   "inconsistent tensor size, expected tensor [3] and src [4]");
  EXPECT_THROW_HAS(matmul(scalar_tensor(1.0), zeros({2})), RuntimeError,
                   "both arguments to matmul need to be at least 1D, but they are 0D and 1D");
  EXPECT_THROW_HAS(matmul(zeros({2, 3}), zeros({4})), RuntimeError,
                   "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x1)");
  EXPECT_THROW_HAS(matmul(zeros({2, 2, 3}), zeros({4, 5})), RuntimeError,
                   "mat1 and mat2 shapes cannot be multiplied (4x3 and 4x5)");
  EXPECT_THROW_HAS(matmul(zeros({2, 2, 3}), zeros({3, 4, 5})), RuntimeError, "[2, 2, 3]");
  EXPECT_THROW_HAS(matmul(zeros({2, 2, 3}), zeros({3, 3, 5})), RuntimeError,
                   "The size of tensor a (2) must match the size of tensor b (3)");
  EXPECT_THROW_HAS(linear(zeros({2, 3}), zeros({4, 5})), RuntimeError,
                   "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)");
  EXPECT_THROW_HAS(linear(zeros({2, 3}), zeros({4, 3}), zeros({5})), RuntimeError,
                   "The size of tensor a (4) must match the size of tensor b (5)");
  EXPECT_THROW_HAS(linear(zeros({2, 3}), zeros({1, 4, 3})), RuntimeError, "weight must be 1-D or 2-D");
}

TEST(Errors, CatStackSplit) {
  EXPECT_THROW_HAS(cat({zeros({2, 3}), zeros({2, 4})}), RuntimeError,
                   "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor "
                   "number 1 in the list.");
  EXPECT_THROW_HAS(cat({zeros({2, 3}), zeros({3})}), RuntimeError,
                   "Tensors must have same number of dimensions: got 2 and 1");
  EXPECT_THROW_MSG(cat({}), RuntimeError, "torch.cat(): expected a non-empty list of Tensors");
  EXPECT_THROW_MSG(stack({}), RuntimeError, "stack expects a non-empty TensorList");
  EXPECT_THROW_HAS(stack({zeros({2}), zeros({3})}), RuntimeError,
                   "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1");
  EXPECT_THROW_HAS(split(zeros({4}), -1), RuntimeError,
                   "split expects split_size be non-negative, but got split_size=-1");
  EXPECT_THROW_HAS(split(zeros({4}), 0), RuntimeError, "split_size can only be 0 if dimension size is 0");
  EXPECT_THROW_HAS(split_with_sizes(zeros({4}), {5, -1}), RuntimeError,
                   "split_with_sizes expects split_sizes have only non-negative entries");
  EXPECT_THROW_HAS(split(scalar_tensor(1.0), 1), RuntimeError, "split expects at least a 1-dimensional tensor");
  EXPECT_THROW_HAS(chunk(scalar_tensor(1.0), 1), RuntimeError, "chunk expects at least a 1-dimensional tensor");
  EXPECT_THROW_HAS(chunk(zeros({4}), -2), RuntimeError, "chunk expects `chunks` to be greater than 0, got: -2");
}

TEST(Errors, ViewExpandShapes) {
  Tensor a = f2x3();
  EXPECT_THROW_HAS(a.view({4}), RuntimeError, "shape '[4]' is invalid for input of size 6");
  EXPECT_THROW_HAS(a.view({-2, 3}), RuntimeError, "invalid shape dimension -2");
  EXPECT_THROW_HAS(a.reshape({5, -1}), RuntimeError, "shape '[5, -1]' is invalid for input of size 6");
  EXPECT_THROW_HAS(a.t().view({6}), RuntimeError, "view size is not compatible with input tensor's size and stride");
  EXPECT_THROW_HAS(a.expand({2, 4}), RuntimeError,
                   "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1. "
                   " Target sizes: [2, 4].  Tensor sizes: [2, 3]");
  EXPECT_THROW_HAS(a.expand({-1, 3, 3}), RuntimeError,
                   "expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension 0");
  EXPECT_THROW_HAS(
      a.expand({6}), RuntimeError,
      "the number of sizes provided (1) must be greater or equal to the number of dimensions in the tensor (2)");
  EXPECT_THROW_HAS(a.expand({2, -2}), RuntimeError, "The expanded size of the tensor (-2)");
  EXPECT_THROW_HAS(sum_to(a, {4}), RuntimeError, "sum_to: size [4] is not expandable to size [2, 3]");
  EXPECT_THROW_HAS(sum_to(zeros({3}), {2, 3}), RuntimeError, "sum_to: size [2, 3] is not expandable to size [3]");
  EXPECT_THROW_HAS(as_strided_scatter(zeros({4}), zeros({3}), {2}, {1}, 0), RuntimeError,
                   "expected src to have a size equal to the slice of self");
  EXPECT_THROW_HAS(as_strided_scatter(zeros({4}), zeros({3}), {3}, {2}, 0), RuntimeError,
                   "lies outside the 4 elements of self");
  EXPECT_THROW_HAS(a.as_strided({2, 2}, {-1, 1}), RuntimeError, "as_strided: negative size or stride");
  EXPECT_THROW_HAS(as_strided_scatter(zeros({4}), zeros({2}), {2}, {-1}, 0), RuntimeError, "negative stride");
  EXPECT_THROW_HAS(as_strided_scatter(zeros({4}), zeros({2}), {2}, {1}, -1), RuntimeError,
                   "Negative storage offset -1");
  EXPECT_THROW_HAS(as_strided_scatter(zeros({4}), zeros({2}), {2}, {1, 1}, 0), RuntimeError, "mismatch in length");
}

TEST(Errors, DtypeRequirements) {
  Tensor i = arange(4).view({2, 2});
  EXPECT_THROW_HAS(softmax(i, 0), RuntimeError, "softmax: expected a floating point tensor but got graft.int64");
  EXPECT_THROW_HAS(log_softmax(i, 0), RuntimeError,
                   "log_softmax: expected a floating point tensor but got graft.int64");
  EXPECT_THROW_MSG(
      mean(i), RuntimeError,
      "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long");
  EXPECT_THROW_HAS(i.mean({0}), RuntimeError, "Got: Long");
  EXPECT_THROW_HAS(var(i), RuntimeError, "var");
  EXPECT_THROW_HAS(graft::std(i), RuntimeError, "std");
  // logsumexp upcasts integral input to the default float dtype, as PyTorch does
  EXPECT_NEAR(logsumexp(tensor(std::vector<int64_t>{1, 0}), {0}).item<double>(), 1.3132617, 1e-5);
  EXPECT_THROW_HAS(gelu(i), RuntimeError, "gelu: expected a floating point tensor but got graft.int64");
  EXPECT_THROW_MSG(gelu(ones({1}), "fast"), RuntimeError, "approximate argument must be either none or tanh.");
  EXPECT_THROW_HAS(softplus(i), RuntimeError, "\"softplus_cpu\" not implemented for 'Long'");
  EXPECT_THROW_MSG(where(i, i, i), RuntimeError,
                   "where expected condition to be a boolean tensor, but got a tensor with dtype Long");
  EXPECT_THROW_HAS(where(ones({2}), 1.0, ones({2})), RuntimeError, "where expected condition to be a boolean tensor");
  EXPECT_THROW_HAS(masked_fill(ones({2}), ones({2}), 0), RuntimeError,
                   "masked_fill_ only supports boolean masks, but got mask with dtype graft.float32");
  // a float value is truncated into an integer tensor (PyTorch); one that does not fit raises c10's text
  EXPECT_EQ(masked_fill(i, ones({2, 2}, kBool), 1.5).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_THROW_HAS(masked_fill(i, ones({2, 2}, kBool), 1e30), RuntimeError,
                   "value cannot be converted to type int64_t without overflow");
  EXPECT_THROW_MSG(masked_fill(ones({3}), ones({2}, kBool), 1), RuntimeError,
                   "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
  EXPECT_THROW_HAS(ones({2}, kBool) - ones({2}, kBool), RuntimeError,
                   "Subtraction, the `-` operator, with two bool tensors is not supported");
  EXPECT_THROW_HAS(ones({2}, kBool) - true, RuntimeError, "Subtraction");
  EXPECT_THROW_HAS(add(i, i, 1.5), RuntimeError,
                   "For integral input tensors, argument alpha must not be a floating point number.");
  EXPECT_THROW_HAS(clamp(ones({2}), std::nullopt, std::nullopt), RuntimeError,
                   "clamp: At least one of 'min' or 'max' must not be None");
  // a bool tensor is clamped only as another dtype a bound promotes it to (PyTorch's int64 here)
  EXPECT_THROW_HAS(clamp(ones({2}, kBool), true), RuntimeError, "clamp: not implemented for 'Bool'");
  EXPECT_EQ(clamp(ones({2}, kBool), 0).dtype(), kInt64);
  Tensor b = ones({2}, kBool);
  EXPECT_THROW_HAS(b.clamp_(0), RuntimeError, "result type Long can't be cast to the desired output type Bool");
}

TEST(Errors, Reductions) {
  EXPECT_THROW_HAS(max(zeros({0})), RuntimeError,
                   "max(): Expected reduction dim to be specified for input.numel() == 0");
  EXPECT_THROW_HAS(min(zeros({0, 2})), RuntimeError, "min(): Expected reduction dim");
  EXPECT_THROW_HAS(argmax(zeros({0})), IndexError,
                   "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  EXPECT_THROW_HAS(max(zeros({0, 2}), 0), IndexError, "Expected reduction dim 0 to have non-zero size");
  EXPECT_THROW_HAS(argmin(zeros({2, 0}), 1), IndexError, "Expected reduction dim 1 to have non-zero size");
  EXPECT_THROW_HAS(ones({2}).sum(IntArrayRef{}), ValueError, "sum: dims must not be empty");
  // sums of empty tensors are fine
  EXPECT_EQ(sum(zeros({0})).item<float>(), 0.0f);
  EXPECT_EQ(prod(zeros({0})).item<float>(), 1.0f);
}

TEST(Errors, InPlace) {
  Tensor i = arange(3);
  EXPECT_THROW_HAS(i.add_(ones({3})), RuntimeError, "result type Float can't be cast to the desired output type Long");
  EXPECT_THROW_HAS(i.mul_(1.5), RuntimeError, "can't be cast to the desired output type Long");
  EXPECT_THROW_HAS(i.div_(2), RuntimeError, "can't be cast to the desired output type Long");
  Tensor f = ones({3});
  EXPECT_THROW_HAS(f.add_(ones({2, 3})), RuntimeError,
                   "output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_THROW_HAS(f.add_(ones({2})), RuntimeError, "The size of tensor a (3) must match the size of tensor b (2)");
  EXPECT_THROW_MSG(f.copy_(ones({2})), RuntimeError,
                   "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 0");
  EXPECT_THROW_HAS(f.copy_(ones({2, 3})), RuntimeError,
                   "copy_: the source of shape [2, 3] cannot be broadcast to the destination of shape [3]");
  EXPECT_THROW_HAS(i.fill_(1e30), RuntimeError, "value cannot be converted to type int64_t without overflow");
  Tensor b = ones({2}, kBool);
  EXPECT_THROW_HAS(b.add_(ones({2}, kInt64)), RuntimeError, "can't be cast to the desired output type Bool");
  // a failed in-place op leaves self untouched
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
}

TEST(Errors, Factories) {
  EXPECT_THROW_HAS(empty({-1}), RuntimeError, "Trying to create tensor with negative dimension -1");
  EXPECT_THROW_HAS(zeros({2, -2}), RuntimeError, "negative dimension -2: [2, -2]");
  EXPECT_THROW_HAS(empty_strided({2}, {1, 1}), ValueError,
                   "empty_strided: sizes [2] and strides [1, 1] must have the same length");
  EXPECT_THROW_HAS(empty_strided({2}, {-1}), ValueError, "empty_strided: negative size or stride");
  EXPECT_THROW_HAS(linspace(0, 1, -5), RuntimeError, "linspace: number of steps must be non-negative, got -5");
  EXPECT_THROW_HAS(eye(-2), RuntimeError, "eye: n and m must be non-negative, got -2 and -2");
  EXPECT_THROW_HAS(randint(5, 2, {3}), RuntimeError,
                   "random_ expects 'from' to be less than 'to', but got from=5 >= to=2");
  EXPECT_THROW_HAS(arange(0, 1, 0), RuntimeError, "arange: step must be nonzero");
  EXPECT_THROW_HAS(arange(0.0, NAN), RuntimeError, "arange: unsupported range");
  EXPECT_THROW_MSG(rand({2}, kBool), RuntimeError, "\"check_uniform_bounds\" not implemented for 'Bool'");
}

// Found in review: sizes whose byte count overflows, and strided layouts whose extent
// overflows, raise instead of allocating a wrapped-around size.
TEST(Errors, StorageSizeOverflow) {
  EXPECT_THROW_HAS(ones({int64_t{1} << 61}, TensorOptions(kFloat64)), RuntimeError,
                   "Storage size calculation overflowed");
  EXPECT_THROW_HAS(empty({int64_t{1} << 40, int64_t{1} << 40}), RuntimeError, "Storage size calculation overflowed");
  EXPECT_THROW_HAS(ones({1}).as_strided({2}, {INT64_MAX}), RuntimeError, "Storage size calculation overflowed");
  EXPECT_THROW_HAS(empty_strided({3, 3}, {INT64_MAX / 2, 1}), RuntimeError, "Storage size calculation overflowed");
}

// Sizes computed from user numbers never wrap (graft/core/checked_math.h): a window of 2**63 - 1
// raised nothing and looped over it; 2**62 x 4 output cells wrote through a wrapped size.
TEST(Errors, SizeArithmeticFromUserNumbersIsChecked) {
  Tensor x = randn({1, 1, 4, 4});
  EXPECT_THROW_HAS(max_pool2d(x, {INT64_MAX}), RuntimeError, "integer out of range");
  EXPECT_THROW_HAS(avg_pool2d(x, {int64_t{1} << 31}), RuntimeError, "integer out of range");
  EXPECT_THROW_HAS(adaptive_avg_pool2d(x, {int64_t{1} << 62, 4}), RuntimeError,
                   "numel: integer multiplication overflow");
  EXPECT_THROW_HAS(pad(x, {INT64_MAX, INT64_MAX}), RuntimeError, "integer addition overflow");
  EXPECT_THROW_HAS(ones({4}).repeat({int64_t{1} << 62}), RuntimeError, "integer multiplication overflow");
  EXPECT_THROW_HAS(conv2d(x, randn({1, 1, 3, 3}), {}, {1}, IntArrayRef{0}, {int64_t{1} << 62}), RuntimeError,
                   "overflow");
  EXPECT_EQ(checked_mul(int64_t{1} << 31, 4), int64_t{1} << 33);
  EXPECT_THROW_HAS(checked_mul(INT64_MAX, 2), RuntimeError, "integer multiplication overflow");
  EXPECT_THROW_HAS(checked_sub(INT64_MIN, 1), RuntimeError, "integer subtraction overflow");
}

// A Python number stored into a tensor: c10's checked conversion and its text.
TEST(Errors, ScalarsThatDoNotFitTheDtypeRaise) {
  EXPECT_THROW_HAS(Scalar(int64_t{1} << 40).checked_to<int32_t>(), RuntimeError,
                   "value cannot be converted to type int without overflow");
  EXPECT_THROW_HAS(Scalar(1e300).checked_to<float>(), RuntimeError,
                   "value cannot be converted to type float without overflow");
  EXPECT_THROW_HAS(Scalar(std::nan("")).checked_to<int64_t>(), RuntimeError, "type int64_t without overflow");
  EXPECT_TRUE(std::isinf(Scalar(std::numeric_limits<double>::infinity()).checked_to<float>()));
  EXPECT_TRUE(std::isnan(Scalar(std::nan("")).checked_to<double>()));
  EXPECT_EQ(Scalar(-2147483648LL).checked_to<int32_t>(), INT32_MIN);
  EXPECT_EQ(Scalar(5).checked_to<bool>(), true);
  Tensor t = tensor(std::vector<int64_t>{1, 2}).to(kInt32);
  EXPECT_THROW_HAS(t.clamp_(std::nullopt, Scalar(int64_t{1} << 40)), RuntimeError, "type int without overflow");
  EXPECT_THROW_HAS(full({2}, int64_t{1} << 40, TensorOptions(kInt32)), RuntimeError, "type int without overflow");
  EXPECT_THROW_HAS(where(ones({2}, kBool), t, Scalar(int64_t{1} << 40)), RuntimeError, "type int without overflow");
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
}

// scatter_add / gather treat 0-d tensors as 1-d of size 1, and src must cover index.
TEST(Errors, ScatterAddSrcMustCoverIndex) {
  EXPECT_THROW_HAS(scatter_add(zeros({}), 0, zeros({1000}, TensorOptions(kInt64)), ones({1})), RuntimeError,
                   "to be smaller than src");
  EXPECT_THROW_HAS(scatter_add(zeros({3}), 0, zeros({}, TensorOptions(kInt64)), empty({0})), RuntimeError,
                   "to be smaller than src");
  EXPECT_THROW_HAS(scatter_add(zeros({3, 2}), 0, zeros({2, 2}, TensorOptions(kInt64)), ones({2})), RuntimeError,
                   "same number of dimensions as src");
  Tensor r = scatter_add(zeros({}), 0, zeros({}, TensorOptions(kInt64)), full({}, 2.0));
  EXPECT_EQ(r.item<double>(), 2.0);
}

// as_strided_scatter on an empty base cannot write a one-element window.
TEST(Errors, AsStridedScatterEmptyBase) {
  EXPECT_THROW_HAS(as_strided_scatter(empty({0}), ones({1}), {1}, {1}, 0), RuntimeError, "lies outside");
  EXPECT_EQ(as_strided_scatter(empty({0}), empty({0}), {0}, {1}, 5).numel(), 0);
}

TEST(Errors, MatmulWithEmptyInnerDimension) {
  Tensor r = matmul(zeros({2, 3, 0}), zeros({0, 4}));
  EXPECT_EQ(r.sizes().vec(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_TRUE(equal(r, zeros({2, 3, 4})));
}

TEST(Errors, SizeArithmeticOverflowRaises) {
  EXPECT_THROW_HAS(ones({1}).view({int64_t{1} << 40, int64_t{1} << 40}), RuntimeError,
                   "is invalid for input of size 1");
  EXPECT_THROW_HAS(ones({1}).expand({int64_t{1} << 40, int64_t{1} << 40}), RuntimeError, "overflow");
  EXPECT_THROW_HAS(arange(INT64_MIN, INT64_MAX), RuntimeError, "too many elements");
}

// Registry entries: in-place ops. Each case applies the op to a clone of input 0 (a non-leaf
// when input 0 requires grad, so gradcheck differentiates through the in-place op) and is
// compared with the out-of-place op; the suite also checks the returned reference is self.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;
using InFn = std::function<Tensor&(Tensor&, const TensorList&)>;  // applies op_ to self

std::vector<Sample> self_other_samples(Domain db = Domain::Any) {
  return {{"2x3_2x3", {rnd({2, 3}), rnd({2, 3}, db)}},
          {"2x3_bcast_3", {rnd({2, 3}), rnd({3}, db)}},
          {"2x3_0d", {rnd({2, 3}), rnd({}, db)}},
          {"0d_0d", {rnd({}), rnd({}, db)}},
          {"empty_0x3_3", {rnd({0, 3}), rnd({3}, db)}}};
}
std::vector<Sample> self_samples(Domain d = Domain::Any, std::vector<double> kinks = {}) {
  return {{"2x3", {rnd({2, 3}, d, kinks)}}, {"0d", {rnd({}, d, kinks)}}, {"empty", {rnd({0, 2}, d, kinks)}}};
}

OpCase inplace(std::string variant, InFn op, TensorFn outplace, RefFn ref, std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [op](const TensorList& x) {
    // self keeps input 0's layout: the NonContiguous check then runs the op on a strided self
    Tensor self =
        x[0].is_contiguous() || x[0].dim() < 2 ? x[0].clone() : x[0].transpose(-1, -2).clone().transpose(-1, -2);
    const uint32_t before = self._version();
    Tensor& ret = op(self, x);
    EXPECT_TRUE(ret.is_same(self)) << "in-place op must return self";
    EXPECT_GT(self._version(), before) << "in-place op must bump the version counter";
    return TensorList{self};
  };
  c.outplace = std::move(outplace);
  c.ref = std::move(ref);
  return c;
}
RefFn ref2(std::function<double(double, double)> f) {
  return [f](const V& x) { return V{zip(x[0], x[1], f)}; };
}
RefFn ref1(std::function<double(double)> f) {
  return [f](const V& x) { return V{map(x[0], f)}; };
}

// In-place op on a view of the clone (rows 0..1 of dim 0): exercises CopySlices.
OpCase on_view(std::string variant, std::function<void(Tensor)> op, std::function<double(double)> f,
               Domain d = Domain::Any) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = {{"3x2", {rnd({3, 2}, d)}}};
  c.fn = [op](const TensorList& x) {
    Tensor self = x[0].clone();
    op(self.narrow(0, 0, 2));
    return TensorList{self};
  };
  c.ref = [f](const V& x) {
    RT out = x[0];
    for (size_t k = 0; k < 4; ++k) out.v[k] = f(out.v[k]);
    return V{out};
  };
  return c;
}

// x.mul_(x): forward only. Backward raises the version-counter error (MulBackward0 saved
// self, which the op then overwrote), as in PyTorch.
OpCase self_alias_forward_only() {
  OpCase c = inplace(
      "self_alias", [](Tensor& s, const TensorList&) -> Tensor& { return s.mul_(s); },
      [](const TensorList& x) { return TensorList{mul(x[0], x[0])}; }, ref1([](double a) { return a * a; }),
      self_samples());
  c.differentiable = false;
  return c;
}

// An in-place op applied to a view of a clone of input 0 (CopySlices), with the remaining
// inputs passed along; `ref` gives the expected clone.
OpCase on_view_with(std::string variant, std::function<void(Tensor&, const TensorList&)> op, RefFn ref,
                    std::vector<Sample> samples) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = std::move(samples);
  c.fn = [op](const TensorList& x) {
    Tensor self = x[0].clone();
    op(self, x);
    return TensorList{self};
  };
  c.ref = std::move(ref);
  return c;
}

// index_put_ along dim 0 of a 2-D self: rows idx[k] get values row k (values [n, C], [C] or 0-d).
RefFn index_put_rows_ref(bool accumulate) {
  return [accumulate](const V& x) {
    RT out = x[0];
    const int64_t rows = x[0].sizes[0], cols = x[0].sizes[1];
    for (int64_t k = 0; k < x[1].numel(); ++k) {
      int64_t row = static_cast<int64_t>(x[1].v[static_cast<size_t>(k)]);
      if (row < 0) row += rows;
      for (int64_t j = 0; j < cols; ++j) {
        const RT& v = x[2];
        const double val = v.dim() == 2   ? v.v[static_cast<size_t>(k * cols + j)]
                           : v.dim() == 1 ? v.v[static_cast<size_t>(j)]
                                          : v.v[0];
        double& dst = out.v[static_cast<size_t>(row * cols + j)];
        dst = accumulate ? dst + val : val;
      }
    }
    return V{out};
  };
}

// pow_, remainder_, floor_divide_ and the bitwise ops' in-place forms.
void register_inplace_arithmetic(Registry& r) {
  r.push_back({"pow_",
               {inplace(
                    "scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.pow_(2); },
                    [](const TensorList& x) { return TensorList{pow(x[0], 2)}; }, ref1([](double a) { return a * a; }),
                    self_samples()),
                inplace(
                    "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.pow_(x[1]); },
                    [](const TensorList& x) { return TensorList{pow(x[0], x[1])}; },
                    ref2([](double a, double b) { return std::pow(a, b); }),
                    {{"2x3_2x3", {rnd({2, 3}, Domain::Positive), rnd({2, 3})}},
                     {"2x3_bcast_3", {rnd({2, 3}, Domain::Positive), rnd({3})}}}),
                on_view(
                    "on_view", [](Tensor v) { v.pow_(3); }, [](double a) { return a * a * a; })}});
  // quotients away from integers, so floor's (zero) gradient is smooth at every sample
  std::vector<Sample> quotients = {
      {"2x3_2x3", {vals({2, 3}, {7.5, -7.5, 1.3, -0.2, 3.9, -5.1}), vals({2, 3}, {2, 2, -0.6, 0.7, -1.7, -2.3})}},
      {"2x3_bcast_3", {vals({2, 3}, {7.5, -7.5, 1.3, -0.2, 3.9, -5.1}), vals({3}, {2, -2, 0.7})}}};
  auto py_mod = [](double a, double b) { return a - b * std::floor(a / b); };
  r.push_back({"remainder_",
               {inplace(
                    "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.remainder_(x[1]); },
                    [](const TensorList& x) { return TensorList{remainder(x[0], x[1])}; }, ref2(py_mod), quotients),
                inplace(
                    "scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.remainder_(0.7); },
                    [](const TensorList& x) { return TensorList{remainder(x[0], 0.7)}; },
                    ref1([py_mod](double a) { return py_mod(a, 0.7); }),
                    {{"2x3", {vals({2, 3}, {1.9, -1.9, 0.2, -0.2, 4.1, -3.3})}}})}});
  r.push_back({"floor_divide_",
               {inplace(
                   "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.floor_divide_(x[1]); },
                   [](const TensorList& x) { return TensorList{div(x[0], x[1], "floor")}; },
                   ref2([](double a, double b) { return std::floor(a / b); }), quotients)}});
  auto bitwise = [](const char* name, std::function<Tensor&(Tensor&, const Tensor&)> op,
                    std::function<Tensor(const Tensor&, const Tensor&)> outplace,
                    std::function<int64_t(int64_t, int64_t)> f) {
    OpCase c = inplace(
        "", [op](Tensor& s, const TensorList& x) -> Tensor& { return op(s, x[1]); },
        [outplace](const TensorList& x) { return TensorList{outplace(x[0], x[1])}; },
        [f](const V& x) {
          return V{zip(
              x[0], x[1],
              [f](double a, double b) {
                return static_cast<double>(f(static_cast<int64_t>(a), static_cast<int64_t>(b)));
              },
              kInt64)};
        },
        {{"int_2x3_3", {ints({2, 3}, {12, -7, 0, 5, 255, -1}), ints({3}, {10, 3, -8})}}});
    c.differentiable = false;
    return OpEntry{name, {c}};
  };
  r.push_back(bitwise(
      "bitwise_and_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.bitwise_and_(o); },
      [](const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }, [](int64_t a, int64_t b) { return a & b; }));
  r.push_back(bitwise(
      "bitwise_or_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.bitwise_or_(o); },
      [](const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }, [](int64_t a, int64_t b) { return a | b; }));
  r.push_back(bitwise(
      "bitwise_xor_", [](Tensor& s, const Tensor& o) -> Tensor& { return s.bitwise_xor_(o); },
      [](const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }, [](int64_t a, int64_t b) { return a ^ b; }));
}

// The random fills, at parameters that leave one value possible (their draws are checked in
// tests/python/test_parity_inplace.py): each writes every element of self, bumps its version
// and gives self a zero gradient, on strided and meta tensors too.
void register_random_fills(Registry& r) {
  auto fill = [](const char* name, std::function<Tensor&(Tensor&)> op, double value) {
    return OpEntry{name,
                   {inplace(
                       "", [op](Tensor& s, const TensorList&) -> Tensor& { return op(s); },
                       [value](const TensorList& x) { return TensorList{full_like(x[0], value)}; },
                       ref1([value](double) { return value; }), self_samples())}};
  };
  r.push_back(fill(
      "uniform_", [](Tensor& s) -> Tensor& { return s.uniform_(1.5, 1.5); }, 1.5));
  r.push_back(fill(
      "normal_", [](Tensor& s) -> Tensor& { return s.normal_(-2, 0); }, -2));
  r.push_back(fill(
      "bernoulli_", [](Tensor& s) -> Tensor& { return s.bernoulli_(1); }, 1));
  r.push_back(fill(
      "random_", [](Tensor& s) -> Tensor& { return s.random_(3, 4); }, 3));
  r.push_back(fill(
      "exponential_", [](Tensor& s) -> Tensor& { return s.exponential_(std::numeric_limits<double>::infinity()); }, 0));
  r.push_back(fill(
      "geometric_", [](Tensor& s) -> Tensor& { return s.geometric_(1 - 0x1p-52); }, 1));
  r.push_back(fill(
      "log_normal_", [](Tensor& s) -> Tensor& { return s.log_normal_(0.5, 1e-300); }, std::exp(0.5)));
  r.push_back(fill(
      "cauchy_", [](Tensor& s) -> Tensor& { return s.cauchy_(-1, 0); }, -1));
}

}  // namespace

// The in-place forms of the products and of lerp, addcmul, addcdiv, nan_to_num: each compared
// with its out-of-place op (whose own reference the registry checks).
void register_inplace_products(Registry& r) {
  auto same_as = [](TensorFn outplace) {  // the reference: the out-of-place op's values
    return [outplace](const V& x) {
      TensorList in;
      for (const RT& t : x) in.push_back(tensor(t.v, TensorOptions(t.dtype)).reshape(t.sizes));
      Tensor out = outplace(in)[0];
      return V{RT{x[0].sizes, out.contiguous().to(kFloat64).reshape({-1}).to_vector<double>(), out.dtype()}};
    };
  };
  auto entry = [&](const char* name, InFn op, TensorFn outplace, std::vector<Sample> samples) {
    r.push_back({name, {inplace("", std::move(op), outplace, same_as(outplace), std::move(samples))}});
  };
  entry(
      "addmm_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.addmm_(x[1], x[2], 0.5, 2); },
      [](const TensorList& x) { return TensorList{addmm(x[0], x[1], x[2], 0.5, 2)}; },
      {{"2x4_2x3_3x4", {rnd({2, 4}), rnd({2, 3}), rnd({3, 4})}}});
  entry(
      "addmv_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.addmv_(x[1], x[2], 0, 1); },
      [](const TensorList& x) { return TensorList{addmv(x[0], x[1], x[2], 0, 1)}; },
      {{"2_2x3_3", {rnd({2}), rnd({2, 3}), rnd({3})}}});
  entry(
      "addr_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.addr_(x[1], x[2]); },
      [](const TensorList& x) { return TensorList{addr(x[0], x[1], x[2])}; },
      {{"3x2_3_2", {rnd({3, 2}), rnd({3}), rnd({2})}}});
  entry(
      "baddbmm_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.baddbmm_(x[1], x[2], 2, -1); },
      [](const TensorList& x) { return TensorList{baddbmm(x[0], x[1], x[2], 2, -1)}; },
      {{"2x2x3_2x2x4_2x4x3", {rnd({2, 2, 3}), rnd({2, 2, 4}), rnd({2, 4, 3})}}});
  entry(
      "addbmm_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.addbmm_(x[1], x[2]); },
      [](const TensorList& x) { return TensorList{addbmm(x[0], x[1], x[2])}; },
      {{"2x3_2x2x4_2x4x3", {rnd({2, 3}), rnd({2, 2, 4}), rnd({2, 4, 3})}}});
  entry(
      "addcmul_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.addcmul_(x[1], x[2], 0.5); },
      [](const TensorList& x) { return TensorList{addcmul(x[0], x[1], x[2], 0.5)}; },
      {{"2x3_3_2x1", {rnd({2, 3}), rnd({3}), rnd({2, 1})}}});
  entry(
      "addcdiv_", [](Tensor& s, const TensorList& x) -> Tensor& { return s.addcdiv_(x[1], x[2], -1); },
      [](const TensorList& x) { return TensorList{addcdiv(x[0], x[1], x[2], -1)}; },
      {{"2x3_3_2x1", {rnd({2, 3}), rnd({3}), rnd({2, 1}, Domain::NonZero)}}});
  r.push_back({"lerp_",
               {inplace(
                    "w0_25", [](Tensor& s, const TensorList& x) -> Tensor& { return s.lerp_(x[1], 0.25); },
                    [](const TensorList& x) { return TensorList{lerp(x[0], x[1], 0.25)}; },
                    same_as([](const TensorList& x) { return TensorList{lerp(x[0], x[1], 0.25)}; }),
                    {{"2x3_3", {rnd({2, 3}), rnd({3})}}}),
                inplace(
                    "w0_75", [](Tensor& s, const TensorList& x) -> Tensor& { return s.lerp_(x[1], 0.75); },
                    [](const TensorList& x) { return TensorList{lerp(x[0], x[1], 0.75)}; },
                    same_as([](const TensorList& x) { return TensorList{lerp(x[0], x[1], 0.75)}; }),
                    {{"2x3_3", {rnd({2, 3}), rnd({3})}}}),
                inplace(
                    "tensor_weight", [](Tensor& s, const TensorList& x) -> Tensor& { return s.lerp_(x[1], x[2]); },
                    [](const TensorList& x) { return TensorList{lerp(x[0], x[1], x[2])}; },
                    same_as([](const TensorList& x) { return TensorList{lerp(x[0], x[1], x[2])}; }),
                    {{"2x3_3_2x1", {rnd({2, 3}), rnd({3}), rnd({2, 1}, Domain::Unit)}}})}});
  OpCase special = inplace(
      "special", [](Tensor& s, const TensorList&) -> Tensor& { return s.nan_to_num_(1, 2, -3); },
      [](const TensorList& x) { return TensorList{nan_to_num(x[0], 1.0, 2.0, -3.0)}; }, ref1([](double a) {
        return std::isnan(a) ? 1 : a == INFINITY ? 2 : a == -INFINITY ? -3 : a;
      }),
      {{"4", {vals({4}, {NAN, INFINITY, -INFINITY, 1.5})}, false}, {"2x3", {rnd({2, 3})}}});
  r.push_back({"nan_to_num_", {special}});
}

void register_inplace(Registry& r) {
  register_inplace_products(r);
  r.push_back({"add_",
               {inplace(
                    "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.add_(x[1]); },
                    [](const TensorList& x) { return TensorList{add(x[0], x[1])}; },
                    ref2([](double a, double b) { return a + b; }), self_other_samples()),
                inplace(
                    "tensor_alpha", [](Tensor& s, const TensorList& x) -> Tensor& { return s.add_(x[1], -2); },
                    [](const TensorList& x) { return TensorList{add(x[0], x[1], -2)}; },
                    ref2([](double a, double b) { return a - 2 * b; }), self_other_samples()),
                inplace(
                    "scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.add_(0.75); },
                    [](const TensorList& x) { return TensorList{add(x[0], 0.75)}; },
                    ref1([](double a) { return a + 0.75; }), self_samples()),
                inplace(
                    "operator", [](Tensor& s, const TensorList& x) -> Tensor& { return s += x[1]; },
                    [](const TensorList& x) { return TensorList{x[0] + x[1]}; },
                    ref2([](double a, double b) { return a + b; }), self_other_samples()),
                on_view(
                    "on_view", [](Tensor v) { v.add_(1.5); }, [](double a) { return a + 1.5; })}});
  r.push_back({"sub_",
               {inplace(
                    "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.sub_(x[1]); },
                    [](const TensorList& x) { return TensorList{sub(x[0], x[1])}; },
                    ref2([](double a, double b) { return a - b; }), self_other_samples()),
                inplace(
                    "tensor_alpha", [](Tensor& s, const TensorList& x) -> Tensor& { return s.sub_(x[1], 0.5); },
                    [](const TensorList& x) { return TensorList{sub(x[0], x[1], 0.5)}; },
                    ref2([](double a, double b) { return a - 0.5 * b; }), self_other_samples()),
                inplace(
                    "scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.sub_(2); },
                    [](const TensorList& x) { return TensorList{sub(x[0], 2)}; }, ref1([](double a) { return a - 2; }),
                    self_samples())}});
  r.push_back({"mul_",
               {inplace(
                    "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.mul_(x[1]); },
                    [](const TensorList& x) { return TensorList{mul(x[0], x[1])}; },
                    ref2([](double a, double b) { return a * b; }), self_other_samples()),
                inplace(
                    "scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.mul_(-3); },
                    [](const TensorList& x) { return TensorList{mul(x[0], -3)}; },
                    ref1([](double a) { return -3 * a; }), self_samples()),
                self_alias_forward_only(),
                on_view(
                    "on_view", [](Tensor v) { v.mul_(2.5); }, [](double a) { return 2.5 * a; })}});
  r.push_back({"div_",
               {inplace(
                    "tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.div_(x[1]); },
                    [](const TensorList& x) { return TensorList{div(x[0], x[1])}; },
                    ref2([](double a, double b) { return a / b; }), self_other_samples(Domain::NonZero)),
                inplace(
                    "scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.div_(0.5); },
                    [](const TensorList& x) { return TensorList{div(x[0], 0.5)}; },
                    ref1([](double a) { return a / 0.5; }), self_samples())}});
  r.push_back({"zero_",
               {inplace(
                    "", [](Tensor& s, const TensorList&) -> Tensor& { return s.zero_(); },
                    [](const TensorList& x) { return TensorList{zeros_like(x[0])}; }, ref1([](double) { return 0.0; }),
                    self_samples()),
                on_view(
                    "on_view", [](Tensor v) { v.zero_(); }, [](double) { return 0.0; })}});
  r.push_back({"fill_",
               {inplace(
                    "", [](Tensor& s, const TensorList&) -> Tensor& { return s.fill_(-1.25); },
                    [](const TensorList& x) { return TensorList{full_like(x[0], -1.25)}; },
                    ref1([](double) { return -1.25; }), self_samples()),
                // fill_(Tensor): the 0-d value's gradient is the sum of self's (FillBackward3)
                inplace(
                    "tensor_value", [](Tensor& s, const TensorList& x) -> Tensor& { return s.fill_(x[1]); },
                    [](const TensorList& x) { return TensorList{x[1].expand_as(x[0]).clone()}; },
                    ref2([](double, double b) { return b; }),
                    {{"2x3_0d", {rnd({2, 3}), rnd({})}}, {"0d_0d", {rnd({}), rnd({})}}})}});
  r.push_back(
      {"copy_",
       {inplace(
            "same_shape", [](Tensor& s, const TensorList& x) -> Tensor& { return s.copy_(x[1]); },
            [](const TensorList& x) { return TensorList{x[1].expand_as(x[0]).clone()}; },
            ref2([](double, double b) { return b; }), self_other_samples()),
        on_view(
            "on_view_scalar_src", [](Tensor v) { v.copy_(full({}, 4.0, kFloat64)); }, [](double) { return 4.0; })}});
  r.push_back(
      {"clamp_",
       {inplace(
            "min_max", [](Tensor& s, const TensorList&) -> Tensor& { return s.clamp_(-0.5, 0.5); },
            [](const TensorList& x) { return TensorList{clamp(x[0], -0.5, 0.5)}; },
            ref1([](double a) { return std::min(std::max(a, -0.5), 0.5); }), self_samples(Domain::Any, {-0.5, 0.5})),
        inplace(
            "min", [](Tensor& s, const TensorList&) -> Tensor& { return s.clamp_(0.0); },
            [](const TensorList& x) { return TensorList{clamp(x[0], 0.0)}; },
            ref1([](double a) { return std::max(a, 0.0); }), self_samples(Domain::NonZero))}});
  // the in-place forms of the unary_float ops (src/ops/ops.yaml)
#define GRAFT_UNARY_FLOAT_CASE(name, domain, reference)                                                           \
  r.push_back(                                                                                                    \
      {#name "_",                                                                                                 \
       {inplace(                                                                                                  \
            "", [](Tensor& s, const TensorList&) -> Tensor& { return s.name##_(); },                              \
            [](const TensorList& x) { return TensorList{name(x[0])}; }, ref1([](double x) { return reference; }), \
            self_samples(Domain::domain)),                                                                        \
        on_view(                                                                                                  \
            "on_view", [](Tensor v) { graft::name##_(v); }, [](double x) { return reference; }, Domain::domain)}});
#include "unary_float_registry.def"
  // and of the unary_keep ops (neg_, abs_, sign_, relu_)
#define GRAFT_UNARY_KEEP_CASE(name, domain, refuses_bool, reference) GRAFT_UNARY_FLOAT_CASE(name, domain, reference)
#include "unary_keep_registry.def"
#undef GRAFT_UNARY_KEEP_CASE
#undef GRAFT_UNARY_FLOAT_CASE
  // and of the unary_rounding ops (samples away from their kinks)
#define GRAFT_UNARY_ROUNDING_CASE(name, copies_integers, reference, ...)                    \
  r.push_back({#name "_",                                                                   \
               {inplace(                                                                    \
                   "", [](Tensor& s, const TensorList&) -> Tensor& { return s.name##_(); }, \
                   [](const TensorList& x) { return TensorList{name(x[0])}; },              \
                   ref1([](double x) { return reference; }), self_samples(Domain::Any, {__VA_ARGS__}))}});
#include "unary_rounding_registry.def"
#undef GRAFT_UNARY_ROUNDING_CASE
  // and of the activation ops that have one (leaky_relu_, elu_, ...), at each argument set
#define GRAFT_ACTIVATION_INPLACE_NoInplace(op, variant, domain, call, reference, ...)
#define GRAFT_ACTIVATION_INPLACE_WithInplace(op, variant, domain, call, reference, ...) \
  if (r.back().name != #op "_") r.push_back({#op "_", {}});                             \
  r.back().cases.push_back(inplace(                                                     \
      variant, [](Tensor& self, const TensorList&) -> Tensor& { return op##_ call; },   \
      [](const TensorList& x) {                                                         \
        const Tensor& self = x[0];                                                      \
        return TensorList{op call};                                                     \
      },                                                                                \
      ref1([](double x) { return reference; }), self_samples(Domain::domain, {__VA_ARGS__})));
#define GRAFT_ACTIVATION_CASE(op, variant, domain, inplace, call, reference, ...) \
  GRAFT_ACTIVATION_INPLACE_##inplace(op, variant, domain, call, reference, __VA_ARGS__)
#include "activation_registry.def"
#undef GRAFT_ACTIVATION_CASE
#undef GRAFT_ACTIVATION_INPLACE_WithInplace
#undef GRAFT_ACTIVATION_INPLACE_NoInplace
  r.push_back({"square_",
               {inplace(
                    "", [](Tensor& s, const TensorList&) -> Tensor& { return s.square_(); },
                    [](const TensorList& x) { return TensorList{square(x[0])}; }, ref1([](double a) { return a * a; }),
                    self_samples(Domain::Any)),
                on_view(
                    "on_view", [](Tensor v) { v.square_(); }, [](double a) { return a * a; })}});
  for (bool lower : {true, false}) {
    auto keep = [lower](int64_t i, int64_t j) { return lower ? j - i <= 1 : j - i >= 1; };
    auto ref = [keep](const V& x) {
      RT out = x[0];
      const int64_t rows = x[0].sizes[0], cols = x[0].sizes[1];
      for (int64_t k = 0; k < rows * cols; ++k)
        if (!keep(k / cols, k % cols)) out.v[static_cast<size_t>(k)] = 0;
      return V{out};
    };
    r.push_back(
        {lower ? "tril_" : "triu_",
         {inplace(
             "diagonal1", [lower](Tensor& s, const TensorList&) -> Tensor& { return lower ? s.tril_(1) : s.triu_(1); },
             [lower](const TensorList& x) { return TensorList{lower ? tril(x[0], 1) : triu(x[0], 1)}; }, ref,
             {{"3x4", {rnd({3, 4})}}, {"2x2", {rnd({2, 2})}}})}});
  }
  r.push_back(
      {"threshold_",
       {inplace(
            "", [](Tensor& s, const TensorList&) -> Tensor& { return threshold_(s, 0.5, -3.0); },
            [](const TensorList& x) { return TensorList{threshold(x[0], 0.5, -3.0)}; },
            ref1([](double a) { return a <= 0.5 ? -3.0 : a; }), self_samples(Domain::Any, {0.5})),
        on_view(
            "on_view", [](Tensor v) { threshold_(v, 0.5, -3.0); }, [](double a) { return a <= 0.5 ? -3.0 : a; })}});
  r.push_back({"masked_fill_",
               {inplace(
                    "", [](Tensor& s, const TensorList& x) -> Tensor& { return s.masked_fill_(x[1], -0.5); },
                    [](const TensorList& x) { return TensorList{masked_fill(x[0], x[1], -0.5)}; },
                    [](const V& x) { return V{zip(x[0], x[1], [](double a, double m) { return m != 0 ? -0.5 : a; })}; },
                    {{"2x3_mask2x3", {rnd({2, 3}), bools({2, 3}, {1, 0, 0, 1, 1, 0})}},
                     {"2x3_bcast_mask3", {rnd({2, 3}), bools({3}, {0, 1, 0})}},
                     {"0d_mask0d", {rnd({}), bools({}, {1})}},
                     {"empty_0x3_mask3", {rnd({0, 3}), bools({3}, {1, 0, 1})}}}),
                on_view_with(
                    "on_view",
                    [](Tensor& self, const TensorList&) {
                      Tensor v = self.narrow(0, 0, 2);  // rows 0..1 of 3x2
                      masked_fill_(v, ne(tensor(std::vector<int64_t>{1, 0}), 0), 3.0);
                    },
                    [](const V& x) {
                      RT out = x[0];
                      out.v[0] = out.v[2] = 3.0;
                      return V{out};
                    },
                    {{"3x2", {rnd({3, 2})}}})}});
  {
    std::vector<Sample> rows = {{"4x3_idx2_v2x3", {rnd({4, 3}), ints({2}, {2, 0}), rnd({2, 3})}},
                                {"4x3_idx2_bcast_v3", {rnd({4, 3}), ints({2}, {-1, 1}), rnd({3})}},
                                {"4x3_idx2_bcast_v0d", {rnd({4, 3}), ints({2}, {3, 1}), rnd({})}},
                                {"4x3_idx_empty", {rnd({4, 3}), ints({0}, {}), rnd({3})}}};
    std::vector<Sample> dups = {{"4x3_idx3_dup_v3x3", {rnd({4, 3}), ints({3}, {1, 3, 1}), rnd({3, 3})}},
                                {"4x3_idx2_dup_bcast_v0d", {rnd({4, 3}), ints({2}, {0, 0}), rnd({})}}};
    r.push_back(
        {"index_put_",
         {inplace(
              "", [](Tensor& s, const TensorList& x) -> Tensor& { return index_put_(s, {x[1]}, x[2]); },
              [](const TensorList& x) { return TensorList{index_put(x[0], {x[1]}, x[2])}; }, index_put_rows_ref(false),
              rows),
          inplace(
              "accumulate", [](Tensor& s, const TensorList& x) -> Tensor& { return s.index_put_({x[1]}, x[2], true); },
              [](const TensorList& x) { return TensorList{index_put(x[0], {x[1]}, x[2], true)}; },
              index_put_rows_ref(true), dups),
          on_view_with(
              "on_view",
              [](Tensor& self, const TensorList& x) {
                Tensor v = self.narrow(0, 1, 2);  // rows 1..2 of 3x2
                index_put_(v, {std::nullopt, tensor(std::vector<int64_t>{1})}, x[1]);
              },
              [](const V& x) {
                RT out = x[0];
                out.v[3] = x[1].v[0];
                out.v[5] = x[1].v[1];
                return V{out};
              },
              {{"3x2_v2x1", {rnd({3, 2}), rnd({2, 1})}}})}});
  }
  register_inplace_arithmetic(r);
  register_random_fills(r);
}

}  // namespace graft::testing

// Registry entries: in-place ops. Each case applies the op to a clone of input 0 (a non-leaf
// when input 0 requires grad, so gradcheck differentiates through the in-place op) and is
// compared with the out-of-place op; the suite also checks the returned reference is self.
#include <gtest/gtest.h>

#include <cmath>

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
    Tensor self = x[0].is_contiguous() || x[0].dim() < 2 ? x[0].clone()
                                                         : x[0].transpose(-1, -2).clone().transpose(-1, -2);
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
OpCase on_view(std::string variant, std::function<void(Tensor)> op, std::function<double(double)> f) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = {{"3x2", {rnd({3, 2})}}};
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
  OpCase c = inplace("self_alias", [](Tensor& s, const TensorList&) -> Tensor& { return s.mul_(s); },
                     [](const TensorList& x) { return TensorList{mul(x[0], x[0])}; },
                     ref1([](double a) { return a * a; }), self_samples());
  c.differentiable = false;
  return c;
}

}  // namespace

void register_inplace(Registry& r) {
  r.push_back({"add_",
               {inplace("tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.add_(x[1]); },
                        [](const TensorList& x) { return TensorList{add(x[0], x[1])}; },
                        ref2([](double a, double b) { return a + b; }), self_other_samples()),
                inplace("tensor_alpha", [](Tensor& s, const TensorList& x) -> Tensor& { return s.add_(x[1], -2); },
                        [](const TensorList& x) { return TensorList{add(x[0], x[1], -2)}; },
                        ref2([](double a, double b) { return a - 2 * b; }), self_other_samples()),
                inplace("scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.add_(0.75); },
                        [](const TensorList& x) { return TensorList{add(x[0], 0.75)}; },
                        ref1([](double a) { return a + 0.75; }), self_samples()),
                inplace("operator", [](Tensor& s, const TensorList& x) -> Tensor& { return s += x[1]; },
                        [](const TensorList& x) { return TensorList{x[0] + x[1]}; },
                        ref2([](double a, double b) { return a + b; }), self_other_samples()),
                on_view("on_view", [](Tensor v) { v.add_(1.5); }, [](double a) { return a + 1.5; })}});
  r.push_back({"sub_",
               {inplace("tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.sub_(x[1]); },
                        [](const TensorList& x) { return TensorList{sub(x[0], x[1])}; },
                        ref2([](double a, double b) { return a - b; }), self_other_samples()),
                inplace("tensor_alpha", [](Tensor& s, const TensorList& x) -> Tensor& { return s.sub_(x[1], 0.5); },
                        [](const TensorList& x) { return TensorList{sub(x[0], x[1], 0.5)}; },
                        ref2([](double a, double b) { return a - 0.5 * b; }), self_other_samples()),
                inplace("scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.sub_(2); },
                        [](const TensorList& x) { return TensorList{sub(x[0], 2)}; },
                        ref1([](double a) { return a - 2; }), self_samples())}});
  r.push_back({"mul_",
               {inplace("tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.mul_(x[1]); },
                        [](const TensorList& x) { return TensorList{mul(x[0], x[1])}; },
                        ref2([](double a, double b) { return a * b; }), self_other_samples()),
                inplace("scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.mul_(-3); },
                        [](const TensorList& x) { return TensorList{mul(x[0], -3)}; },
                        ref1([](double a) { return -3 * a; }), self_samples()),
                self_alias_forward_only(),
                on_view("on_view", [](Tensor v) { v.mul_(2.5); }, [](double a) { return 2.5 * a; })}});
  r.push_back({"div_",
               {inplace("tensor", [](Tensor& s, const TensorList& x) -> Tensor& { return s.div_(x[1]); },
                        [](const TensorList& x) { return TensorList{div(x[0], x[1])}; },
                        ref2([](double a, double b) { return a / b; }), self_other_samples(Domain::NonZero)),
                inplace("scalar", [](Tensor& s, const TensorList&) -> Tensor& { return s.div_(0.5); },
                        [](const TensorList& x) { return TensorList{div(x[0], 0.5)}; },
                        ref1([](double a) { return a / 0.5; }), self_samples())}});
  r.push_back({"zero_",
               {inplace("", [](Tensor& s, const TensorList&) -> Tensor& { return s.zero_(); },
                        [](const TensorList& x) { return TensorList{zeros_like(x[0])}; }, ref1([](double) { return 0.0; }),
                        self_samples()),
                on_view("on_view", [](Tensor v) { v.zero_(); }, [](double) { return 0.0; })}});
  r.push_back({"fill_",
               {inplace("", [](Tensor& s, const TensorList&) -> Tensor& { return s.fill_(-1.25); },
                        [](const TensorList& x) { return TensorList{full_like(x[0], -1.25)}; },
                        ref1([](double) { return -1.25; }), self_samples())}});
  r.push_back({"copy_",
               {inplace("same_shape", [](Tensor& s, const TensorList& x) -> Tensor& { return s.copy_(x[1]); },
                        [](const TensorList& x) { return TensorList{x[1].expand_as(x[0]).clone()}; },
                        ref2([](double, double b) { return b; }), self_other_samples()),
                on_view("on_view_scalar_src", [](Tensor v) { v.copy_(full({}, 4.0, kFloat64)); },
                        [](double) { return 4.0; })}});
  r.push_back({"clamp_",
               {inplace("min_max", [](Tensor& s, const TensorList&) -> Tensor& { return s.clamp_(-0.5, 0.5); },
                        [](const TensorList& x) { return TensorList{clamp(x[0], -0.5, 0.5)}; },
                        ref1([](double a) { return std::min(std::max(a, -0.5), 0.5); }),
                        self_samples(Domain::Any, {-0.5, 0.5})),
                inplace("min", [](Tensor& s, const TensorList&) -> Tensor& { return s.clamp_(0.0); },
                        [](const TensorList& x) { return TensorList{clamp(x[0], 0.0)}; },
                        ref1([](double a) { return std::max(a, 0.0); }), self_samples(Domain::NonZero))}});
  r.push_back({"relu_",
               {inplace("", [](Tensor& s, const TensorList&) -> Tensor& { return s.relu_(); },
                        [](const TensorList& x) { return TensorList{relu(x[0])}; },
                        ref1([](double a) { return a > 0 ? a : 0.0; }), self_samples(Domain::NonZero)),
                on_view("on_view", [](Tensor v) { v.relu_(); }, [](double a) { return a > 0 ? a : 0.0; })}});
}

}  // namespace graft::testing

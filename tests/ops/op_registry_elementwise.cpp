// Registry entries: elementwise arithmetic, math, comparisons and logic.
#include <cmath>
#include <complex>
#include <optional>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;
using UFn = std::function<Tensor(const Tensor&)>;
using BFn = std::function<Tensor(const Tensor&, const Tensor&)>;
using R1 = std::function<double(double)>;
using R2 = std::function<double(double, double)>;

std::vector<Sample> unary_samples(Domain d, std::vector<double> kinks = {}) {
  return {{"2x3", {rnd({2, 3}, d, kinks)}},
          {"0d", {rnd({}, d, kinks)}},
          {"empty_0x3", {rnd({0, 3}, d, kinks)}},
          {"5", {rnd({5}, d, kinks)}}};
}
std::vector<Sample> binary_samples(Domain da, Domain db, std::vector<double> kinks = {}) {
  return {{"2x3_2x3", {rnd({2, 3}, da, kinks), rnd({2, 3}, db, kinks)}},
          {"bcast_2x3_3", {rnd({2, 3}, da, kinks), rnd({3}, db, kinks)}},
          {"bcast_2x1_1x3", {rnd({2, 1}, da, kinks), rnd({1, 3}, db, kinks)}},
          {"bcast_2x3_0d", {rnd({2, 3}, da, kinks), rnd({}, db, kinks)}},
          {"0d_0d", {rnd({}, da, kinks), rnd({}, db, kinks)}},
          {"empty_0x3_3", {rnd({0, 3}, da, kinks), rnd({3}, db, kinks)}}};
}

OpCase unary(std::string variant, UFn f, R1 r, Domain d = Domain::Any, std::vector<double> kinks = {}) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = unary_samples(d, kinks);
  c.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
  c.ref = [r](const V& x) { return V{map(x[0], r)}; };
  return c;
}
OpCase binary(std::string variant, BFn f, R2 r, Domain da = Domain::Any, Domain db = Domain::Any,
              std::vector<double> kinks = {}) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = binary_samples(da, db, kinks);
  c.fn = [f](const TensorList& x) { return TensorList{f(x[0], x[1])}; };
  c.ref = [r](const V& x) { return V{zip(x[0], x[1], r)}; };
  return c;
}

// Comparison samples: equal values occur, mixed with float and int inputs.
std::vector<Sample> compare_samples() {
  return {{"2x3_3", {vals({2, 3}, {1, 2, 3, 4, 5, 6}), vals({3}, {1, 5, 3})}},
          {"2x1_1x3", {vals({2, 1}, {2, 5}), vals({1, 3}, {1, 2, 6})}},
          {"int_2x2_2x2", {ints({2, 2}, {1, -2, 3, 4}), ints({2, 2}, {1, 2, 0, 4})}},
          {"0d_0d", {vals({}, {1.5}), vals({}, {1.5})}},
          {"empty_0x3_3", {vals({0, 3}, {}), vals({3}, {1, 2, 3})}},
          {"bool_2x3_3", {bools({2, 3}, {1, 0, 1, 0, 0, 1}), bools({3}, {1, 1, 0})}},
          {"zeros_2x2", {vals({2, 2}, {0, 1.5, -2, 0}), vals({2, 2}, {0, 0, 3, 1})}}};
}
OpCase compare(std::string variant, BFn f, R2 r) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = compare_samples();
  c.fn = [f](const TensorList& x) { return TensorList{f(x[0], x[1])}; };
  c.ref = [r](const V& x) { return V{zip(x[0], x[1], r, kBool)}; };
  c.differentiable = false;
  return c;
}
OpCase compare_scalar(std::string variant, UFn f, R1 r) {
  OpCase c;
  c.variant = std::move(variant);
  c.samples = {{"2x3", {vals({2, 3}, {1, 2, 3, 4, 5, 3})}},
               {"int_3", {ints({3}, {3, 1, 4})}},
               {"0d", {vals({}, {3})}},
               {"empty", {vals({0}, {})}}};
  c.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
  c.ref = [r](const V& x) { return V{map(x[0], r, kBool)}; };
  c.differentiable = false;
  return c;
}

// How a binary op (ops.yaml's `result`) treats integer operands.
enum class IntOperands { Promote, Float, FloatingOnly };

// A generated binary op: the function (float64 with gradients, float32 smoke), the method,
// integer operands (an int64 result for Promote, the default float dtype for Float; FloatingOnly
// ops refuse them, which the Python parity tests check against PyTorch) and a forward-only case
// with ties and NaN.
std::vector<OpCase> binary_op_cases(BFn f, BFn method, R2 r, IntOperands ints_kind) {
  OpCase m = binary("method", method, r);
  m.differentiable = false;  // the same op: gradcheck runs on the function
  OpCase edge = binary("ties_nan", f, r);
  edge.samples = {{"ties_3", {vals({3}, {1, 2, 3}), vals({3}, {0, 2, 4})}, false},
                  {"nan_3", {vals({3}, {NAN, 2, 1}), vals({3}, {0, NAN, 4})}, false}};
  edge.differentiable = false;  // forward only: ties are kinks
  std::vector<OpCase> cases = {f32(binary("", f, r)), m, edge};
  if (ints_kind != IntOperands::FloatingOnly) {
    OpCase i;
    i.variant = "int_operands";
    i.samples = {{"int_2x2_2", {ints({2, 2}, {1, -2, 3, 4}), ints({2}, {2, -2})}, false}};
    i.fn = [f](const TensorList& x) { return TensorList{f(x[0], x[1])}; };
    const DType out = ints_kind == IntOperands::Promote ? kInt64 : kFloat32;
    i.ref = [r, out](const V& x) { return V{zip(x[0], x[1], r, out)}; };
    i.differentiable = false;
    i.atol = 1e-6;
    i.rtol = 1e-6;
    cases.push_back(i);
  }
  return cases;
}

// A generated binary_bitwise op: int64 operands (broadcast, 0-d, empty) by function and
// method, bool operands (logical), and the number 6 as `other`.
std::vector<OpCase> bitwise_cases(BFn f, BFn method, UFn with_six, std::function<int64_t(int64_t, int64_t)> op) {
  auto as_double = [op](double a, double b) {
    return static_cast<double>(op(static_cast<int64_t>(a), static_cast<int64_t>(b)));
  };
  OpCase c;
  c.samples = {{"int_2x3_3", {ints({2, 3}, {12, -7, 0, 5, 255, -1}), ints({3}, {10, 3, -8})}},
               {"int_0d_0d", {ints({}, {6}), ints({}, {-3})}},
               {"empty_0x3_3", {ints({0, 3}, {}), ints({3}, {1, 2, 3})}}};
  c.fn = [f](const TensorList& t) { return TensorList{f(t[0], t[1])}; };
  c.ref = [as_double](const V& t) { return V{zip(t[0], t[1], as_double, kInt64)}; };
  c.differentiable = false;
  OpCase m = c;
  m.variant = "method";
  m.fn = [method](const TensorList& t) { return TensorList{method(t[0], t[1])}; };
  OpCase b = c;
  b.variant = "bool";
  b.samples = {{"bool_2x2_2", {bools({2, 2}, {1, 0, 1, 0}), bools({2}, {1, 1})}}};
  b.ref = [as_double](const V& t) {
    return V{zip(
        t[0], t[1], [as_double](double x, double y) { return as_double(x, y) != 0 ? 1.0 : 0.0; }, kBool)};
  };
  OpCase s;  // a Python number operand
  s.variant = "scalar";
  s.samples = {{"int_4", {ints({4}, {12, -7, 0, 5})}}};
  s.fn = [with_six](const TensorList& t) { return TensorList{with_six(t[0])}; };
  s.ref = [as_double](const V& t) {
    return V{map(
        t[0], [as_double](double x) { return as_double(x, 6); }, kInt64)};
  };
  s.differentiable = false;
  return {c, m, b, s};
}

// A generated binary_predicate op: function and method over compare_samples (ties, integers,
// bools and zeros), and the number case where the op takes one.
std::vector<OpCase> binary_predicate_cases(BFn f, BFn method, R2 r, std::optional<OpCase> scalar) {
  OpCase fc = compare("", f, r);
  OpCase m = compare("method", method, r);
  std::vector<OpCase> cases = {fc, m};
  if (scalar) cases.push_back(*scalar);
  return cases;
}

// Forward-only case on an input holding NaN (NaN propagates).
OpCase nan_only(OpCase c) {
  c.samples = {{"nan_4", {vals({4}, {NAN, -1, 2, NAN})}, false}};
  c.differentiable = false;
  return c;
}

// A unary_float op (src/ops/ops.yaml): the function (float64, and a float32 smoke test), the
// method, and integer inputs, which compute in the default dtype.
std::vector<OpCase> unary_float_cases(UFn f, UFn method, R1 r, Domain d) {
  OpCase m = unary("method", method, r, d);
  m.differentiable = false;  // the same op: gradcheck runs on the function
  OpCase i;
  i.variant = "int_input";
  const std::vector<double> iv = d == Domain::Any        ? std::vector<double>{-2, -1, 0, 1, 2}
                                 : d == Domain::Positive ? std::vector<double>{1, 2}
                                 : d == Domain::NonZero  ? std::vector<double>{-2, -1, 1, 2}
                                 : d == Domain::Unit     ? std::vector<double>{0}
                                                         : std::vector<double>{2, 3};
  i.samples = {{"int", {ints({static_cast<int64_t>(iv.size())}, iv)}, false}};
  i.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
  i.ref = [r](const V& x) { return V{map(x[0], r, kFloat32)}; };
  i.differentiable = false;
  i.atol = 1e-6;
  i.rtol = 1e-6;
  return {f32(unary("", f, r, d)), m, i};
}

// A unary_rounding op: the function (float64, float32 smoke), the method, and (when the op
// copies integers) an int64 input that comes back unchanged.
std::vector<OpCase> unary_rounding_cases(UFn f, UFn method, R1 r, bool copies_integers, std::vector<double> kinks) {
  OpCase m = unary("method", method, r, Domain::Any, kinks);
  m.differentiable = false;  // the same op: gradcheck runs on the function
  std::vector<OpCase> cases = {f32(unary("", f, r, Domain::Any, kinks)), m};
  if (copies_integers) {
    OpCase i;
    i.variant = "int_input";
    i.samples = {{"int", {ints({4}, {4, -2, 0, 7})}, false}};
    i.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
    i.ref = [](const V& x) {
      return V{map(
          x[0], [](double v) { return v; }, kInt64)};
    };
    i.differentiable = false;
    cases.push_back(i);
  }
  return cases;
}

// A unary_keep op: the function (float64 with gradients, float32 smoke), the method, an int64
// input (an int64 result), NaN and signed zeros (forward only), and a bool input: computed as
// the reference says, or refused (the refusal's text is checked against PyTorch's in the Python
// parity tests).
std::vector<OpCase> unary_keep_cases(UFn f, UFn method, R1 r, Domain d, bool refuses_bool) {
  OpCase m = unary("method", method, r, d);
  m.differentiable = false;  // the same op: gradcheck runs on the function
  OpCase edge = nan_only(unary("nan_zeros", f, r));
  edge.samples = {{"5", {vals({5}, {NAN, -0.0, 0.0, -1.5, 2.0})}, false}};
  OpCase i;
  i.variant = "int_input";
  i.samples = {{"int", {ints({5}, {4, -2, 0, 7, -9})}, false}};
  i.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
  i.ref = [r](const V& x) { return V{map(x[0], r, kInt64)}; };
  i.differentiable = false;
  std::vector<OpCase> cases = {f32(unary("", f, r, d)), m, edge, i};
  if (!refuses_bool) {
    OpCase b = i;
    b.variant = "bool_input";
    b.samples = {{"bool", {bools({3}, {1, 0, 1})}, false}};
    b.ref = [r](const V& x) { return V{map(x[0], r, kBool)}; };
    cases.push_back(b);
  }
  return cases;
}

// Inputs of the unary_predicate ops: every float class (NaN, +-inf, +-0, normal), integers, bools.
std::vector<Sample> predicate_samples() {
  return {{"2x4", {vals({2, 4}, {1.5, -INFINITY, INFINITY, NAN, -0.0, 0.0, -2, 3e300})}},
          {"int_3", {ints({3}, {-3, 0, 5})}},
          {"bool_2", {bools({2}, {1, 0})}},
          {"0d", {vals({}, {-INFINITY})}},
          {"empty", {vals({0}, {})}}};
}

// An activation's case for one argument set (variant "" for the defaults: also float32 and NaN).
void add_activation_case(Registry& r, const char* name, const char* variant, UFn f, R1 ref, Domain d,
                         std::vector<double> kinks) {
  if (r.empty() || r.back().name != name) r.push_back({name, {}});
  auto& cases = r.back().cases;
  if (*variant) {
    cases.push_back(unary(variant, f, ref, d, kinks));
    return;
  }
  cases.push_back(f32(unary("", f, ref, d, kinks)));
  cases.push_back(nan_only(unary("nan", f, ref)));
}

// Python's // and %, kept out of register_elementwise so each stays small.
void register_floor_div_mod(Registry& r) {
  // float quotients stay >= 0.05 away from integers, so the floor (and remainder's
  // gradient with respect to the divisor) is smooth around every sample
  auto py_floordiv = [](double a, double b) { return std::floor(a / b); };
  auto py_mod = [](double a, double b) { return a - b * std::floor(a / b); };
  std::vector<Sample> fs = {
      {"2x3_2x3", {vals({2, 3}, {7.5, -7.5, 1.3, -0.2, 3.9, -5.1}), vals({2, 3}, {2, 2, -0.6, 0.7, -1.7, -2.3})}},
      {"bcast_2x3_3", {vals({2, 3}, {7.5, -7.5, 1.3, -0.2, 3.9, -5.1}), vals({3}, {2, -2, 0.7})}},
      {"bcast_2x1_1x3", {vals({2, 1}, {4.3, -1.9}), vals({1, 3}, {1.5, -0.8, 3.1})}},
      {"0d_0d", {vals({}, {-3.7}), vals({}, {1.6})}},
      {"empty_0x3_3", {vals({0, 3}, {}), vals({3}, {1, 2, 3})}}};
  std::vector<Sample> is = {{"int_2x4_4", {ints({2, 4}, {7, -7, 7, -7, 0, 5, -9, 3}), ints({4}, {2, 2, -2, -2})}},
                            {"int_0d_3", {ints({}, {-5}), ints({3}, {3, -3, 7})}}};
  std::vector<Sample> us = {{"2x3", {vals({2, 3}, {1.9, -1.9, 0.2, -0.2, 4.1, -3.3})}},
                            {"0d", {vals({}, {-2.6})}},
                            {"empty", {vals({0, 2}, {})}}};
  auto bcase = [](std::string variant, BFn f, R2 ref, std::vector<Sample> s, DType out = kFloat64) {
    OpCase c;
    c.variant = std::move(variant);
    c.samples = std::move(s);
    c.fn = [f](const TensorList& x) { return TensorList{f(x[0], x[1])}; };
    c.ref = [ref, out](const V& x) { return V{zip(x[0], x[1], ref, out)}; };
    return c;
  };
  auto ucase = [](std::string variant, UFn f, R1 ref, std::vector<Sample> s, DType out = kFloat64) {
    OpCase c;
    c.variant = std::move(variant);
    c.samples = std::move(s);
    c.fn = [f](const TensorList& x) { return TensorList{f(x[0])}; };
    c.ref = [ref, out](const V& x) { return V{map(x[0], ref, out)}; };
    return c;
  };
  auto nondiff = [](OpCase c) {
    c.differentiable = false;
    return c;
  };
  r.push_back(
      {"floor_divide",
       {nondiff(f32(bcase(
            "tensor", [](auto& a, auto& b) { return floor_divide(a, b); }, py_floordiv, fs))),
        nondiff(ucase(
            "scalar", [](auto& a) { return floor_divide(a, 0.7); },
            [py_floordiv](double a) { return py_floordiv(a, 0.7); }, us)),
        nondiff(bcase(
            "int", [](auto& a, auto& b) { return a.floor_divide(b); }, py_floordiv, is, kInt64)),
        nondiff(ucase(
            "int_scalar", [](auto& a) { return floor_divide(a, -3); },
            [py_floordiv](double a) { return py_floordiv(a, -3); }, {Sample{"int_2x4", {is[0].inputs[0]}}}, kInt64))}});
  r.push_back(
      {"remainder",
       {f32(bcase(
            "tensor_tensor", [](auto& a, auto& b) { return remainder(a, b); }, py_mod, fs)),
        ucase(
            "tensor_scalar", [](auto& a) { return remainder(a, 0.7); }, [py_mod](double a) { return py_mod(a, 0.7); },
            us),
        ucase(
            "scalar_tensor", [](auto& b) { return remainder(1.3, b); }, [py_mod](double b) { return py_mod(1.3, b); },
            {{"2x3", {vals({2, 3}, {0.7, -0.7, 2.9, -2.9, 0.4, -0.6})}}, {"0d", {vals({}, {-0.9})}}}),
        nondiff(bcase(
            "int", [](auto& a, auto& b) { return a.remainder(b); }, py_mod, is, kInt64)),
        nondiff(ucase(
            "int_scalar", [](auto& a) { return a.remainder(-3); }, [py_mod](double a) { return py_mod(a, -3); },
            {Sample{"int_2x4", {is[0].inputs[0]}}}, kInt64))}});
}

}  // namespace

void register_elementwise(Registry& r) {
  // ---- arithmetic ----
  r.push_back({"add",
               {f32(binary(
                    "tensor", [](auto& a, auto& b) { return add(a, b); }, [](double a, double b) { return a + b; })),
                binary(
                    "tensor_alpha", [](auto& a, auto& b) { return add(a, b, 2.5); },
                    [](double a, double b) { return a + 2.5 * b; }),
                unary(
                    "scalar", [](auto& a) { return add(a, 1.5); }, [](double a) { return a + 1.5; }),
                unary(
                    "scalar_alpha", [](auto& a) { return add(a, 1.5, -2); }, [](double a) { return a - 3.0; }),
                unary(
                    "operator", [](auto& a) { return 2.0 + a; }, [](double a) { return a + 2.0; })}});
  {
    // type promotion (forward only): dimensioned tensors win over 0-d ones within a category
    auto f32in = [](RT t) {
      t.dtype = kFloat32;
      return t;
    };
    auto promo = [](std::string variant, std::vector<Sample> s, std::function<Tensor(const Tensor&, const Tensor&)> f,
                    DType out) {
      OpCase c;
      c.variant = std::move(variant);
      c.samples = std::move(s);
      c.fn = [f](const TensorList& x) { return TensorList{f(x[0], x[1])}; };
      c.ref = [out](const V& x) {
        return V{zip(
            x[0], x[1], [](double a, double b) { return a + b; }, out)};
      };
      c.differentiable = false;
      return c;
    };
    auto add_tt = [](const Tensor& a, const Tensor& b) { return add(a, b); };
    r.back().cases.push_back(
        promo("promote_int_int", {{"int", {ints({3}, {1, 2, 3}), ints({3}, {4, -5, 6})}}}, add_tt, kInt64));
    r.back().cases.push_back(
        promo("promote_int_float64_0d", {{"int_f64_0d", {ints({2}, {1, 2}), vals({}, {0.5})}}}, add_tt, kFloat64));
    r.back().cases.push_back(promo("promote_float32_float64_0d",
                                   {{"f32_f64_0d", {f32in(vals({2}, {1, 2})), vals({}, {0.5})}}}, add_tt, kFloat32));
    r.back().cases.push_back(promo("promote_float32_float64",
                                   {{"f32_f64", {f32in(vals({2}, {1, 2})), vals({2}, {0.5, 0.25})}}}, add_tt,
                                   kFloat64));
    OpCase s = promo(
        "promote_int_python_float", {{"int", {ints({2}, {1, 2}), vals({}, {0.5})}}},
        [](const Tensor& a, const Tensor&) { return add(a, 0.5); }, kFloat32);
    r.back().cases.push_back(s);
  }
  r.push_back({"sub",
               {binary(
                    "tensor", [](auto& a, auto& b) { return sub(a, b); }, [](double a, double b) { return a - b; }),
                binary(
                    "tensor_alpha", [](auto& a, auto& b) { return sub(a, b, 3); },
                    [](double a, double b) { return a - 3 * b; }),
                unary(
                    "scalar", [](auto& a) { return sub(a, 0.5); }, [](double a) { return a - 0.5; }),
                unary(
                    "scalar_alpha", [](auto& a) { return sub(a, 0.5, 2); }, [](double a) { return a - 1.0; }),
                unary(
                    "rsub_operator", [](auto& a) { return 1.0 - a; }, [](double a) { return 1.0 - a; }),
                unary(
                    "rsub_alpha", [](auto& a) { return sub(2.0, a, 3); }, [](double a) { return 2.0 - 3 * a; })}});
  r.push_back({"mul",
               {f32(binary(
                    "tensor", [](auto& a, auto& b) { return mul(a, b); }, [](double a, double b) { return a * b; })),
                unary(
                    "self", [](auto& a) { return mul(a, a); }, [](double a) { return a * a; }),
                unary(
                    "scalar", [](auto& a) { return mul(a, -1.5); }, [](double a) { return -1.5 * a; })}});
  r.push_back(
      {"div",
       {binary(
            "tensor", [](auto& a, auto& b) { return div(a, b); }, [](double a, double b) { return a / b; }, Domain::Any,
            Domain::NonZero),
        unary(
            "scalar", [](auto& a) { return div(a, 4.0); }, [](double a) { return a / 4.0; }),
        // rounding_mode nullopt: true division through DivBackward2's gradients
        binary(
            "tensor_no_mode", [](auto& a, auto& b) { return div(a, b, std::nullopt); },
            [](double a, double b) { return a / b; }, Domain::Any, Domain::NonZero),
        unary(
            "scalar_no_mode", [](auto& a) { return div(a, -2.5, std::nullopt); }, [](double a) { return a / -2.5; }),
        unary(
            "rdiv_operator", [](auto& a) { return 2.0 / a; }, [](double a) { return 2.0 / a; }, Domain::NonZero)}});
  {
    OpCase c = unary(
        "int_true_division", [](auto& a) { return div(a, 2); }, [](double a) { return a / 2; });
    c.samples = {{"int_3", {ints({3}, {1, -3, 4})}}};
    c.ref = [](const V& x) {
      return V{map(
          x[0], [](double a) { return a / 2; }, kFloat32)};
    };
    c.differentiable = false;
    r.back().cases.push_back(c);
  }
  r.push_back({"pow",
               {binary(
                    "tensor_tensor", [](auto& a, auto& b) { return pow(a, b); },
                    [](double a, double b) { return std::pow(a, b); }, Domain::Positive, Domain::Any),
                unary(
                    "scalar_exp2", [](auto& a) { return pow(a, 2); }, [](double a) { return a * a; }),
                unary(
                    "scalar_exp3", [](auto& a) { return pow(a, 3); }, [](double a) { return a * a * a; }),
                unary(
                    "scalar_exp0", [](auto& a) { return pow(a, 0); }, [](double) { return 1.0; }),
                unary(
                    "scalar_exp_half", [](auto& a) { return pow(a, 0.5); }, [](double a) { return std::sqrt(a); },
                    Domain::Positive),
                unary(
                    "scalar_exp_neg1_5", [](auto& a) { return pow(a, -1.5); },
                    [](double a) { return std::pow(a, -1.5); }, Domain::Positive),
                unary(
                    "scalar_base", [](auto& a) { return pow(2.0, a); }, [](double a) { return std::pow(2.0, a); })}});
  r.push_back({"square",
               {f32(unary(
                    "", [](auto& a) { return square(a); }, [](double a) { return a * a; })),
                unary(
                    "method", [](auto& a) { return a.square(); }, [](double a) { return a * a; })}});

  register_floor_div_mod(r);

  // ---- math ----
  // the unary_float ops (src/ops/ops.yaml): function, method, and an integer input
#define GRAFT_UNARY_FLOAT_CASE(name, domain, reference)                                                            \
  r.push_back(                                                                                                     \
      {#name, unary_float_cases([](const Tensor& a) { return name(a); }, [](const Tensor& a) { return a.name(); }, \
                                [](double x) { return reference; }, Domain::domain)});
#include "unary_float_registry.def"
#undef GRAFT_UNARY_FLOAT_CASE
  // the unary_rounding ops (src/ops/ops.yaml): function (samples away from the kinks), method,
  // and integer inputs (copied, or refused)
#define GRAFT_UNARY_ROUNDING_CASE(name, copies_integers, reference, ...)                                              \
  r.push_back(                                                                                                        \
      {#name, unary_rounding_cases([](const Tensor& a) { return name(a); }, [](const Tensor& a) { return a.name(); }, \
                                   [](double x) { return reference; }, copies_integers, {__VA_ARGS__})});
#include "unary_rounding_registry.def"
#undef GRAFT_UNARY_ROUNDING_CASE
  // the unary_keep ops (src/ops/ops.yaml): function (float64 with gradients, float32 smoke),
  // method, integer input (the result int64), a forward-only case with NaN and signed zeros, and
  // bool (computed, or refused as PyTorch)
#define GRAFT_UNARY_KEEP_CASE(name, domain, refuses_bool, reference)                                              \
  r.push_back(                                                                                                    \
      {#name, unary_keep_cases([](const Tensor& a) { return name(a); }, [](const Tensor& a) { return a.name(); }, \
                               [](double x) -> double { return reference; }, Domain::domain, refuses_bool)});
#include "unary_keep_registry.def"
#undef GRAFT_UNARY_KEEP_CASE
  r.push_back({"gelu",
               {f32(unary(
                    "none", [](auto& a) { return gelu(a); },
                    [](double a) { return 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))); })),
                unary(
                    "tanh", [](auto& a) { return gelu(a, "tanh"); },
                    [](double a) {
                      const double k = std::sqrt(2.0 / M_PI);
                      return 0.5 * a * (1 + std::tanh(k * (a + 0.044715 * a * a * a)));
                    })}});
  // the activation ops (src/ops/ops.yaml), one row per argument set: at the defaults float64 with
  // gradients, a float32 smoke test and a forward-only case with NaN; the other argument sets in
  // float64 with gradients
#define GRAFT_ACTIVATION_CASE(name, variant, domain, inplace, call, reference, ...)                                  \
  add_activation_case(                                                                                               \
      r, #name, variant, [](const Tensor& self) { return name call; }, [](double x) -> double { return reference; }, \
      Domain::domain, {__VA_ARGS__});
#include "activation_registry.def"
#undef GRAFT_ACTIVATION_CASE
  {
    // threshold: every dtype but bool; the numbers converted to the tensor's dtype (1.5 on an
    // integer tensor is 1); NaN fails the test and stays
    auto thr = [](double a) { return a <= 0.5 ? -3.0 : a; };
    OpCase integer;
    integer.variant = "int64_fraction_threshold";
    integer.samples = {{"5", {ints({5}, {-2, 0, 1, 2, 3})}}};
    integer.fn = [](const TensorList& x) { return TensorList{threshold(x[0], 1.5, 7)}; };
    integer.ref = [](const V& x) {
      return V{map(
          x[0], [](double a) { return a <= 1 ? 7.0 : a; }, kInt64)};
    };
    integer.differentiable = false;
    r.push_back({"threshold",
                 {f32(unary("", [](auto& a) { return threshold(a, 0.5, -3.0); }, thr, Domain::Any, {0.5})), integer,
                  nan_only(unary(
                      "nan", [](auto& a) { return threshold(a, 0.5, -3.0); }, thr))}});
  }
  {
    // threshold_backward(grad_output, self, threshold): grad_output where self > threshold; its
    // gradient in self is zero (self kept away from the threshold, where it jumps)
    OpCase c;
    c.variant = "";
    c.samples = {{"2x3_2x3", {rnd({2, 3}), rnd({2, 3}, Domain::Any, {0.5})}},
                 {"bcast_3_2x3", {rnd({3}), rnd({2, 3}, Domain::Any, {0.5})}},
                 {"0d_0d", {rnd({}), rnd({}, Domain::Any, {0.5})}},
                 {"empty_0x3_3", {rnd({0, 3}), rnd({3}, Domain::Any, {0.5})}}};
    c.fn = [](const TensorList& x) { return TensorList{threshold_backward(x[0], x[1], 0.5)}; };
    c.ref = [](const V& x) { return V{zip(x[0], x[1], [](double g, double s) { return s <= 0.5 ? 0.0 : g; })}; };
    OpCase nan = c;
    nan.variant = "nan_self";
    nan.samples = {{"4_4", {vals({4}, {1, 2, 3, 4}), vals({4}, {NAN, 0.5, 0.6, -NAN})}, false}};
    nan.differentiable = false;
    r.push_back({"threshold_backward", {f32(c), nan}});
  }
  r.push_back({"clamp",
               {unary(
                    "min_max", [](auto& a) { return clamp(a, -0.5, 0.5); },
                    [](double a) { return std::min(std::max(a, -0.5), 0.5); }, Domain::Any, {-0.5, 0.5}),
                unary(
                    "min_only", [](auto& a) { return clamp(a, -0.5); }, [](double a) { return std::max(a, -0.5); },
                    Domain::Any, {-0.5}),
                unary(
                    "max_only", [](auto& a) { return clamp(a, std::nullopt, 0.5); },
                    [](double a) { return std::min(a, 0.5); }, Domain::Any, {0.5}),
                unary(
                    "min_gt_max", [](auto& a) { return clamp(a, 1.0, -1.0); }, [](double) { return -1.0; }),
                nan_only(unary(
                    "nan", [](auto& a) { return clamp(a, -0.5, 0.5); },
                    [](double a) { return std::isnan(a) ? a : std::min(std::max(a, -0.5), 0.5); }))}});
  {
    // tensor bounds: values kept >= 0.1 from every kink (x at a bound, min at max)
    auto ref = [](const V& x) {
      return V{zip3(x[0], x[1], x[2], [](double a, double l, double h) {
        return std::isnan(a) || std::isnan(l) || std::isnan(h) ? NAN : std::min(std::max(a, l), h);
      })};
    };
    OpCase both;
    both.variant = "tensor_bounds";
    both.samples = {{"2x3",
                     {vals({2, 3}, {-1.0, 0.2, 0.9, 1.7, -0.3, 0.6}), vals({2, 3}, {-0.5, -0.5, 0.1, 0.3, 0.0, 0.8}),
                      vals({2, 3}, {0.5, 0.5, 0.4, 1.2, 0.7, 0.2})}},
                    {"bcast_lo3_hi0d",
                     {vals({2, 3}, {-1.0, 0.2, 0.9, 1.7, -0.3, 0.6}), vals({3}, {-0.5, 0.4, 0.1}), vals({}, {0.7})}}};
    both.fn = [](const TensorList& x) { return TensorList{clamp(x[0], x[1], x[2])}; };
    both.ref = ref;
    OpCase lo_only = both;
    lo_only.variant = "tensor_min_only";
    for (auto& smp : lo_only.samples) smp.inputs.pop_back();
    lo_only.fn = [](const TensorList& x) { return TensorList{clamp(x[0], x[1], Tensor())}; };
    lo_only.ref = [ref](const V& x) { return ref({x[0], x[1], vals({}, {INFINITY})}); };
    r.back().cases.push_back(both);  // into the clamp entry just above
    r.back().cases.push_back(lo_only);
  }
  {
    auto where_ref = [](const V& x) {
      return V{zip3(x[0], x[1], x[2], [](double c, double a, double b) { return c != 0 ? a : b; })};
    };
    OpCase tt;
    tt.variant = "tensor_tensor";
    tt.samples = {{"2x3", {bools({2, 3}, {1, 0, 1, 0, 0, 1}), rnd({2, 3}), rnd({2, 3})}},
                  {"bcast_cond3_a2x1_b0d", {bools({3}, {0, 1, 1}), rnd({2, 1}), rnd({})}},
                  {"0d", {bools({}, {1}), rnd({}), rnd({})}},
                  {"empty", {bools({0, 2}, {}), rnd({0, 2}), rnd({2})}}};
    tt.fn = [](const TensorList& x) { return TensorList{where(x[0], x[1], x[2])}; };
    tt.ref = where_ref;
    OpCase ts = tt;
    ts.variant = "tensor_scalar";
    for (auto& s : ts.samples) s.inputs.pop_back();
    ts.fn = [](const TensorList& x) { return TensorList{where(x[0], x[1], 0.5)}; };
    ts.ref = [where_ref](const V& x) { return where_ref({x[0], x[1], vals({}, {0.5})}); };
    OpCase st = ts;
    st.variant = "scalar_tensor";
    st.fn = [](const TensorList& x) { return TensorList{where(x[0], -0.5, x[1])}; };
    st.ref = [where_ref](const V& x) { return where_ref({x[0], vals({}, {-0.5}), x[1]}); };
    // two numbers: condition's shape, their promoted dtype (1 and 2.5: the default float dtype)
    OpCase ss;
    ss.variant = "scalar_scalar";
    ss.samples = {{"2x3", {bools({2, 3}, {1, 0, 1, 0, 0, 1})}}, {"0d", {bools({}, {0})}}};
    ss.fn = [](const TensorList& x) { return TensorList{where(x[0], 1, 2.5)}; };
    ss.ref = [where_ref](const V& x) {
      V r = where_ref({x[0], vals({}, {1}), vals({}, {2.5})});
      r[0].dtype = kFloat32;
      return r;
    };
    ss.differentiable = false;
    r.push_back({"where", {tt, ts, st, ss}});
  }
  // the binary ops (src/ops/ops.yaml): function (float64 with gradcheck and gradgradcheck, and a
  // float32 smoke test), method, integer operands (kept, computed as float, or refused) and a
  // forward-only case with ties and NaN
#define GRAFT_BINARY_CASE(name, result, reference)                                                 \
  r.push_back({#name, binary_op_cases([](const Tensor& a, const Tensor& b) { return name(a, b); }, \
                                      [](const Tensor& a, const Tensor& b) { return a.name(b); },  \
                                      [](double x, double y) -> double { return reference; }, IntOperands::result)});
#include "binary_registry.def"
#undef GRAFT_BINARY_CASE

  // ---- comparisons and logic ----
  // the binary_predicate ops (src/ops/ops.yaml): function and method on float, integer and bool
  // operands with ties and zeros, and against a number where the op takes one
#define GRAFT_SCALAR_CASE_WithScalar(name, reference)       \
  std::optional<OpCase>(compare_scalar(                     \
      "scalar", [](const Tensor& a) { return name(a, 3); }, \
      [](double x) -> double {                              \
        const double y = 3;                                 \
        return reference;                                   \
      }))
#define GRAFT_SCALAR_CASE_TensorOnly(name, reference) std::optional<OpCase>()
#define GRAFT_BINARY_PREDICATE_CASE(name, other_kind, reference)                                          \
  r.push_back({#name, binary_predicate_cases([](const Tensor& a, const Tensor& b) { return name(a, b); }, \
                                             [](const Tensor& a, const Tensor& b) { return a.name(b); },  \
                                             [](double x, double y) -> double { return reference; },      \
                                             GRAFT_SCALAR_CASE_##other_kind(name, reference))});
#include "binary_predicate_registry.def"
#undef GRAFT_BINARY_PREDICATE_CASE
#undef GRAFT_SCALAR_CASE_WithScalar
#undef GRAFT_SCALAR_CASE_TensorOnly
  {
    // the binary_bitwise ops (src/ops/ops.yaml): int64 (two's complement, broadcast), bool
    // operands, function and method, and a number operand
#define GRAFT_BINARY_BITWISE_CASE(name, reference)                                               \
  r.push_back({#name, bitwise_cases([](const Tensor& a, const Tensor& b) { return name(a, b); }, \
                                    [](const Tensor& a, const Tensor& b) { return a.name(b); },  \
                                    [](const Tensor& a) { return name(a, 6); },                  \
                                    [](int64_t x, int64_t y) -> int64_t { return reference; })});
#include "binary_bitwise_registry.def"
#undef GRAFT_BINARY_BITWISE_CASE
    OpCase bn;
    bn.samples = {{"int_5", {ints({5}, {0, -1, 7, -8, 1LL << 40})}}, {"bool_2", {bools({2}, {1, 0})}}};
    bn.fn = [](const TensorList& t) { return TensorList{bitwise_not(t[0])}; };
    bn.ref = [](const V& t) {
      if (t[0].dtype == kBool)
        return V{map(
            t[0], [](double a) { return a == 0 ? 1.0 : 0.0; }, kBool)};
      return V{map(
          t[0], [](double a) { return static_cast<double>(~static_cast<int64_t>(a)); }, kInt64)};
    };
    bn.differentiable = false;
    r.push_back({"bitwise_not", {bn}});
    // the unary_predicate ops (src/ops/ops.yaml): float (NaN, infinities, signed zeros), integer
    // and bool inputs, function and method
#define GRAFT_UNARY_PREDICATE_CASE(name, reference)                               \
  {                                                                               \
    OpCase f = compare_scalar(                                                    \
        "", [](auto& x) { return name(x); }, [](double x) { return reference; }); \
    f.samples = predicate_samples();                                              \
    OpCase m = f;                                                                 \
    m.variant = "method";                                                         \
    m.fn = [](const TensorList& x) { return TensorList{x[0].name()}; };           \
    r.push_back({#name, {f, m}});                                                 \
  }
#include "unary_predicate_registry.def"
#undef GRAFT_UNARY_PREDICATE_CASE
  }
}

}  // namespace graft::testing

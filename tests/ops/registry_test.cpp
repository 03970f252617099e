// The generic registry-driven op suite. For every case of every registered op:
//   Forward        float64 result (sizes, dtype, values) against the naive reference; inputs
//                  untouched; in-place cases also equal the out-of-place op
//   Float32        float32 smoke test for cases flagged f32
//   Gradcheck      gradcheck and gradgradcheck in float64 (fast mode unless GRAFT_SLOW_TESTS=1)
//   NonContiguous  transposed / strided inputs give the same outputs and gradients as contiguous
//   Meta           the same call on meta tensors gives outputs with the CPU outputs' sizes,
//                  strides, dtype and autograd history, takes the same peak of allocator memory,
//                  and backward gives gradients shaped as the CPU's (data-dependent ops raise
//                  PyTorch's NotImplementedError instead, and only those in kDataDependent)
// plus coverage tests tying the registry to the op table (src/ops/op_table.def).
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "graft/memory.h"
#include "graft/ops/op_table.h"
#include "ops/op_registry.h"
#include "support/test_util.h"

namespace graft::testing {
namespace {

bool slow_tests() {
  const char* s = std::getenv("GRAFT_SLOW_TESTS");
  return s && std::string(s) == "1";
}

struct CaseRef {
  const OpEntry* entry;
  const OpCase* c;
};
void PrintTo(const CaseRef& r, std::ostream* os) { *os << r.entry->name << "/" << r.c->variant; }
std::vector<CaseRef> all_cases() {
  std::vector<CaseRef> out;
  for (auto& e : op_registry())
    for (auto& c : e.cases) out.push_back({&e, &c});
  return out;
}
std::string case_name(const ::testing::TestParamInfo<CaseRef>& info) {
  std::string n = info.param.entry->name;
  if (!info.param.c->variant.empty()) n += "_" + info.param.c->variant;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

// Builds a graft tensor from a reference tensor; floating ones get dtype `fdt`.
Tensor make(const RT& r, DType fdt) {
  Tensor t;
  if (r.floating()) {
    t = tensor(r.v, dtype(r.dtype == kFloat32 ? kFloat32 : fdt));  // explicit float32 inputs stay float32
  } else {
    std::vector<int64_t> iv;
    for (double x : r.v) iv.push_back(static_cast<int64_t>(x));
    t = tensor(iv, dtype(kInt64));
    if (r.dtype == kBool) t = ne(t, 0);
  }
  return t.reshape(r.sizes);
}
TensorList make_all(const Sample& s, DType fdt) {
  TensorList out;
  for (auto& r : s.inputs) out.push_back(make(r, fdt));
  return out;
}
// Same values, non-contiguous layout (where the shape allows one): the last two dims
// transposed in memory, or every other element of a twice-as-large buffer.
Tensor noncontig(const Tensor& t) {
  NoGradGuard ng;
  if (t.dim() == 0 || t.numel() <= 1) return t;
  if (t.dim() >= 2 && t.size(-1) > 1 && t.size(-2) > 1)
    return t.transpose(-1, -2).contiguous().transpose(-1, -2).detach();
  std::vector<int64_t> big = t.sizes().vec();
  big.back() *= 2;
  Tensor buf = zeros(big, dtype(t.dtype()));
  Tensor v = buf.slice(-1, 0, std::nullopt, 2);
  v.copy_(t);
  return v.detach();
}
void set_requires_grad(TensorList& xs) {
  for (auto& x : xs)
    if (x.is_floating_point()) x.requires_grad_(true);
}
bool any_floating(const TensorList& xs) {
  for (auto& x : xs)
    if (x.is_floating_point()) return true;
  return false;
}

bool close(double got, double want, double atol, double rtol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}
// Expects `got` to match `want` (floating reference dtype float64 means "the run's dtype").
void expect_matches(const Tensor& got, const RT& want, DType fdt, double atol, double rtol, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.sizes().vec(), want.sizes) << what << ": sizes";
  EXPECT_EQ(got.dtype(), want.dtype == kFloat64 ? fdt : want.dtype) << what << ": dtype";
  auto g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.v.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_TRUE(close(g[i], want.v[i], atol, rtol))
        << what << ": at flat index " << i << " got " << g[i] << " expected " << want.v[i];
}
void expect_same(const Tensor& a, const Tensor& b, double tol, const std::string& what) {
  ASSERT_EQ(a.defined(), b.defined()) << what;
  if (!a.defined()) return;
  ASSERT_EQ(a.sizes().vec(), b.sizes().vec()) << what << ": sizes";
  EXPECT_EQ(a.dtype(), b.dtype()) << what << ": dtype";
  auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_TRUE(close(x[i], y[i], tol, tol)) << what << ": at flat index " << i << ": " << x[i] << " vs " << y[i];
}
std::string desc(const Sample& s, size_t i) { return "sample " + std::to_string(i) + " (" + s.desc + ")"; }

// Keeps the floating outputs (gradcheck's function).
TensorList floating_outputs(const OpCase& c, const TensorList& x) {
  TensorList out;
  for (auto& t : c.fn(x))
    if (t.is_floating_point()) out.push_back(t);
  return out;
}

class OpRegistry : public ::testing::TestWithParam<CaseRef> {};

TEST_P(OpRegistry, Forward) {
  const OpCase& c = *GetParam().c;
  ASSERT_FALSE(c.samples.empty());
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    SCOPED_TRACE(desc(s, i));
    TensorList in = make_all(s, kFloat64);
    std::vector<RT> want = c.ref(s.inputs);
    TensorList got = c.fn(in);
    ASSERT_EQ(got.size(), want.size()) << "number of outputs";
    for (size_t k = 0; k < got.size(); ++k)
      expect_matches(got[k], want[k], kFloat64, c.atol, c.rtol, "output " + std::to_string(k));
    for (size_t k = 0; k < in.size(); ++k)  // inputs are not modified
      expect_matches(in[k], s.inputs[k], kFloat64, 0, 0, "input " + std::to_string(k) + " after the call");
    if (c.outplace) {
      TensorList ref = c.outplace(make_all(s, kFloat64));
      ASSERT_EQ(ref.size(), got.size());
      for (size_t k = 0; k < got.size(); ++k) expect_same(got[k], ref[k], 0.0, "in-place vs out-of-place");
    }
  }
}

TEST_P(OpRegistry, Float32) {
  const OpCase& c = *GetParam().c;
  if (!c.f32) return;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    SCOPED_TRACE(desc(s, i));
    TensorList got = c.fn(make_all(s, kFloat32));
    std::vector<RT> in32 = s.inputs;  // reference on the float32-rounded inputs
    for (auto& r : in32)
      if (r.floating())
        for (auto& x : r.v) x = static_cast<float>(x);
    std::vector<RT> want = c.ref(in32);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k)
      expect_matches(got[k], want[k], kFloat32, 1e-5, 1e-5, "float32 output " + std::to_string(k));
  }
}

TEST_P(OpRegistry, Gradcheck) {
  const OpCase& c = *GetParam().c;
  if (!c.differentiable) return;
  autograd::GradcheckOptions opts;
  opts.fast_mode = !slow_tests();
  autograd::DiffFn fn = [&c](const TensorList& x) { return floating_outputs(c, x); };
  int checked = 0;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    if (!s.grad) continue;
    SCOPED_TRACE(desc(s, i));
    TensorList in = make_all(s, kFloat64);
    if (!any_floating(in)) continue;
    set_requires_grad(in);
    ++checked;
    opts.seed = i + 1;
    try {
      EXPECT_TRUE(autograd::gradcheck(fn, in, opts));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "gradcheck: " << e.what();
    }
    if (!c.gradgrad) continue;
    try {
      EXPECT_TRUE(autograd::gradgradcheck(fn, in, {}, opts));
    } catch (const std::exception& e) {
      ADD_FAILURE() << "gradgradcheck: " << e.what();
    }
  }
  EXPECT_GT(checked, 0) << "a differentiable case needs at least one sample to gradcheck";
}

TEST_P(OpRegistry, NonContiguous) {
  const OpCase& c = *GetParam().c;
  if (!c.noncontig) return;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    TensorList a = make_all(s, kFloat64), b;
    bool any = false;
    for (auto& t : a) {
      b.push_back(noncontig(t));
      any = any || !b.back().is_contiguous();
    }
    if (!any) continue;
    SCOPED_TRACE(desc(s, i));
    const bool grad = c.differentiable && s.grad && any_floating(a);
    if (grad) {
      set_requires_grad(a);
      set_requires_grad(b);
    }
    TensorList ya = c.fn(a), yb = c.fn(b);
    ASSERT_EQ(ya.size(), yb.size());
    for (size_t k = 0; k < ya.size(); ++k) expect_same(yb[k], ya[k], 1e-12, "output " + std::to_string(k));
    if (!grad) continue;
    // backward with the same fixed weights through both and compare input gradients
    auto loss = [](const TensorList& ys) {
      Tensor l;
      for (auto& y : ys) {
        if (!y.is_floating_point() || !y.requires_grad()) continue;
        Tensor w = arange(y.numel(), dtype(y.dtype())).reshape(y.sizes()) * 0.25 + 0.5;
        Tensor term = (y * w).sum();
        l = l.defined() ? l + term : term;
      }
      return l;
    };
    Tensor la = loss(ya), lb = loss(yb);
    if (!la.defined()) continue;
    la.backward();
    lb.backward();
    for (size_t k = 0; k < a.size(); ++k)
      if (a[k].requires_grad()) expect_same(b[k].grad(), a[k].grad(), 1e-12, "grad of input " + std::to_string(k));
  }
}

// Ops whose output sizes (or whose checks) depend on the input's values: PyTorch has no meta
// kernel for them either, and graft raises its NotImplementedError.
const std::set<std::string> kDataDependent = {"nonzero", "masked_select",      "bincount",       "histc",
                                              "unique",  "unique_consecutive", "masked_scatter", "masked_scatter_"};
// ... and boolean-mask indexing, which runs nonzero on the mask.
bool data_dependent(const std::string& op, const std::string& error) {
  return kDataDependent.count(op) || error.find("'aten::nonzero'") != std::string::npos;
}

// Makes `d` the default device while it lives (the tensors a case's lambda creates for itself
// then go with its inputs, as under graft.utils.memory.estimate).
struct DefaultDevice {
  Device prev = default_device();
  explicit DefaultDevice(Device d) { set_default_device(d); }
  ~DefaultDevice() { set_default_device(prev); }
};

// Runs c.fn on `in`, returning its outputs and the peak allocated bytes above those live
// before the call, on `device`'s allocator.
TensorList run_measured(const OpCase& c, const TensorList& in, Device device, int64_t& peak) {
  const int64_t before = memory_allocated(device);
  reset_peak_memory_stats(device);
  TensorList out = c.fn(in);
  peak = max_memory_allocated(device) - before;
  return out;
}

void expect_same_metadata(const Tensor& meta, const Tensor& cpu, const std::string& what) {
  ASSERT_EQ(meta.defined(), cpu.defined()) << what;
  if (!cpu.defined()) return;
  EXPECT_TRUE(meta.device().is_meta()) << what << ": on " << meta.device();
  EXPECT_EQ(meta.sizes().vec(), cpu.sizes().vec()) << what << ": sizes";
  EXPECT_EQ(meta.strides().vec(), cpu.strides().vec()) << what << ": strides";
  EXPECT_EQ(meta.dtype(), cpu.dtype()) << what << ": dtype";
  EXPECT_EQ(meta.requires_grad(), cpu.requires_grad()) << what << ": requires_grad";
  EXPECT_EQ(meta.grad_fn() ? meta.grad_fn()->name() : "", cpu.grad_fn() ? cpu.grad_fn()->name() : "")
      << what << ": grad_fn";
}

TEST_P(OpRegistry, Meta) {
  const OpEntry& e = *GetParam().entry;
  const OpCase& c = *GetParam().c;
  for (size_t i = 0; i < c.samples.size(); ++i) {
    const Sample& s = c.samples[i];
    SCOPED_TRACE(desc(s, i));
    TensorList cpu = make_all(s, kFloat64), meta;
    for (auto& t : cpu) meta.push_back(t.to(kMeta));
    const bool grad = c.differentiable && s.grad && any_floating(cpu);
    if (grad) {
      set_requires_grad(cpu);
      set_requires_grad(meta);
    }
    int64_t cpu_peak = 0, meta_peak = 0;
    TensorList want = run_measured(c, cpu, kCPU, cpu_peak), got;
    try {
      DefaultDevice on_meta(kMeta);
      got = run_measured(c, meta, kMeta, meta_peak);
    } catch (const NotImplementedError& err) {
      EXPECT_TRUE(data_dependent(e.name, err.what())) << "no meta implementation: " << err.what();
      EXPECT_NE(std::string(err.what()).find("with arguments from the 'Meta' backend"), std::string::npos)
          << err.what();
      continue;
    }
    EXPECT_FALSE(kDataDependent.count(e.name)) << "listed as data-dependent but ran on meta";
    ASSERT_EQ(got.size(), want.size()) << "number of outputs";
    for (size_t k = 0; k < got.size(); ++k) expect_same_metadata(got[k], want[k], "output " + std::to_string(k));
    EXPECT_EQ(meta_peak, cpu_peak) << "peak allocated bytes during the call (meta vs cpu)";
    if (!grad) continue;
    // backward through both with ones as the output gradients: the gradients' metadata agree
    auto backward = [](const TensorList& ys) {
      TensorList outs, gs;
      for (auto& y : ys)
        if (y.defined() && y.requires_grad()) {
          outs.push_back(y);
          gs.push_back(ones_like(y));
        }
      if (!outs.empty()) autograd::backward(outs, gs);
    };
    backward(want);
    DefaultDevice on_meta(kMeta);
    backward(got);
    for (size_t k = 0; k < cpu.size(); ++k)
      if (cpu[k].requires_grad())
        expect_same_metadata(meta[k].grad(), cpu[k].grad(), "grad of input " + std::to_string(k));
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpRegistry, ::testing::ValuesIn(all_cases()), case_name);

// ---- coverage: the registry and the op table name the same ops ----
TEST(OpRegistryCoverage, EveryTableOpHasAnEntry) {
  ASSERT_GT(op_count(), 0u);
  for (size_t i = 0; i < op_count(); ++i) {
    const std::string name(op_row(i).name);
    bool found = false;
    for (auto& e : op_registry()) found = found || e.name == name;
    EXPECT_TRUE(found) << "op '" << name << "' (src/ops/op_table.def) has no entry in the test op registry";
  }
}

TEST(OpRegistryCoverage, EveryEntryIsInTheTable) {
  for (auto& e : op_registry()) {
    bool found = false;
    for (size_t i = 0; i < op_count(); ++i) found = found || op_row(i).name == e.name;
    EXPECT_TRUE(found) << "registry entry '" << e.name << "' names an op that is not in src/ops/op_table.def";
  }
}

TEST(OpRegistryCoverage, EntriesAreWellFormed) {
  std::set<std::string> names, case_names;
  for (auto& e : op_registry()) {
    EXPECT_TRUE(names.insert(e.name).second) << "duplicate registry entry '" << e.name << "'";
    EXPECT_FALSE(e.cases.empty()) << e.name << ": no cases";
    OpKind kind = OpKind::Differentiable;
    for (size_t i = 0; i < op_count(); ++i)
      if (op_row(i).name == e.name) kind = op_row(i).kind;
    bool any_diff = false;
    for (auto& c : e.cases) {
      EXPECT_TRUE(case_names.insert(e.name + "/" + c.variant).second) << e.name << ": duplicate variant " << c.variant;
      EXPECT_FALSE(c.samples.empty()) << e.name << "/" << c.variant << ": no samples";
      EXPECT_TRUE(c.fn && c.ref) << e.name << "/" << c.variant << ": needs fn and ref";
      if (kind == OpKind::NonDifferentiable) {
        EXPECT_FALSE(c.differentiable) << e.name << " is NonDifferentiable in the table";
      }
      if (kind == OpKind::InPlace && c.variant.rfind("on_view", 0) != 0) {
        EXPECT_TRUE(static_cast<bool>(c.outplace)) << e.name << "/" << c.variant << ": in-place case needs outplace";
      }
      any_diff = any_diff || c.differentiable;
    }
    if (kind != OpKind::NonDifferentiable) {
      EXPECT_TRUE(any_diff) << e.name << " is differentiable in the table but no case runs gradcheck";
    }
  }
  EXPECT_EQ(names.size(), op_count());
}

// The registry as a whole covers the layouts the issue asks for.
TEST(OpRegistryCoverage, SamplesCoverSpecialShapes) {
  int zero_d = 0, empty = 0, bcast = 0;
  for (auto& e : op_registry())
    for (auto& c : e.cases)
      for (auto& s : c.samples) {
        bool has0d = false, hasEmpty = false;
        for (auto& r : s.inputs) {
          has0d = has0d || r.dim() == 0;
          hasEmpty = hasEmpty || r.numel() == 0;
        }
        zero_d += has0d;
        empty += hasEmpty;
        bcast += s.desc.find("bcast") != std::string::npos;
      }
  EXPECT_GT(zero_d, 20);
  EXPECT_GT(empty, 20);
  EXPECT_GT(bcast, 10);
}

}  // namespace
}  // namespace graft::testing

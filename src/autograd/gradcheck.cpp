// gradcheck and gradgradcheck (slow: full Jacobians; fast: random projections).
#include "graft/autograd/gradcheck.h"

#include <charconv>
#include <cmath>
#include <random>
#include <sstream>

#include "graft/autograd/autograd.h"
#include "graft/ops/ops.h"

namespace graft::autograd {
namespace {

/// A double as Python's repr prints it (shortest round trip, "0.0" rather than "0"), for
/// messages that quote PyTorch's.
std::string python_float(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ec == std::errc() ? end : buf);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

using Matrix = std::vector<std::vector<double>>;  // [out element][in element]

// Reads or writes element k (row-major order) of t through its strides.
template <class F>
void with_element(const Tensor& t, int64_t k, F f) {
  int64_t off = 0;
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    int64_t s = t.size(d);
    off += (k % s) * t.stride(d);
    k /= s;
  }
  GRAFT_DISPATCH_FLOATING(t.dtype(), "gradcheck", [&] { f(static_cast<scalar_t*>(t.data_ptr()) + off); });
}
double get(const Tensor& t, int64_t k) {
  double v = 0;
  with_element(t, k, [&](auto* p) { v = static_cast<double>(*p); });
  return v;
}
void set(const Tensor& t, int64_t k, double v) {
  with_element(t, k, [&](auto* p) { *p = static_cast<std::remove_pointer_t<decltype(p)>>(v); });
}

std::vector<double> flat(const Tensor& t) {
  if (!t.defined()) return {};
  return t.detach().to_vector<double>();
}

struct Problem {
  const DiffFn& fn;
  TensorList inputs;
  std::vector<size_t> diff;  // indices of inputs we differentiate
  std::vector<size_t> outs;  // indices of floating outputs
};

TensorList eval_nograd(const Problem& p) {
  NoGradGuard ng;
  TensorList outs = p.fn(p.inputs);
  // Outputs may alias an input (identity, views, contiguous(), a gradient that is the
  // grad_output itself): copy them, or restoring the perturbed input would change them too.
  for (auto& t : outs)
    if (t.defined()) t = t.clone(MemoryFormat::Contiguous);
  return outs;
}

std::vector<std::vector<Matrix>> numerical(const Problem& p, double eps) {
  TensorList base = eval_nograd(p);
  std::vector<std::vector<Matrix>> J(p.outs.size(), std::vector<Matrix>(p.diff.size()));
  for (size_t j = 0; j < p.diff.size(); ++j) {
    const Tensor& x = p.inputs[p.diff[j]];
    for (size_t o = 0; o < p.outs.size(); ++o)
      J[o][j].assign(base[p.outs[o]].numel(), std::vector<double>(x.numel(), 0.0));
    for (int64_t k = 0; k < x.numel(); ++k) {
      const double orig = get(x, k);
      set(x, k, orig - eps);
      TensorList lo = eval_nograd(p);
      set(x, k, orig + eps);
      TensorList hi = eval_nograd(p);
      set(x, k, orig);
      for (size_t o = 0; o < p.outs.size(); ++o) {
        auto a = flat(lo[p.outs[o]]), b = flat(hi[p.outs[o]]);
        for (size_t r = 0; r < a.size(); ++r) J[o][j][r][k] = (b[r] - a[r]) / (2 * eps);
      }
    }
  }
  return J;
}

std::vector<std::vector<Matrix>> analytical(const Problem& p) {
  TensorList outs = p.fn(p.inputs);
  TensorList xs;
  for (size_t j : p.diff) xs.push_back(p.inputs[j]);
  std::vector<std::vector<Matrix>> J(p.outs.size(), std::vector<Matrix>(p.diff.size()));
  for (size_t o = 0; o < p.outs.size(); ++o) {
    const Tensor& y = outs[p.outs[o]];
    for (size_t j = 0; j < xs.size(); ++j) J[o][j].assign(y.numel(), std::vector<double>(xs[j].numel(), 0.0));
    if (!y.requires_grad()) continue;
    for (int64_t r = 0; r < y.numel(); ++r) {
      Tensor onehot = zeros(y.sizes(), TensorOptions(y.dtype()).device(y.device()));
      set(onehot, r, 1.0);
      TensorList g = grad({y}, xs, {onehot}, /*retain_graph=*/true, false, /*allow_unused=*/true);
      for (size_t j = 0; j < xs.size(); ++j) {
        GRAFT_CHECK(!g[j].defined() || g[j].sizes().equals(xs[j].sizes()), RuntimeError,
                    "Analytical gradient has incorrect size");
        auto v = flat(g[j]);
        for (size_t k = 0; k < v.size(); ++k) J[o][j][r][k] = v[k];
      }
    }
  }
  return J;
}

std::string matrix_str(const Matrix& m) {
  std::ostringstream os;
  os << "tensor([";
  for (size_t r = 0; r < m.size(); ++r) {
    os << (r ? ",\n        [" : "[");
    for (size_t c = 0; c < m[r].size(); ++c) os << (c ? ", " : "") << m[r][c];
    os << "]";
  }
  os << "], dtype=graft.float64)";
  return os.str();
}

bool fail(const GradcheckOptions& o, const std::string& msg) {
  if (o.raise_exception) throw RuntimeError(msg);
  return false;
}

bool compare_full(const Problem& p, const GradcheckOptions& o, std::string* why) {
  auto N = numerical(p, o.eps);
  auto A = analytical(p);
  for (size_t out = 0; out < N.size(); ++out)
    for (size_t j = 0; j < N[out].size(); ++j)
      for (size_t r = 0; r < N[out][j].size(); ++r)
        for (size_t k = 0; k < N[out][j][r].size(); ++k) {
          double n = N[out][j][r][k], a = A[out][j][r][k];
          if (!(std::fabs(a - n) <= o.atol + o.rtol * std::fabs(n))) {
            // PyTorch prints the Jacobian transposed: rows are input elements
            Matrix nt(N[out][j].empty() ? 0 : N[out][j][0].size(), std::vector<double>(N[out][j].size()));
            Matrix at = nt;
            for (size_t rr = 0; rr < N[out][j].size(); ++rr)
              for (size_t kk = 0; kk < N[out][j][rr].size(); ++kk) {
                nt[kk][rr] = N[out][j][rr][kk];
                at[kk][rr] = A[out][j][rr][kk];
              }
            *why = detail::str("Jacobian mismatch for output ", out, " with respect to input ", j,
                               ",\nnumerical:", matrix_str(nt), "\nanalytical:", matrix_str(at), "\n");
            return false;
          }
        }
  // reentrancy: the analytical pass must give the same values twice
  auto A2 = analytical(p);
  for (size_t out = 0; out < A.size(); ++out)
    for (size_t j = 0; j < A[out].size(); ++j)
      for (size_t r = 0; r < A[out][j].size(); ++r)
        for (size_t k = 0; k < A[out][j][r].size(); ++k)
          if (std::fabs(A[out][j][r][k] - A2[out][j][r][k]) > o.nondet_tol) {
            *why = detail::str(
                "Backward is not reentrant, i.e., running backward with same input and grad_output "
                "multiple times gives different values, although analytical gradient matches numerical "
                "gradient.The tolerance for nondeterminism was ",
                python_float(o.nondet_tol), ".");
            return false;
          }
  return true;
}

Tensor random_unit(IntArrayRef sizes, std::mt19937_64& gen) {
  Tensor t = empty(sizes, TensorOptions(kFloat64));
  std::normal_distribution<double> d;
  double norm = 0;
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (auto& x : v) {
    x = d(gen);
    norm += x * x;
  }
  norm = std::sqrt(norm);
  for (size_t k = 0; k < v.size(); ++k) set(t, static_cast<int64_t>(k), norm > 0 ? v[k] / norm : 0);
  return t;
}

bool compare_fast(const Problem& p, const GradcheckOptions& o) {
  std::mt19937_64 gen(o.seed);
  TensorList base = eval_nograd(p);
  TensorList us, vs;
  for (size_t j : p.diff) us.push_back(random_unit(p.inputs[j].sizes(), gen));
  for (size_t oi : p.outs) vs.push_back(random_unit(base[oi].sizes(), gen));
  // numerical v^T J u, per (output, input)
  std::vector<std::vector<double>> num(p.outs.size(), std::vector<double>(p.diff.size()));
  for (size_t j = 0; j < p.diff.size(); ++j) {
    const Tensor& x = p.inputs[p.diff[j]];
    std::vector<double> orig(static_cast<size_t>(x.numel()));
    auto u = flat(us[j]);
    for (int64_t k = 0; k < x.numel(); ++k) orig[k] = get(x, k);
    for (int64_t k = 0; k < x.numel(); ++k) set(x, k, orig[k] - o.eps * u[k]);
    TensorList lo = eval_nograd(p);
    for (int64_t k = 0; k < x.numel(); ++k) set(x, k, orig[k] + o.eps * u[k]);
    TensorList hi = eval_nograd(p);
    for (int64_t k = 0; k < x.numel(); ++k) set(x, k, orig[k]);
    for (size_t oi = 0; oi < p.outs.size(); ++oi) {
      auto a = flat(lo[p.outs[oi]]), b = flat(hi[p.outs[oi]]), v = flat(vs[oi]);
      double s = 0;
      for (size_t r = 0; r < a.size(); ++r) s += v[r] * (b[r] - a[r]) / (2 * o.eps);
      num[oi][j] = s;
    }
  }
  // analytical (v^T J) u
  TensorList xs;
  for (size_t j : p.diff) xs.push_back(p.inputs[j]);
  for (int rep = 0; rep < 2; ++rep) {
    TensorList outs = p.fn(p.inputs);
    for (size_t oi = 0; oi < p.outs.size(); ++oi) {
      const Tensor& y = outs[p.outs[oi]];
      std::vector<double> an(p.diff.size(), 0.0);
      if (y.requires_grad()) {
        TensorList g = grad({y}, xs, {vs[oi].to(y.dtype())}, true, false, true);
        for (size_t j = 0; j < xs.size(); ++j) {
          if (!g[j].defined()) continue;
          auto gv = flat(g[j]), u = flat(us[j]);
          double s = 0;
          for (size_t k = 0; k < gv.size(); ++k) s += gv[k] * u[k];
          an[j] = s;
        }
      }
      for (size_t j = 0; j < xs.size(); ++j)
        if (!(std::fabs(an[j] - num[oi][j]) <= o.atol + o.rtol * std::fabs(num[oi][j]))) return false;
    }
  }
  return true;
}

Problem make_problem(const DiffFn& fn, const TensorList& inputs) {
  Problem p{fn, inputs, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (t.defined() && t.requires_grad()) {
      if (t.dtype() != kFloat64)
        warn(detail::str("Input #", i,
                         " requires gradient and is not a double precision floating point or complex. "
                         "This check will likely fail if all the inputs are not of double precision floating point "
                         "or complex. "));
      p.diff.push_back(i);
    }
  }
  GRAFT_CHECK(!p.diff.empty(), ValueError,
              "gradcheck expects at least one input tensor to require gradient, but none of the them have "
              "requires_grad=True.");
  TensorList outs = eval_nograd(p);
  for (size_t i = 0; i < outs.size(); ++i)
    if (outs[i].defined() && outs[i].is_floating_point()) p.outs.push_back(i);
  return p;
}

}  // namespace

bool gradcheck(const DiffFn& fn, const TensorList& inputs, const GradcheckOptions& opts) {
  Problem p = make_problem(fn, inputs);
  if (opts.fast_mode && compare_fast(p, opts)) return true;
  std::string why;
  if (compare_full(p, opts, &why)) {
    if (!opts.fast_mode) return true;
    return fail(opts,
                "Gradcheck failed in fast mode (v^T J u mismatch) although the full Jacobians match; "
                "the projection tolerance may be too tight for this function.");
  }
  return fail(opts, why);
}

bool gradgradcheck(const DiffFn& fn, const TensorList& inputs, const TensorList& grad_outputs_in,
                   const GradcheckOptions& opts) {
  Problem p = make_problem(fn, inputs);
  TensorList probe = fn(inputs);
  std::vector<size_t> diff_outs;
  for (size_t i : p.outs)
    if (probe[i].requires_grad()) diff_outs.push_back(i);
  TensorList gos = grad_outputs_in;
  if (gos.empty()) {
    std::mt19937_64 gen(opts.seed + 1);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (size_t i : diff_outs) {
      Tensor g = empty(probe[i].sizes(), TensorOptions(kFloat64));
      for (int64_t k = 0; k < g.numel(); ++k) set(g, k, d(gen));
      gos.push_back(g.requires_grad_(true));
    }
  }
  GRAFT_CHECK(gos.size() == diff_outs.size(), ValueError, "gradgradcheck: expected ", diff_outs.size(),
              " grad_outputs, got ", gos.size());
  const size_t n_in = inputs.size();
  DiffFn second = [&fn, n_in, diff_outs](const TensorList& all) {
    // The numerical pass evaluates under no_grad, but this function needs the first-order
    // graph to differentiate: record it regardless (gradients of outputs stay correct).
    EnableGradGuard enable_grad;
    TensorList xs(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n_in));
    TensorList g(all.begin() + static_cast<std::ptrdiff_t>(n_in), all.end());
    TensorList outs = fn(xs);
    TensorList ys, dx;
    TensorList gsel;
    for (size_t k = 0; k < diff_outs.size(); ++k) {
      if (!outs[diff_outs[k]].requires_grad()) continue;  // e.g. evaluated under no_grad
      ys.push_back(outs[diff_outs[k]]);
      gsel.push_back(g[k].to(outs[diff_outs[k]].dtype()));
    }
    for (const Tensor& x : xs)
      if (x.defined() && x.requires_grad()) dx.push_back(x);
    if (ys.empty()) {
      TensorList z;
      for (auto& x : dx) z.push_back(zeros_like(x));
      return z;
    }
    TensorList r = grad(ys, dx, gsel, true, /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t k = 0; k < r.size(); ++k)
      if (!r[k].defined()) r[k] = zeros_like(dx[k]);
    return r;
  };
  TensorList all = inputs;
  all.insert(all.end(), gos.begin(), gos.end());
  return gradcheck(second, all, opts);
}

}  // namespace graft::autograd

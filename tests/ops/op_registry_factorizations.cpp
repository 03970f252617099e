// Registry entries: torch.linalg's factorizations (det, slogdet, inv, solve, cholesky,
// solve_triangular, qr, svd, eigh, pinv) and what is made of them. References are textbook
// loops on one matrix at a time: Gaussian elimination with partial pivoting, Cholesky-Banachiewicz,
// Gram-Schmidt, cyclic Jacobi rotations (eigenvalues, and the SVD through A^T A). A QR, SVD or
// eigendecomposition is unique only up to the signs of its vectors: the calls below normalize
// them (R's diagonal positive; each singular or eigen vector's largest entry positive) in graft
// ops, which gradcheck then sees through, and the references do the same.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/op_registry.h"

namespace graft::testing {
namespace {

using V = std::vector<RT>;

// ---- one matrix at a time ----
struct Mat {
  int64_t r = 0, c = 0;
  std::vector<double> v;
  Mat(int64_t rows, int64_t cols) : r(rows), c(cols), v(static_cast<size_t>(rows * cols), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * c + j)]; }
  double operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * c + j)]; }
};

Mat identity(int64_t n) {
  Mat m(n, n);
  for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}
Mat transpose(const Mat& a) {
  Mat t(a.c, a.r);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < a.c; ++j) t(j, i) = a(i, j);
  return t;
}
Mat product(const Mat& a, const Mat& b) {
  Mat p(a.r, b.c);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < b.c; ++j)
      for (int64_t k = 0; k < a.c; ++k) p(i, j) += a(i, k) * b(k, j);
  return p;
}

// The batch dims of a batch of matrices (or, with vector_dims 1, of vectors).
Shape64 batch_of(const RT& a, size_t matrix_dims = 2) {
  return Shape64(a.sizes.begin(), a.sizes.end() - static_cast<int64_t>(matrix_dims));
}
std::vector<Mat> split(const RT& a) {
  const int64_t r = a.size(-2), c = a.size(-1), count = numel_of(batch_of(a));
  std::vector<Mat> out;
  for (int64_t b = 0; b < count; ++b) {
    Mat m(r, c);
    std::copy_n(a.v.begin() + b * r * c, r * c, m.v.begin());
    out.push_back(m);
  }
  return out;
}
RT join(const std::vector<Mat>& ms, Shape64 batch, int64_t r, int64_t c) {
  RT out{batch, {}, kFloat64};
  out.sizes.push_back(r);
  out.sizes.push_back(c);
  for (const Mat& m : ms) out.v.insert(out.v.end(), m.v.begin(), m.v.end());
  return out;
}
// Each matrix of a through f, into a batch of f's results.
RT each(const RT& a, const std::function<Mat(const Mat&)>& f) {
  std::vector<Mat> out;
  for (const Mat& m : split(a)) out.push_back(f(m));
  const int64_t r = out.empty() ? a.size(-2) : out[0].r, c = out.empty() ? a.size(-1) : out[0].c;
  return join(out, batch_of(a), r, c);
}
// Each matrix of a to one number (det), or to a row of numbers (singular values).
RT each_row(const RT& a, const std::function<std::vector<double>(const Mat&)>& f) {
  RT out{batch_of(a), {}, kFloat64};
  int64_t n = 0;
  for (const Mat& m : split(a)) {
    const std::vector<double> row = f(m);
    n = static_cast<int64_t>(row.size());
    out.v.insert(out.v.end(), row.begin(), row.end());
  }
  out.sizes.push_back(n);
  return out;
}
RT each_value(const RT& a, const std::function<double(const Mat&)>& f) {
  RT out = each_row(a, [&](const Mat& m) { return std::vector<double>{f(m)}; });
  out.sizes.pop_back();
  return out;
}

// Gaussian elimination with partial pivoting: the solution of a x = b and det(a).
std::pair<Mat, double> eliminate(Mat a, Mat b) {
  const int64_t n = a.r;
  double det = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(a(i, k)) > std::abs(a(p, k))) p = i;
    if (p != k) {
      det = -det;
      for (int64_t j = 0; j < n; ++j) std::swap(a(k, j), a(p, j));
      for (int64_t j = 0; j < b.c; ++j) std::swap(b(k, j), b(p, j));
    }
    det *= a(k, k);
    if (a(k, k) == 0) continue;
    for (int64_t i = k + 1; i < n; ++i) {
      const double f = a(i, k) / a(k, k);
      for (int64_t j = k; j < n; ++j) a(i, j) -= f * a(k, j);
      for (int64_t j = 0; j < b.c; ++j) b(i, j) -= f * b(k, j);
    }
  }
  for (int64_t i = n - 1; i >= 0; --i)
    for (int64_t j = 0; j < b.c; ++j) {
      double s = b(i, j);
      for (int64_t k = i + 1; k < n; ++k) s -= a(i, k) * b(k, j);
      b(i, j) = s / a(i, i);
    }
  return {b, det};
}
Mat solve(const Mat& a, const Mat& b) { return eliminate(a, b).first; }
double det(const Mat& a) { return eliminate(a, Mat(a.r, 0)).second; }
Mat inverse(const Mat& a) { return solve(a, identity(a.r)); }

Mat cholesky_lower(const Mat& a) {
  Mat l(a.r, a.r);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double s = a(i, j);
      for (int64_t k = 0; k < j; ++k) s -= l(i, k) * l(j, k);
      l(i, j) = i == j ? std::sqrt(s) : s / l(j, j);
    }
  return l;
}

// The triangle of a that a triangular solve reads (the diagonal ones when unitriangular).
Mat triangle(const Mat& a, bool upper, bool unit) {
  Mat t(a.r, a.c);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < a.c; ++j)
      if (i == j ? true : (upper ? j > i : j < i)) t(i, j) = i == j && unit ? 1.0 : a(i, j);
  return t;
}

// Gram-Schmidt QR of a with m >= n: Q m x n, R n x n with a positive diagonal.
std::pair<Mat, Mat> gram_schmidt(const Mat& a) {
  Mat q(a.r, a.c), r(a.c, a.c);
  for (int64_t j = 0; j < a.c; ++j) {
    std::vector<double> w(static_cast<size_t>(a.r));
    for (int64_t i = 0; i < a.r; ++i) w[static_cast<size_t>(i)] = a(i, j);
    for (int64_t k = 0; k < j; ++k) {
      double d = 0;
      for (int64_t i = 0; i < a.r; ++i) d += q(i, k) * w[static_cast<size_t>(i)];
      r(k, j) = d;
      for (int64_t i = 0; i < a.r; ++i) w[static_cast<size_t>(i)] -= d * q(i, k);
    }
    double norm = 0;
    for (double x : w) norm += x * x;
    r(j, j) = std::sqrt(norm);
    for (int64_t i = 0; i < a.r; ++i) q(i, j) = w[static_cast<size_t>(i)] / r(j, j);
  }
  return {q, r};
}
// QR of any a (m < n: the square QR of the first m columns, R = Q^T a).
std::pair<Mat, Mat> qr_ref(const Mat& a) {
  if (a.r >= a.c) return gram_schmidt(a);
  Mat left(a.r, a.r);
  for (int64_t i = 0; i < a.r; ++i)
    for (int64_t j = 0; j < a.r; ++j) left(i, j) = a(i, j);
  Mat q = gram_schmidt(left).first;
  return {q, product(transpose(q), a)};
}

// Cyclic Jacobi rotations of the symmetric s: eigenvalues ascending, eigenvectors as columns
// (each with its largest entry positive).
std::pair<std::vector<double>, Mat> jacobi(Mat s) {
  const int64_t n = s.r;
  Mat v = identity(n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += s(p, q) * s(p, q);
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (s(p, q) == 0) continue;
        const double theta = (s(q, q) - s(p, p)) / (2 * s(p, q));
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), sn = t * c;
        for (int64_t k = 0; k < n; ++k) {  // s = J^T s J, v = v J
          const double skp = s(k, p), skq = s(k, q);
          s(k, p) = c * skp - sn * skq;
          s(k, q) = sn * skp + c * skq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double spk = s(p, k), sqk = s(q, k);
          s(p, k) = c * spk - sn * sqk;
          s(q, k) = sn * spk + c * sqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = v(k, p), vkq = v(k, q);
          v(k, p) = c * vkp - sn * vkq;
          v(k, q) = sn * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s(a, a) < s(b, b); });
  std::vector<double> values;
  Mat vectors(n, n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t from = order[static_cast<size_t>(j)];
    values.push_back(s(from, from));
    int64_t big = 0;
    for (int64_t i = 0; i < n; ++i)
      if (std::abs(v(i, from)) > std::abs(v(big, from))) big = i;
    const double sign = v(big, from) < 0 ? -1 : 1;
    for (int64_t i = 0; i < n; ++i) vectors(i, j) = sign * v(i, from);
  }
  return {values, vectors};
}

// The reduced SVD of a (full rank): U m x k, S descending, V n x k, each column of U with its
// largest entry positive (V's sign following).
struct Svd {
  Mat u, v;
  std::vector<double> s;
};
Svd svd_ref(const Mat& a) {
  const bool wide = a.r < a.c;
  const Mat t = wide ? transpose(a) : a;  // t = a or a^T, with at least as many rows as columns
  auto [values, w] = jacobi(product(transpose(t), t));
  const int64_t k = t.c;
  Svd out{Mat(t.r, k), Mat(k, k), {}};
  for (int64_t j = 0; j < k; ++j) {  // descending: the last eigenpair first
    const int64_t from = k - 1 - j;
    const double sigma = std::sqrt(std::max(values[static_cast<size_t>(from)], 0.0));
    out.s.push_back(sigma);
    for (int64_t i = 0; i < k; ++i) out.v(i, j) = w(i, from);
    for (int64_t i = 0; i < t.r; ++i) {
      double d = 0;
      for (int64_t l = 0; l < k; ++l) d += t(i, l) * w(l, from);
      out.u(i, j) = d / sigma;
    }
  }
  if (wide) std::swap(out.u, out.v);
  for (int64_t j = 0; j < k; ++j) {  // U's column with its largest entry positive
    int64_t big = 0;
    for (int64_t i = 0; i < out.u.r; ++i)
      if (std::abs(out.u(i, j)) > std::abs(out.u(big, j))) big = i;
    if (out.u(big, j) >= 0) continue;
    for (int64_t i = 0; i < out.u.r; ++i) out.u(i, j) = -out.u(i, j);
    for (int64_t i = 0; i < out.v.r; ++i) out.v(i, j) = -out.v(i, j);
  }
  return out;
}

Mat pinv_ref(const Mat& a) {
  const Svd d = svd_ref(a);
  Mat scaled = d.v;
  for (int64_t i = 0; i < scaled.r; ++i)
    for (int64_t j = 0; j < scaled.c; ++j) scaled(i, j) /= d.s[static_cast<size_t>(j)];
  return product(scaled, transpose(d.u));
}

// ---- the graft side of the normalizations ----
Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }
// Each column of u flipped to make its largest entry positive, and the rows of vh with them.
std::pair<Tensor, Tensor> signs_fixed(const Tensor& u, const Tensor& vh) {
  Tensor sign = u.gather(-2, u.abs().argmax(-2, true)).sign();
  return {u * sign, vh * mT(sign)};
}
// Q's columns and R's rows flipped to make R's diagonal positive.
TensorList qr_fixed(const std::pair<Tensor, Tensor>& qr) {
  Tensor sign = qr.second.diagonal(0, -2, -1).sign();
  return {qr.first * sign.unsqueeze(-2), qr.second * sign.unsqueeze(-1)};
}

// ---- samples ----
// A random n x n matrix plus shift times the identity (well conditioned for shift >= n).
RT shifted(Shape64 sizes, double shift) {
  RT a = rnd(sizes);
  const int64_t n = a.size(-1), count = a.numel() / (n * n);
  for (int64_t b = 0; b < count; ++b)
    for (int64_t i = 0; i < n; ++i) a.v[static_cast<size_t>(b * n * n + i * n + i)] += shift;
  return a;
}
Tensor plus_identity(const Tensor& t, double shift) {
  return t + shift * eye(t.size(-1), std::nullopt, TensorOptions(t.dtype()).device(t.device()));
}
// x x^T + 3 I (symmetric positive-definite), in graft and in the reference.
Tensor spd(const Tensor& x) { return plus_identity(matmul(x, mT(x)), 3.0); }
Mat spd_ref(const Mat& x) {
  Mat a = product(x, transpose(x));
  for (int64_t i = 0; i < a.r; ++i) a(i, i) += 3.0;
  return a;
}

RT transpose_ref(const RT& a) { return each(a, transpose); }

// ---- the entries ----
void register_determinants(Registry& r) {
  const std::vector<Sample> squares{{"3x3", {rnd({3, 3})}}, {"2x2x2", {rnd({2, 2, 2})}}, {"1x1", {rnd({1, 1})}}};
  const auto det_ref = [](const V& x) { return V{each_value(x[0], det)}; };
  for (const char* name : {"linalg_det", "det"}) {
    const bool linalg = std::string(name) == "linalg_det";
    r.push_back(
        {name,
         {f32(with(
             "", squares, [linalg](const TensorList& x) { return TensorList{linalg ? linalg_det(x[0]) : det(x[0])}; },
             det_ref))}});
  }
  const auto slogdet_ref = [](const V& x) {
    RT d = each_value(x[0], det);
    return V{map(d, [](double v) { return v > 0   ? 1.0
                                          : v < 0 ? -1.0
                                                  : 0.0; }),
             map(d, [](double v) { return std::log(std::abs(v)); })};
  };
  for (const char* name : {"linalg_slogdet", "slogdet"}) {
    const bool linalg = std::string(name) == "linalg_slogdet";
    r.push_back({name,
                 {with(
                     "", squares,
                     [linalg](const TensorList& x) {
                       auto [sign, logabsdet] = linalg ? linalg_slogdet(x[0]) : slogdet(x[0]);
                       return TensorList{sign, logabsdet};
                     },
                     slogdet_ref)}});
  }
  r.push_back(
      {"logdet",
       {with(
           "spd", {{"3x3", {rnd({3, 3})}}, {"2x2x2", {rnd({2, 2, 2})}}},
           [](const TensorList& x) { return TensorList{logdet(spd(x[0]))}; },
           [](const V& x) { return V{each_value(x[0], [](const Mat& m) { return std::log(det(spd_ref(m))); })}; })}});
}

void register_inverses(Registry& r) {
  const std::vector<Sample> squares{{"3x3", {shifted({3, 3}, 3)}}, {"2x2x2", {shifted({2, 2, 2}, 2)}}};
  const auto inv_ref = [](const V& x) { return V{each(x[0], inverse)}; };
  r.push_back({"linalg_inv",
               {f32(with(
                   "", squares, [](const TensorList& x) { return TensorList{linalg_inv(x[0])}; }, inv_ref))}});
  r.push_back({"inverse",
               {with(
                   "", squares, [](const TensorList& x) { return TensorList{inverse(x[0])}; }, inv_ref)}});
  const auto solve_ref = [](const RT& a, const RT& b) {
    std::vector<Mat> as = split(a), bs = split(b), out;
    for (size_t i = 0; i < std::max(as.size(), bs.size()); ++i)
      out.push_back(solve(as[as.size() == 1 ? 0 : i], bs[bs.size() == 1 ? 0 : i]));
    const Shape64 batch = a.dim() > b.dim() ? batch_of(a) : batch_of(b);
    return join(out, batch, a.size(-1), b.size(-1));
  };
  r.push_back(
      {"linalg_solve",
       {f32(with(
            "matrix",
            {{"3x3_3x2", {shifted({3, 3}, 3), rnd({3, 2})}}, {"2x3x3_3x2", {shifted({2, 3, 3}, 3), rnd({3, 2})}}},
            [](const TensorList& x) { return TensorList{linalg_solve(x[0], x[1])}; },
            [solve_ref](const V& x) { return V{solve_ref(x[0], x[1])}; })),
        with(
            "vector", {{"3x3_3", {shifted({3, 3}, 3), rnd({3})}}},
            [](const TensorList& x) { return TensorList{linalg_solve(x[0], x[1])}; },
            [solve_ref](const V& x) {
              return V{reshape_ref(solve_ref(x[0], reshape_ref(x[1], {3, 1})), {3})};
            }),
        with(
            "right", {{"3x3_2x3", {shifted({3, 3}, 3), rnd({2, 3})}}},
            [](const TensorList& x) { return TensorList{linalg_solve(x[0], x[1], false)}; },
            [solve_ref](const V& x) {  // X A = B is A^T X^T = B^T
              return V{transpose_ref(solve_ref(transpose_ref(x[0]), transpose_ref(x[1])))};
            })}});
}

void register_triangular(Registry& r) {
  const std::vector<Sample> systems{{"3x3_3x2", {shifted({3, 3}, 3), rnd({3, 2})}},
                                    {"2x3x3_3x2", {shifted({2, 3, 3}, 3), rnd({3, 2})}}};
  std::vector<OpCase> cases;
  for (bool upper : {false, true})
    for (bool unit : {false, true}) {
      const std::string variant = std::string(upper ? "upper" : "lower") + (unit ? "_unit" : "");
      OpCase c = with(
          variant, systems,
          [upper, unit](const TensorList& x) {
            return TensorList{linalg_solve_triangular(x[0], x[1], upper, true, unit)};
          },
          [upper, unit](const V& x) {
            std::vector<Mat> as = split(x[0]), out;
            const Mat b = split(x[1])[0];
            for (const Mat& a : as) out.push_back(solve(triangle(a, upper, unit), b));
            return V{join(out, batch_of(x[0]), 3, 2)};
          });
      cases.push_back(upper && !unit ? f32(c) : c);
    }
  cases.push_back(with(
      "right_upper", {{"3x3_2x3", {shifted({3, 3}, 3), rnd({2, 3})}}},
      [](const TensorList& x) { return TensorList{linalg_solve_triangular(x[0], x[1], true, false)}; },
      [](const V& x) {
        const Mat a = triangle(split(x[0])[0], true, false);
        return V{transpose_ref(join({solve(transpose(a), transpose(split(x[1])[0]))}, {}, 3, 2))};
      }));
  r.push_back({"linalg_solve_triangular", cases});
}

void register_cholesky(Registry& r) {
  const std::vector<Sample> samples{{"3x3", {rnd({3, 3})}}, {"2x2x2", {rnd({2, 2, 2})}}};
  r.push_back({"linalg_cholesky",
               {f32(with(
                    "lower", samples, [](const TensorList& x) { return TensorList{linalg_cholesky(spd(x[0]))}; },
                    [](const V& x) { return V{each(x[0], [](const Mat& m) { return cholesky_lower(spd_ref(m)); })}; })),
                with(
                    "upper", samples, [](const TensorList& x) { return TensorList{linalg_cholesky(spd(x[0]), true)}; },
                    [](const V& x) {
                      return V{each(x[0], [](const Mat& m) { return transpose(cholesky_lower(spd_ref(m))); })};
                    })}});
  // the factor: a triangle with a dominant diagonal (only the triangle is read)
  const std::vector<Sample> factors{{"3x2_3x3", {rnd({3, 2}), shifted({3, 3}, 3)}}};
  const auto system_of = [](const Mat& f, bool upper) {  // A = L L^T, or U^T U
    const Mat t = triangle(f, upper, false);
    return upper ? product(transpose(t), t) : product(t, transpose(t));
  };
  std::vector<OpCase> solves, inverses;
  for (bool upper : {false, true}) {
    solves.push_back(with(
        upper ? "upper" : "lower", factors,
        [upper](const TensorList& x) { return TensorList{cholesky_solve(x[0], x[1], upper)}; },
        [upper, system_of](const V& x) {
          return V{join({solve(system_of(split(x[1])[0], upper), split(x[0])[0])}, {}, 3, 2)};
        }));
    inverses.push_back(with(
        upper ? "upper" : "lower", {{"3x3", {shifted({3, 3}, 3)}}},
        [upper](const TensorList& x) { return TensorList{cholesky_inverse(x[0], upper)}; },
        [upper, system_of](const V& x) { return V{join({inverse(system_of(split(x[0])[0], upper))}, {}, 3, 3)}; }));
  }
  r.push_back({"cholesky_solve", solves});
  r.push_back({"cholesky_inverse", inverses});
}

void register_qr(Registry& r) {
  const std::vector<Sample> shapes{
      {"3x3", {rnd({3, 3})}}, {"4x3", {rnd({4, 3})}}, {"3x4", {rnd({3, 4})}}, {"2x3x2", {rnd({2, 3, 2})}}};
  const auto qr_refs = [](const V& x) {
    std::vector<Mat> qs, rs;
    for (const Mat& m : split(x[0])) {
      auto [q, rr] = qr_ref(m);
      qs.push_back(q);
      rs.push_back(rr);
    }
    return V{join(qs, batch_of(x[0]), qs[0].r, qs[0].c), join(rs, batch_of(x[0]), rs[0].r, rs[0].c)};
  };
  r.push_back({"linalg_qr",
               {f32(with(
                    "reduced", shapes, [](const TensorList& x) { return qr_fixed(linalg_qr(x[0])); }, qr_refs)),
                with(
                    "complete_wide", {{"3x4", {rnd({3, 4})}}},
                    [](const TensorList& x) { return qr_fixed(linalg_qr(x[0], "complete")); }, qr_refs),
                with(
                    "r", {{"4x3", {rnd({4, 3})}}},
                    [](const TensorList& x) {
                      Tensor rr = linalg_qr(x[0], "r").second;
                      return TensorList{rr * rr.diagonal(0, -2, -1).sign().unsqueeze(-1)};
                    },
                    [qr_refs](const V& x) { return V{qr_refs(x)[1]}; }, false)}});
}

// (U, S, Vh) of the reference, U's columns signed as signs_fixed does.
V svd_refs(const V& x) {
  std::vector<Mat> us, vhs;
  RT s = each_row(x[0], [&](const Mat& m) {
    Svd d = svd_ref(m);
    us.push_back(d.u);
    vhs.push_back(transpose(d.v));
    return d.s;
  });
  return V{join(us, batch_of(x[0]), us[0].r, us[0].c), s, join(vhs, batch_of(x[0]), vhs[0].r, vhs[0].c)};
}

void register_svd(Registry& r) {
  const std::vector<Sample> shapes{
      {"3x3", {rnd({3, 3})}}, {"4x3", {rnd({4, 3})}}, {"2x4", {rnd({2, 4})}}, {"2x3x2", {rnd({2, 3, 2})}}};
  const auto fixed = [](std::tuple<Tensor, Tensor, Tensor> usv) {
    auto [u, vh] = signs_fixed(std::get<0>(usv), std::get<2>(usv));
    return TensorList{u, std::get<1>(usv), vh};
  };
  r.push_back({"_linalg_svd",
               {f32(with(
                    "", shapes, [fixed](const TensorList& x) { return fixed(_linalg_svd(x[0])); }, svd_refs)),
                with(
                    "values_only", shapes,
                    [](const TensorList& x) { return TensorList{std::get<1>(_linalg_svd(x[0], false, false))}; },
                    [](const V& x) { return V{svd_refs(x)[1]}; }, false)}});
  r.push_back(
      {"linalg_svd",
       {with(
            "full_square", {{"3x3", {rnd({3, 3})}}}, [fixed](const TensorList& x) { return fixed(linalg_svd(x[0])); },
            svd_refs),
        with(
            "reduced", shapes, [fixed](const TensorList& x) { return fixed(linalg_svd(x[0], false)); }, svd_refs)}});
  r.push_back({"linalg_svdvals",
               {with(
                   "", shapes, [](const TensorList& x) { return TensorList{linalg_svdvals(x[0])}; },
                   [](const V& x) { return V{svd_refs(x)[1]}; })}});
  r.push_back({"svd",
               {with(
                    "", shapes,
                    [](const TensorList& x) {
                      auto [u, s, v] = svd(x[0]);
                      auto [uf, vhf] = signs_fixed(u, mT(v));
                      return TensorList{uf, s, mT(vhf)};
                    },
                    [](const V& x) {
                      V d = svd_refs(x);
                      return V{d[0], d[1], transpose_ref(d[2])};
                    }),
                with(
                    "no_uv", {{"4x3", {rnd({4, 3})}}},
                    [](const TensorList& x) {
                      auto [u, s, v] = svd(x[0], true, false);
                      return TensorList{u, s, v};
                    },
                    [](const V& x) {
                      return V{vals({4, 4}, std::vector<double>(16, 0.0)), svd_refs(x)[1],
                               vals({3, 3}, std::vector<double>(9, 0.0))};
                    })}});
}

void register_eigh(Registry& r) {
  const std::vector<Sample> shapes{{"3x3", {rnd({3, 3})}}, {"2x2x2", {rnd({2, 2, 2})}}, {"1x1", {rnd({1, 1})}}};
  // the input symmetrized, x + x^T: the gradient of a symmetric matrix's function is symmetric
  const auto eigh_refs = [](const V& x) {
    std::vector<Mat> vectors;
    RT values = each_row(x[0], [&](const Mat& m) {
      Mat s = m;
      for (int64_t i = 0; i < m.r; ++i)
        for (int64_t j = 0; j < m.c; ++j) s(i, j) = m(i, j) + m(j, i);
      auto [w, v] = jacobi(s);
      vectors.push_back(v);
      return w;
    });
    return V{values, join(vectors, batch_of(x[0]), x[0].size(-1), x[0].size(-1))};
  };
  const auto fixed = [](std::pair<Tensor, Tensor> wv) {
    return TensorList{wv.first, signs_fixed(wv.second, mT(wv.second)).first};
  };
  r.push_back(
      {"_linalg_eigh",
       {f32(with(
            "", shapes, [fixed](const TensorList& x) { return fixed(_linalg_eigh(x[0] + mT(x[0]))); }, eigh_refs)),
        with(
            "upper", shapes, [fixed](const TensorList& x) { return fixed(_linalg_eigh(x[0] + mT(x[0]), "U")); },
            eigh_refs)}});
  r.push_back(
      {"linalg_eigh",
       {with(
           "", shapes, [fixed](const TensorList& x) { return fixed(linalg_eigh(x[0] + mT(x[0]))); }, eigh_refs)}});
  r.push_back({"linalg_eigvalsh",
               {with(
                   "", shapes, [](const TensorList& x) { return TensorList{linalg_eigvalsh(x[0] + mT(x[0]))}; },
                   [eigh_refs](const V& x) { return V{eigh_refs(x)[0]}; })}});
}

void register_pinv(Registry& r) {
  const std::vector<Sample> shapes{{"4x3", {rnd({4, 3})}}, {"2x4", {rnd({2, 4})}}, {"2x3x3", {shifted({2, 3, 3}, 3)}}};
  const auto pinv_refs = [](const V& x) { return V{each(x[0], pinv_ref)}; };
  r.push_back({"linalg_pinv",
               {f32(with(
                    "", shapes, [](const TensorList& x) { return TensorList{linalg_pinv(x[0])}; }, pinv_refs)),
                with(
                    "hermitian", {{"3x3", {shifted({3, 3}, 3)}}},
                    [](const TensorList& x) {
                      return TensorList{linalg_pinv(x[0] + mT(x[0]), std::nullopt, std::nullopt, true)};
                    },
                    [](const V& x) {  // x + x^T is invertible: its pseudo-inverse is its inverse
                      return V{each(x[0], [](const Mat& m) {
                        Mat s = m;
                        for (int64_t i = 0; i < m.r; ++i)
                          for (int64_t j = 0; j < m.c; ++j) s(i, j) = m(i, j) + m(j, i);
                        return inverse(s);
                      })};
                    })}});
  r.push_back({"pinverse",
               {with(
                   "", shapes, [](const TensorList& x) { return TensorList{pinverse(x[0])}; }, pinv_refs)}});
  // rank: [[1, 2], [2, 4]] has rank 1, a well-conditioned matrix full rank
  r.push_back({"linalg_matrix_rank",
               {with(
                   "", {{"rank1", {vals({2, 2}, {1, 2, 2, 4})}}, {"full", {shifted({3, 3}, 3)}}},
                   [](const TensorList& x) { return TensorList{linalg_matrix_rank(x[0])}; },
                   [](const V& x) {
                     RT rank = each_value(x[0], [](const Mat& m) {
                       const Svd d = svd_ref(m);
                       const double tol = d.s[0] * std::numeric_limits<double>::epsilon() * std::max(m.r, m.c);
                       return static_cast<double>(
                           std::count_if(d.s.begin(), d.s.end(), [tol](double v) { return v > tol; }));
                     });
                     rank.dtype = kInt64;
                     return V{rank};
                   },
                   false)}});
}

}  // namespace

void register_factorizations(Registry& r) {
  register_determinants(r);
  register_inverses(r);
  register_triangular(r);
  register_cholesky(r);
  register_qr(r);
  register_svd(r);
  register_eigh(r);
  register_pinv(r);
}

}  // namespace graft::testing

// Sliding-window CPU kernels: im2col / col2im (convolution lowered onto GEMM, unfold/fold)
// and max pooling. Inputs are contiguous; the ops layer checked the geometry.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "graft/core/error.h"
#include "kernels.h"

namespace graft::cpu {
namespace {

template <class T>
void im2col_impl(T* cols, const T* x, int64_t N, int64_t C, int64_t H, int64_t W, const Window2d& w, int64_t ns,
                 int64_t rs) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const T* plane = x + (n * C + c) * H * W;
      for (int64_t ki = 0; ki < w.kh; ++ki)
        for (int64_t kj = 0; kj < w.kw; ++kj) {
          T* row = cols + n * ns + (c * w.kh * w.kw + ki * w.kw + kj) * rs;
          for (int64_t oy = 0; oy < w.oh; ++oy) {
            T* dst = row + oy * w.ow;
            const int64_t iy = oy * w.sh - w.ph + ki * w.dh;
            if (iy < 0 || iy >= H) {
              std::memset(dst, 0, sizeof(T) * static_cast<size_t>(w.ow));
              continue;
            }
            const T* src = plane + iy * W;
            const int64_t x0 = kj * w.dw - w.pw;  // input column of output column 0
            if (w.sw == 1) {                      // zeros left of the input, one copy, zeros right of it
              const int64_t lo = std::clamp<int64_t>(-x0, 0, w.ow), hi = std::clamp<int64_t>(W - x0, lo, w.ow);
              // plain loops: rows are short (ow elements), a library call each costs more
              const T* s0 = src + x0;
              for (int64_t ox = 0; ox < lo; ++ox) dst[ox] = T(0);
              for (int64_t ox = lo; ox < hi; ++ox) dst[ox] = s0[ox];
              for (int64_t ox = hi; ox < w.ow; ++ox) dst[ox] = T(0);
              continue;
            }
            for (int64_t ox = 0; ox < w.ow; ++ox) {
              const int64_t ix = x0 + ox * w.sw;
              dst[ox] = (ix >= 0 && ix < W) ? src[ix] : T(0);
            }
          }
        }
    }
}

template <class T>
void col2im_impl(T* x, const T* cols, int64_t N, int64_t C, int64_t H, int64_t W, const Window2d& w, int64_t ns,
                 int64_t rs) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      T* plane = x + (n * C + c) * H * W;
      for (int64_t ki = 0; ki < w.kh; ++ki)
        for (int64_t kj = 0; kj < w.kw; ++kj) {
          const T* row = cols + n * ns + (c * w.kh * w.kw + ki * w.kw + kj) * rs;
          for (int64_t oy = 0; oy < w.oh; ++oy) {
            const int64_t iy = oy * w.sh - w.ph + ki * w.dh;
            if (iy < 0 || iy >= H) continue;
            T* dst = plane + iy * W;
            const T* src = row + oy * w.ow;
            const int64_t x0 = kj * w.dw - w.pw;
            for (int64_t ox = 0; ox < w.ow; ++ox) {
              const int64_t ix = x0 + ox * w.sw;
              if (ix >= 0 && ix < W) dst[ix] += src[ox];
            }
          }
        }
    }
}

template <class T>
void max_pool_impl(T* out, int64_t* idx, const T* x, int64_t P, int64_t H, int64_t W, const Window2d& w) {
  for (int64_t p = 0; p < P; ++p) {
    const T* plane = x + p * H * W;
    for (int64_t oy = 0; oy < w.oh; ++oy)
      for (int64_t ox = 0; ox < w.ow; ++ox) {
        T best = -std::numeric_limits<T>::infinity();
        int64_t best_i = -1;
        const int64_t y0 = oy * w.sh - w.ph, x0 = ox * w.sw - w.pw;
        for (int64_t ki = 0; ki < w.kh; ++ki) {
          const int64_t iy = y0 + ki * w.dh;
          if (iy < 0 || iy >= H) continue;
          for (int64_t kj = 0; kj < w.kw; ++kj) {
            const int64_t ix = x0 + kj * w.dw;
            if (ix < 0 || ix >= W) continue;
            const T v = plane[iy * W + ix];
            // PyTorch's CPU rule: a NaN always takes over, so the window's last NaN is its index
            if (best_i < 0 || v > best || std::isnan(v)) {
              best = v;
              best_i = iy * W + ix;
            }
          }
        }
        const int64_t o = (p * w.oh + oy) * w.ow + ox;
        out[o] = best;
        idx[o] = best_i;
      }
  }
}

}  // namespace

void im2col(const Tensor& cols, const Tensor& x, const Window2d& w, int64_t ns, int64_t rs) {
  GRAFT_INTERNAL_ASSERT(x.is_contiguous() && cols.is_contiguous() && x.dim() == 4);
  GRAFT_DISPATCH_FLOATING(x.dtype(), "im2col", [&] {
    im2col_impl(cols.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), x.size(0), x.size(1), x.size(2), x.size(3), w, ns,
                rs);
  });
}

void col2im(const Tensor& x, const Tensor& cols, const Window2d& w, int64_t ns, int64_t rs) {
  GRAFT_INTERNAL_ASSERT(x.is_contiguous() && cols.is_contiguous() && x.dim() == 4);
  GRAFT_DISPATCH_FLOATING(x.dtype(), "col2im", [&] {
    col2im_impl(x.data_ptr<scalar_t>(), cols.data_ptr<scalar_t>(), x.size(0), x.size(1), x.size(2), x.size(3), w, ns,
                rs);
  });
}

void max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& x, const Window2d& w) {
  GRAFT_INTERNAL_ASSERT(x.is_contiguous() && out.is_contiguous() && indices.is_contiguous() && x.dim() == 3);
  GRAFT_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] {
    max_pool_impl(out.data_ptr<scalar_t>(), indices.data_ptr<int64_t>(), x.data_ptr<scalar_t>(), x.size(0), x.size(1),
                  x.size(2), w);
  });
}

}  // namespace graft::cpu

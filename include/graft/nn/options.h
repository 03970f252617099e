#pragma once
/// GRAFT_ARG: a chainable option (libtorch's TORCH_ARG): `Conv2dOptions(1, 8, 3).stride(2)`.
#define GRAFT_ARG(T, name)                                 \
 public:                                                   \
  auto& name(const T& new_##name) {                        \
    this->name##_ = new_##name;                            \
    return *this;                                          \
  }                                                        \
  const T& name() const noexcept { return this->name##_; } \
                                                           \
 private:                                                  \
  T name##_

/// GRAFT_EXPANDING_ARG: a per-spatial-dim option (kernel_size, stride, padding, dilation) that also
/// takes one int for every dim, as libtorch's ExpandingArray: `Conv2dOptions(1, 8, 3).stride(2)` is
/// `.stride({2})`, which the layers expand to each spatial dim.
#define GRAFT_EXPANDING_ARG(name)                     \
 public:                                              \
  auto& name(int64_t new_##name) {                    \
    this->name##_ = std::vector<int64_t>{new_##name}; \
    return *this;                                     \
  }                                                   \
  GRAFT_ARG(std::vector<int64_t>, name)

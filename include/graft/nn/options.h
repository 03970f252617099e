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

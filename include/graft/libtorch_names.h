#pragma once
/// libtorch's spellings for what graft has under its own names, so that a libtorch program
/// builds with `namespace torch = graft;` (graft/graft.h includes this header): the macros
/// TORCH_MODULE, TORCH_CHECK and AT_ASSERT, torch::autograd's Variable names and torch::str. The device
/// constants (kCPU, kCUDA) and torch::cuda live with Device (graft/core/device.h).
#include <sstream>
#include <string>
#include <vector>

#include "graft/core/error.h"
#include "graft/core/tensor.h"
#include "graft/nn/module.h"

namespace graft::autograd {
/// libtorch's autograd::Variable: a Tensor (they have been one type since PyTorch 0.4).
using Variable = Tensor;
using variable_list = std::vector<Tensor>;
using tensor_list = std::vector<Tensor>;
}  // namespace graft::autograd

namespace graft {
/// libtorch's torch::str (c10::str): the arguments streamed, in order, into one string.
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace graft

namespace graft::detail {
/// TORCH_CHECK's message: the caller's parts, or libtorch's text for the failed condition.
inline std::string check_message(const char* cond) { return str("Expected ", cond, " to be true, but got false."); }
template <class... Parts>
std::string check_message(const char*, const Parts&... parts) {
  return str(parts...);
}
}  // namespace graft::detail

#ifndef TORCH_MODULE
/// libtorch's TORCH_MODULE(Name): GRAFT_MODULE, the holder of NameImpl.
#define TORCH_MODULE(Name) GRAFT_MODULE(Name)
#endif

#ifndef TORCH_CHECK
/// libtorch's TORCH_CHECK(cond, message parts...): throws graft::RuntimeError when cond is false.
#define TORCH_CHECK(cond, ...)                                                                       \
  do {                                                                                               \
    if (__builtin_expect(!(cond), 0)) {                                                              \
      throw ::graft::RuntimeError(::graft::detail::check_message(#cond __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                                                \
  } while (0)
#endif

#ifndef AT_ASSERT
/// libtorch's AT_ASSERT(cond, ...): an internal invariant (GRAFT_INTERNAL_ASSERT).
#define AT_ASSERT(cond, ...) GRAFT_INTERNAL_ASSERT(cond __VA_OPT__(, ) __VA_ARGS__)
#endif

#pragma once
/// Typed errors thrown by graft. Each maps to the Python exception of the same name.
/// Messages name the op and the shapes, dtypes or devices involved. See docs/notes/errors.md.
#include <sstream>
#include <stdexcept>
#include <string>

namespace graft {

/// Base of every graft error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// An argument has the right type but a bad value (Python ValueError).
class ValueError : public Error {
 public:
  using Error::Error;
};
/// An argument has the wrong type or dtype (Python TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};
/// An index or dimension is out of range (Python IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};
/// A name looked up in a dictionary (state dict, module registry) is missing or taken
/// (Python KeyError).
class KeyError : public Error {
 public:
  using Error::Error;
};
/// Anything else that went wrong at run time (Python RuntimeError).
class RuntimeError : public Error {
 public:
  using Error::Error;
};
/// An allocator could not get memory even after releasing its cache (PyTorch's
/// torch.OutOfMemoryError, a RuntimeError). Nothing allocated before is lost.
class OutOfMemoryError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};
/// A linear-algebra routine failed on its input: a singular matrix, one that is not
/// positive-definite, no convergence (PyTorch's torch.linalg.LinAlgError, a RuntimeError).
class LinAlgError : public RuntimeError {
 public:
  using RuntimeError::RuntimeError;
};
/// The operation is not implemented for these arguments (Python NotImplementedError).
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <class... Parts>
std::string str(const Parts&... parts) {
  std::ostringstream os;
  ((os << parts), ...);
  return os.str();
}
[[noreturn]] void internal_assert_fail(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace detail

}  // namespace graft

/// Throws graft::ErrType with the concatenated message parts when `cond` is false.
#define GRAFT_CHECK(cond, ErrType, ...)                          \
  do {                                                           \
    if (__builtin_expect(!(cond), 0)) {                          \
      throw ::graft::ErrType(::graft::detail::str(__VA_ARGS__)); \
    }                                                            \
  } while (0)

/// Checks an internal invariant; failure is a graft bug, reported as RuntimeError.
#define GRAFT_INTERNAL_ASSERT(cond, ...)                                                          \
  do {                                                                                            \
    if (__builtin_expect(!(cond), 0)) {                                                           \
      ::graft::detail::internal_assert_fail(__FILE__, __LINE__, #cond,                            \
                                            ::graft::detail::str("" __VA_OPT__(, ) __VA_ARGS__)); \
    }                                                                                             \
  } while (0)

#pragma once
// Helpers shared by the test binaries.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graft/graft.h"

namespace graft::testing {

/// PyTorch's exact message for backward through released saved tensors (spelled out here,
/// independently of the implementation's constant).
inline const char* const kSecondTimeMessage =
    "Trying to backward through the graph a second time (or directly access saved tensors after they have already "
    "been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). "
    "Specify retain_graph=True if you need to backward through the graph a second time or if you need to access "
    "saved tensors after calling backward.";

/// Values of t as doubles (any dtype, any layout).
std::vector<double> values(const Tensor& t);
/// Asserts t has the given sizes and values (within tol).
void expect_tensor(const Tensor& t, std::vector<int64_t> sizes, std::vector<double> vals, double tol = 1e-6);
/// Captures autograd warnings for the lifetime of the object.
class WarningCapture {
 public:
  WarningCapture();
  ~WarningCapture();
  const std::vector<std::string>& messages() const { return *msgs_; }

 private:
  std::shared_ptr<std::vector<std::string>> msgs_;
};

}  // namespace graft::testing

/// Expects `stmt` to throw graft::ErrType whose what() equals `msg` exactly.
#define EXPECT_THROW_MSG(stmt, ErrType, msg)                 \
  do {                                                       \
    try {                                                    \
      stmt;                                                  \
      ADD_FAILURE() << "expected " #ErrType " from: " #stmt; \
    } catch (const ::graft::ErrType& e) {                    \
      EXPECT_EQ(std::string(e.what()), std::string(msg));    \
    }                                                        \
  } while (0)
/// Expects `stmt` to throw graft::ErrType whose message contains `part`.
#define EXPECT_THROW_HAS(stmt, ErrType, part)                                     \
  do {                                                                            \
    try {                                                                         \
      stmt;                                                                       \
      ADD_FAILURE() << "expected " #ErrType " from: " #stmt;                      \
    } catch (const ::graft::ErrType& e) {                                         \
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what(); \
    }                                                                             \
  } while (0)

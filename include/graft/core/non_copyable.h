#pragma once
/// NonCopyable: the base of RAII guards, whose destructor undoes once what their constructor
/// did (a mode set, a scope entered), so a copy would undo it twice.
namespace graft::detail {

class NonCopyable {
 public:
  NonCopyable(const NonCopyable&) = delete;
  NonCopyable& operator=(const NonCopyable&) = delete;

 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;
};

}  // namespace graft::detail

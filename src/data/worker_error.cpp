// The exception a consumer sees for an error raised in a DataLoader worker thread.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <typeinfo>

#include "epoch_run.h"
#include "graft/core/error.h"

namespace graft::data::detail {

namespace {
std::string demangled_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(type.name());
}

std::string caught(const std::string& type_name, int64_t worker, const char* what) {
  return ::graft::detail::str("Caught ", type_name, " in DataLoader worker ", worker, ": ", what);
}

// `e` rewrapped as the first of Errs that it is (so list the most derived types first), with
// the type's name in the message.
template <class Err, class... Rest>
std::exception_ptr rewrap(const Error& e, int64_t worker) {
  if constexpr (sizeof...(Rest) > 0)
    if (!dynamic_cast<const Err*>(&e)) return rewrap<Rest...>(e, worker);
  std::string type_name = demangled_name(typeid(Err));
  if (const size_t scope = type_name.rfind("::"); scope != std::string::npos)
    type_name.erase(0, scope + 2);  // graft::ValueError -> ValueError
  return std::make_exception_ptr(Err(caught(type_name, worker, e.what())));
}

std::exception_ptr wrap(std::exception_ptr error, int64_t worker) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    // OutOfMemoryError is a RuntimeError, and every one an Error
    return rewrap<OutOfMemoryError, ValueError, TypeError, IndexError, KeyError, NotImplementedError, RuntimeError,
                  Error>(e, worker);
  } catch (const std::exception& e) {
    return std::make_exception_ptr(RuntimeError(caught(demangled_name(typeid(e)), worker, e.what())));
  } catch (...) {
    return std::make_exception_ptr(
        RuntimeError(::graft::detail::str("Caught an exception of unknown type in DataLoader worker ", worker)));
  }
}
}  // namespace

std::exception_ptr wrap_worker_error(std::exception_ptr error, int64_t worker) noexcept {
  try {
    return wrap(error, worker);
  } catch (...) {
    return error;  // building the message failed (out of memory): pass the original on
  }
}

}  // namespace graft::data::detail

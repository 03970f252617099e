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

template <class Err>
std::exception_ptr rewrap(const char* type_name, int64_t worker, const std::exception& e) {
  return std::make_exception_ptr(Err(caught(type_name, worker, e.what())));
}

std::exception_ptr wrap(std::exception_ptr error, int64_t worker) {
  // Most derived graft types first: OutOfMemoryError is a RuntimeError.
  try {
    std::rethrow_exception(error);
  } catch (const OutOfMemoryError& e) {
    return rewrap<OutOfMemoryError>("OutOfMemoryError", worker, e);
  } catch (const ValueError& e) {
    return rewrap<ValueError>("ValueError", worker, e);
  } catch (const TypeError& e) {
    return rewrap<TypeError>("TypeError", worker, e);
  } catch (const IndexError& e) {
    return rewrap<IndexError>("IndexError", worker, e);
  } catch (const KeyError& e) {
    return rewrap<KeyError>("KeyError", worker, e);
  } catch (const NotImplementedError& e) {
    return rewrap<NotImplementedError>("NotImplementedError", worker, e);
  } catch (const RuntimeError& e) {
    return rewrap<RuntimeError>("RuntimeError", worker, e);
  } catch (const Error& e) {
    return rewrap<Error>("Error", worker, e);
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

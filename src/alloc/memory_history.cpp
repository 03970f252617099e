// The history ring, op scopes, and backtrace capture for allocator events.
#include "graft/alloc/memory_history.h"

#include <cxxabi.h>
#include <execinfo.h>

#include <chrono>
#include <cstdlib>

#include "graft/core/enum_names.h"

namespace graft::alloc {
namespace {
thread_local MemoryOpScope* tl_scope = nullptr;
constexpr int kMaxFrames = 48;
}  // namespace

const char* trace_action_name(TraceEntry::Action a) {
  static constexpr const char* kNames[] = {"alloc",         "free_requested", "free_completed",
                                           "segment_alloc", "segment_free",   "oom"};
  return graft::detail::enum_name(kNames, a, "unknown");
}

MemoryOpScope::MemoryOpScope(const char* op) noexcept : op_(op), obj_(nullptr), namer_(nullptr), outer_(tl_scope) {
  tl_scope = this;
}
MemoryOpScope::MemoryOpScope(const void* obj, std::string (*namer)(const void*)) noexcept
    : op_(nullptr), obj_(obj), namer_(namer), outer_(tl_scope) {
  tl_scope = this;
}
MemoryOpScope::~MemoryOpScope() { tl_scope = outer_; }

std::string MemoryOpScope::current() {
  const MemoryOpScope* s = tl_scope;
  if (!s) return {};
  if (s->op_) return s->op_;
  return s->namer_ ? s->namer_(s->obj_) : std::string();
}

std::vector<std::string> AllocContext::symbolized_frames() const {
  std::vector<std::string> out;
  if (frames.empty()) return out;
  char** syms = backtrace_symbols(frames.data(), static_cast<int>(frames.size()));
  if (!syms) return out;
  for (size_t i = 0; i < frames.size(); ++i) {
    std::string line = syms[i];
    // "binary(mangled+0x1f) [0x...]": demangle the part between '(' and '+'
    const auto open = line.find('('), plus = line.find('+', open == std::string::npos ? 0 : open);
    if (open != std::string::npos && plus != std::string::npos && plus > open + 1) {
      const std::string mangled = line.substr(open + 1, plus - open - 1);
      int status = 0;
      char* dem = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
      if (status == 0 && dem) line = line.substr(0, open + 1) + dem + line.substr(plus);
      std::free(dem);
    }
    out.push_back(std::move(line));
  }
  std::free(syms);
  return out;
}

void MemoryHistory::configure(bool enabled, size_t max_entries, bool cpp_stacks) {
  std::lock_guard<std::mutex> g(mu_);
  if (enabled) {
    if (max_entries == 0) max_entries = 1;
    if (max_entries != max_entries_ || !enabled_) {  // start a fresh ring
      ring_.clear();
      next_ = 0;
    }
    max_entries_ = max_entries;
  } else {
    ring_.clear();
    ring_.shrink_to_fit();
    next_ = 0;
  }
  cpp_stacks_.store(enabled && cpp_stacks, std::memory_order_relaxed);
  enabled_.store(enabled, std::memory_order_relaxed);
}

std::shared_ptr<const AllocContext> MemoryHistory::gather() const {
  if (!enabled()) return nullptr;
  auto ctx = std::make_shared<AllocContext>();
  ctx->op = MemoryOpScope::current();
  if (cpp_stacks()) {
    void* buf[kMaxFrames];
    const int n = backtrace(buf, kMaxFrames);
    ctx->frames.assign(buf + (n > 2 ? 2 : 0), buf + n);  // drop gather() and the allocator entry
  }
  return ctx;
}

void MemoryHistory::record(TraceEntry e) {
  if (!enabled()) return;
  e.time_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                  .count();
  std::lock_guard<std::mutex> g(mu_);
  if (max_entries_ == 0) return;
  if (ring_.size() < max_entries_) {
    ring_.push_back(std::move(e));
  } else {
    ring_[next_] = std::move(e);
    next_ = (next_ + 1) % max_entries_;
  }
}

std::vector<TraceEntry> MemoryHistory::entries() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<TraceEntry> out;
  out.reserve(ring_.size());
  for (size_t i = 0; i < ring_.size(); ++i) out.push_back(ring_[(next_ + i) % ring_.size()]);
  return out;
}

size_t MemoryHistory::max_entries() const {
  std::lock_guard<std::mutex> g(mu_);
  return max_entries_;
}

}  // namespace graft::alloc

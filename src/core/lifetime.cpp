// The observer's installation, the tier, and interned creation sites.
// See include/graft/core/lifetime.h and docs/notes/doctor.md.
#include "graft/core/lifetime.h"

#include <cxxabi.h>
#include <execinfo.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace graft::lifetime {

namespace detail {
std::atomic<uint8_t> g_tier{0};
std::atomic<Observer*> g_observer{nullptr};
}  // namespace detail

void set_tier(Tier t) noexcept { detail::g_tier.store(static_cast<uint8_t>(t), std::memory_order_relaxed); }

// ---- sites ----
namespace {
struct SiteEntry {
  Site site;
  std::vector<void*> pcs;  // C++ sites: the raw frames, symbolised on first use
  bool resolved = true;
};

struct SiteTable {
  std::mutex mu;
  std::vector<SiteEntry> entries{SiteEntry{}};  // id 0: unknown
  std::unordered_map<std::string, SiteId> by_key;
  std::unordered_map<uint64_t, SiteId> by_frames;
};
SiteTable& sites() {
  static SiteTable* t = new SiteTable;  // never destroyed: objects may die during exit
  return *t;
}

std::string key_of(const Site& s) {
  std::string k = s.file;
  k += '\0';
  k += std::to_string(s.line);
  k += '\0';
  k += s.function;
  k += '\0';
  k += s.scope;
  k += '\0';
  k += s.inner;
  k += s.python ? "\1" : "\0";
  return k;
}

std::atomic<SiteProvider> g_python_provider{nullptr};

constexpr int kMaxCppFrames = 24;

std::string demangle(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = (status == 0 && d) ? d : name;
  std::free(d);
  return out;
}

/// Frames of graft itself (and of the C++ runtime) are skipped when looking for the caller.
bool internal_frame(const std::string& function, const std::string& object) {
  // the qualified name starts before the parameter list ("void graft::f<...>(...)" too)
  const size_t ns = function.find("graft::");
  if (ns != std::string::npos && ns < function.find('(')) return true;
  if (function.rfind("std::", 0) == 0 || function.rfind("__gnu_cxx::", 0) == 0) return true;
  if (function.empty() && object.find("libc.so") != std::string::npos) return true;
  return object.find("libstdc++") != std::string::npos || object.find("libgcc") != std::string::npos;
}

struct Frame {
  std::string object, function, file;
  int line = 0;
};

/// Runs addr2line once on `object` for `offsets` (PIE / shared-object relative addresses);
/// fills function and file:line of each frame when the tool and the symbols are there.
void addr2line(const std::string& object, std::vector<std::pair<uintptr_t, Frame*>>& offsets) {
  if (offsets.empty() || object.empty() || object.find('\'') != std::string::npos) return;
  std::string cmd = "addr2line -f -C -e '" + object + "'";
  for (auto& [off, f] : offsets) {
    char b[32];
    std::snprintf(b, sizeof b, " 0x%lx", static_cast<unsigned long>(off));
    cmd += b;
  }
  cmd += " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return;
  char fn[4096], loc[4096];
  for (auto& [off, f] : offsets) {
    if (!std::fgets(fn, sizeof fn, p) || !std::fgets(loc, sizeof loc, p)) break;
    fn[std::strcspn(fn, "\n")] = 0;
    loc[std::strcspn(loc, "\n")] = 0;
    if (std::strcmp(fn, "??") != 0) f->function = fn;
    std::string l = loc;
    const auto colon = l.rfind(':');
    if (colon != std::string::npos && l.compare(0, 2, "??") != 0) {
      f->file = l.substr(0, colon);
      f->line = std::atoi(l.c_str() + colon + 1);
    }
  }
  pclose(p);
}

std::mutex g_frame_mu;
std::unordered_map<void*, Frame>& frame_cache() {
  static auto* m = new std::unordered_map<void*, Frame>;
  return *m;
}

/// Symbolises `pcs` (cached per address: most backtraces share most of their frames).
std::vector<Frame> symbolise(const std::vector<void*>& pcs) {
  std::vector<Frame> frames(pcs.size());
  std::vector<size_t> missing;
  {
    std::lock_guard<std::mutex> g(g_frame_mu);
    for (size_t i = 0; i < pcs.size(); ++i) {
      auto it = frame_cache().find(pcs[i]);
      if (it != frame_cache().end())
        frames[i] = it->second;
      else
        missing.push_back(i);
    }
  }
  if (missing.empty()) return frames;
  std::vector<void*> todo;
  for (size_t i : missing) todo.push_back(pcs[i]);
  char** syms = backtrace_symbols(todo.data(), static_cast<int>(todo.size()));
  if (!syms) return frames;
  std::map<std::string, std::vector<std::pair<uintptr_t, Frame*>>> lookups;
  for (size_t k = 0; k < todo.size(); ++k) {
    // "object(mangled+0x1f) [0x...]" or "object(+0x1234) [0x...]"
    std::string s = syms[k];
    const auto open = s.find('('), plus = s.find('+', open == std::string::npos ? 0 : open),
               close = s.find(')', open == std::string::npos ? 0 : open);
    Frame& f = frames[missing[k]];
    f.object = open == std::string::npos ? s : s.substr(0, open);
    uintptr_t offset = 0;
    if (open != std::string::npos && plus != std::string::npos && close != std::string::npos) {
      if (plus > open + 1) f.function = demangle(s.substr(open + 1, plus - open - 1));
      offset = std::strtoull(s.c_str() + plus + 1, nullptr, 16);
    }
    // unexported symbols of an executable: ask addr2line (names come from the symbol table)
    if (f.function.empty() && offset != 0)
      lookups[f.object.empty() ? "/proc/self/exe" : f.object].push_back({offset, &f});
  }
  std::free(syms);
  for (auto& [object, offsets] : lookups) addr2line(object, offsets);
  std::lock_guard<std::mutex> g(g_frame_mu);
  for (size_t i : missing) frame_cache()[pcs[i]] = frames[i];
  return frames;
}

/// Resolves a C++ site: the first frame outside graft and the C++ runtime.
Site resolve_frames(const std::vector<void*>& pcs) {
  Site out;
  for (const Frame& f : symbolise(pcs)) {
    if (internal_frame(f.function, f.object)) continue;
    out.function = f.function.empty() ? f.object : f.function;
    out.file = f.file;
    out.line = f.line;
    break;
  }
  return out;
}
}  // namespace

std::string Site::detail() const { return inner.empty() ? where() : where() + " (" + inner + ")"; }

std::string Site::where() const {
  if (!file.empty() && line > 0) {
    const auto slash = file.rfind('/');
    return (slash == std::string::npos ? file : file.substr(slash + 1)) + ":" + std::to_string(line);
  }
  if (!function.empty()) return function;
  return "<unknown>";
}

SiteId intern_site(const Site& s) {
  SiteTable& t = sites();
  std::string k = key_of(s);
  std::lock_guard<std::mutex> g(t.mu);
  auto it = t.by_key.find(k);
  if (it != t.by_key.end()) return it->second;
  const auto id = static_cast<SiteId>(t.entries.size());
  t.entries.push_back(SiteEntry{s, {}, true});
  t.by_key.emplace(std::move(k), id);
  return id;
}

Site site(SiteId id) {
  SiteTable& t = sites();
  std::vector<void*> pcs;
  {
    std::lock_guard<std::mutex> g(t.mu);
    if (id >= t.entries.size()) return {};
    if (t.entries[id].resolved) return t.entries[id].site;
    pcs = t.entries[id].pcs;
  }
  Site s = resolve_frames(pcs);  // outside the lock: it may run addr2line
  std::lock_guard<std::mutex> g(t.mu);
  t.entries[id].site = s;
  t.entries[id].resolved = true;
  return s;
}

SiteId capture_cpp_site() {
  void* buf[kMaxCppFrames];
  const int n = backtrace(buf, kMaxCppFrames);
  if (n <= 1) return 0;
  uint64_t h = 1469598103934665603ULL;
  for (int i = 1; i < n; ++i) {
    h ^= reinterpret_cast<uintptr_t>(buf[i]);
    h *= 1099511628211ULL;
  }
  SiteTable& t = sites();
  std::lock_guard<std::mutex> g(t.mu);
  auto it = t.by_frames.find(h);
  if (it != t.by_frames.end()) return it->second;
  const auto id = static_cast<SiteId>(t.entries.size());
  SiteEntry e;
  e.pcs.assign(buf + 1, buf + n);
  e.resolved = false;
  t.entries.push_back(std::move(e));
  t.by_frames.emplace(h, id);
  return id;
}

namespace {
thread_local SiteId tl_site_override = 0;
}
SiteScope::SiteScope(SiteId site) noexcept : prev_(tl_site_override) {
  if (site) tl_site_override = site;
}
SiteScope::~SiteScope() { tl_site_override = prev_; }

SiteId capture_site() {
  if (tier() != Tier::Sites) return 0;
  if (tl_site_override) return tl_site_override;
  if (SiteProvider p = g_python_provider.load(std::memory_order_acquire)) {
    if (SiteId id = p()) return id;
  }
  return capture_cpp_site();
}

void set_python_site_provider(SiteProvider p) noexcept { g_python_provider.store(p, std::memory_order_release); }

// ---- observer and optimizer steps ----
void set_observer(Observer* o) noexcept { detail::g_observer.store(o, std::memory_order_release); }

void note_optimizer_step(const void* optimizer, bool finished) noexcept {
  if (Observer* o = observer()) o->optimizer_step(optimizer, finished);
}

}  // namespace graft::lifetime

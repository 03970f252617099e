// The doctor's memory views: where the reserved bytes go (F5), fragmentation and the largest
// allocation that would succeed (F6), the OOM report (F11), the peak's sentences, and the
// "used outside our allocator" query (F13). See docs/notes/doctor.md ("Memory").
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <sstream>

#include "graft/alloc/caching_allocator.h"
#include "graft/core/storage.h"
#include "graft/memory.h"
#include "internal.h"
#include "object_ledger.h"

namespace graft::doctor {

using detail::format_bytes;

namespace {

std::mutex g_query_mu;
ExternalMemoryQuery& external_query() {
  static ExternalMemoryQuery* q = new ExternalMemoryQuery;
  return *q;
}

/// The default for the CPU: resident memory of the process minus what the allocator reserves.
std::optional<int64_t> default_external(Device device, int64_t reserved) {
  if (!device.is_cpu()) return std::nullopt;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return std::nullopt;
  long long pages = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &pages, &resident);
  std::fclose(f);
  if (n != 2) return std::nullopt;
  const int64_t rss = resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
  return std::max<int64_t>(0, rss - reserved);
}

std::string pct(double x) {
  char b[16];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}

}  // namespace

void set_external_memory_query(ExternalMemoryQuery q) {
  std::lock_guard<std::mutex> g(g_query_mu);
  external_query() = std::move(q);
}

Ledger ledger(Device device) { return ledger(device_allocator(device)); }

Ledger ledger(const alloc::CachingAllocator& allocator) {
  const Device device = allocator.device();
  Ledger l;
  l.device = device;
  for (const alloc::SegmentInfo& seg : allocator.snapshot()) {
    l.reserved += static_cast<int64_t>(seg.total_size);
    const bool whole_free = seg.allocated_size == 0;
    for (const alloc::BlockInfo& b : seg.blocks) {
      if (std::string(b.state) == "active_allocated") {
        l.live_by_category[memory_category_name(b.category)] += static_cast<int64_t>(b.requested_size);
        l.rounding += static_cast<int64_t>(b.size - b.requested_size);
      } else if (whole_free) {
        l.cached_releasable += static_cast<int64_t>(b.size);
      } else {
        l.free_trapped += static_cast<int64_t>(b.size);
      }
    }
  }
  // graph nodes on the host: every live generation's node bytes (counted while a session runs)
  for (const detail::GenerationCounts& c : detail::objects().live_generations())
    l.graph_host_bytes += c.bytes[int(detail::Kind::Node)];
  ExternalMemoryQuery q;
  {
    std::lock_guard<std::mutex> g(g_query_mu);
    q = external_query();
  }
  l.outside = q ? q(device) : default_external(device, l.reserved);
  return l;
}

std::vector<std::string> Ledger::sentences() const {
  std::vector<std::string> out;
  const std::string dev = device.str();
  out.push_back(format_bytes(reserved) + " is reserved by graft's allocator on " + dev + ":");
  static const std::pair<const char*, const char*> names[] = {
      {"parameter", "holds parameters"},
      {"gradient", "holds gradients (.grad)"},
      {"optimizer_state", "holds optimizer state"},
      {"saved_for_backward", "is saved for backward by live graphs"},
      {"data_batch", "holds data batches"},
      {"other", "holds other live tensors (user-held and temporary)"},
  };
  for (auto [key, what] : names) {
    auto it = live_by_category.find(key);
    if (it != live_by_category.end() && it->second > 0)
      out.push_back("  " + format_bytes(it->second) + " " + what + ";");
  }
  if (rounding > 0)
    out.push_back("  " + format_bytes(rounding) + " is rounding: each request is rounded up to its block size;");
  if (cached_releasable > 0)
    out.push_back("  " + format_bytes(cached_releasable) +
                  " is cached and could be returned to the system (empty_cache());");
  if (free_trapped > 0)
    out.push_back("  " + format_bytes(free_trapped) +
                  " is free but trapped next to live blocks in partly used segments.");
  int64_t sum = rounding + cached_releasable + free_trapped;
  for (auto& [k, v] : live_by_category) sum += v;
  out.push_back("  (the parts add up to " + format_bytes(sum) + (sum == reserved ? ", all of it" : ", NOT all of it") +
                ".)");
  if (graph_host_bytes > 0)
    out.push_back(format_bytes(graph_host_bytes) +
                  " of host memory holds backward-graph nodes (outside the allocator).");
  if (outside) out.push_back(format_bytes(*outside) + " of " + dev + " memory is used outside graft's allocator.");
  return out;
}

Fragmentation fragmentation(Device device) { return fragmentation(device_allocator(device)); }

Fragmentation fragmentation(const alloc::CachingAllocator& allocator) {
  Fragmentation fr;
  fr.device = allocator.device();
  PoolFragmentation small{"small"}, large{"large"};
  for (const alloc::SegmentInfo& seg : allocator.snapshot()) {
    PoolFragmentation& p = std::string(seg.segment_type) == "small" ? small : large;
    p.segments += 1;
    for (const alloc::BlockInfo& b : seg.blocks) {
      if (std::string(b.state) == "active_allocated") continue;
      p.free_blocks += 1;
      p.free_bytes += static_cast<int64_t>(b.size);
      p.largest_free = std::max(p.largest_free, static_cast<int64_t>(b.size));
    }
  }
  for (PoolFragmentation* p : {&small, &large}) {
    p->fragmentation = p->free_bytes > 0 ? 1.0 - static_cast<double>(p->largest_free) / p->free_bytes : 0.0;
    fr.pools.push_back(*p);
  }
  fr.largest_allocation = static_cast<int64_t>(allocator.largest_allocation());
  return fr;
}

std::vector<std::string> Fragmentation::sentences() const {
  std::vector<std::string> out;
  for (const PoolFragmentation& p : pools) {
    if (p.segments == 0) continue;
    std::ostringstream o;
    o << "The " << p.pool << " pool has " << p.segments << " segment" << (p.segments == 1 ? "" : "s") << " with "
      << format_bytes(p.free_bytes) << " free in " << p.free_blocks << " block" << (p.free_blocks == 1 ? "" : "s");
    if (p.free_blocks > 0)
      o << "; the largest is " << format_bytes(p.largest_free) << ", so fragmentation is " << pct(p.fragmentation)
        << " (1 - largest free / total free)";
    o << ".";
    out.push_back(o.str());
  }
  out.push_back("The largest single allocation that would succeed now is " + format_bytes(largest_allocation) + ".");
  return out;
}

std::vector<std::string> PeakReport::sentences() const {
  std::vector<std::string> out;
  if (step == 0) return out;
  out.push_back("Step " + std::to_string(step) + " peaked at " + format_bytes(peak_bytes) + " of live tensors (" +
                format_bytes(peak_bytes - start_bytes) + " above its start):");
  // two tables, each adding up to the peak: by category, then by creation line
  out.push_back("  by category:");
  for (auto& [cat, b] : by_category) out.push_back("    " + format_bytes(b) + " " + cat);
  out.push_back("  by the line that made it:");
  constexpr size_t kLines = 8;
  int64_t rest = 0;
  for (size_t i = 0; i < by_line.size(); ++i) {
    const auto& [line, b] = by_line[i];
    if (i >= kLines) {
      rest += b;
      continue;
    }
    out.push_back("    " + format_bytes(b) + (line == "before the session" ? " from " : " made at ") + line);
  }
  if (by_line.size() > kLines)
    out.push_back("    " + format_bytes(rest) + " made at " + std::to_string(by_line.size() - kLines) + " other lines");
  if (!by_scope.empty()) {
    out.push_back("Saved for backward at the peak, by module (what checkpointing that module would save at most):");
    for (auto& [scope, b] : by_scope) out.push_back("  " + format_bytes(b) + " in " + scope);
  }
  return out;
}

std::string oom_report(const alloc::OomInfo& info) {
  std::ostringstream o;
  o << "Out of memory on " << info.device.str() << ": a request of " << format_bytes(int64_t(info.requested))
    << " needed a new segment of " << format_bytes(int64_t(info.alloc_size)) << ".\n";
  const int64_t free_in_segments = info.reserved - info.allocated;
  const bool capped = info.limit && static_cast<size_t>(info.reserved) + info.alloc_size > *info.limit &&
                      (!info.device_info || info.device_info->free >= info.alloc_size);
  if (capped) {
    o << "Cause: the per-process cap. " << format_bytes(int64_t(*info.limit)) << " is allowed, "
      << format_bytes(info.reserved) << " is reserved, so a new segment of " << format_bytes(int64_t(info.alloc_size))
      << " would pass the cap (set_per_process_memory_fraction).\n";
  } else if (free_in_segments >= static_cast<int64_t>(info.requested)) {
    o << "Cause: fragmentation. " << format_bytes(free_in_segments)
      << " is free inside the allocator's segments, but no free block is large enough: live blocks pin the "
         "holes (try GRAFT_ALLOC_CONF=max_split_size_mb:<MB>, or free long-lived small tensors).\n";
  } else {
    o << "Cause: a true shortage. " << format_bytes(info.allocated) << " is live in tensors";
    if (info.device_info) o << " and the device has " << format_bytes(int64_t(info.device_info->free)) << " free";
    o << ".\n";
  }
  const Ledger l = info.allocator ? ledger(*info.allocator) : ledger(info.device);
  for (const std::string& s : l.sentences()) o << s << "\n";
  const Fragmentation fr = info.allocator ? fragmentation(*info.allocator) : fragmentation(info.device);
  for (const std::string& s : fr.sentences()) o << s << "\n";
  // the top holders by creation line (live storages, made while a session counted)
  struct Line {
    int64_t bytes = 0;
    int64_t count = 0;
    std::string category;
  };
  std::map<std::pair<lifetime::SiteId, std::string>, Line> by;
  detail::objects().storages.locked([&](const auto& storages) {
    for (const auto& [st, entry] : storages) {
      if (st->use_count() == 0 || st->device() != info.device) continue;
      const std::string cat = memory_category_name(alloc::CachingAllocator::category(st->data_ptr()));
      Line& x = by[{entry.site, cat}];
      x.bytes += static_cast<int64_t>(alloc::CachingAllocator::block_size(st->data_ptr()));
      x.count += 1;
      x.category = cat;
    }
  });
  std::vector<std::pair<int64_t, std::string>> top;
  for (auto& [k, v] : by) {
    std::string w = k.first ? detail::where(k.first) : std::string("an unrecorded line");
    top.push_back({v.bytes, format_bytes(v.bytes) + " in " + std::to_string(v.count) + " " + v.category + " storage" +
                                (v.count == 1 ? "" : "s") + " made at " + w});
  }
  std::sort(top.begin(), top.end(), [](auto& a, auto& b) { return a.first > b.first; });
  if (!top.empty()) o << "Top holders by creation line:\n";
  for (size_t i = 0; i < top.size() && i < 8; ++i) o << "  " << top[i].second << "\n";
  return o.str();
}

}  // namespace graft::doctor

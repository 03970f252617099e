// memory_summary: PyTorch 2.x's table (torch/cuda/memory.py), 75 characters between the
// borders, with the device's name where PyTorch says CUDA/GPU. Units: bytes divided by 1024
// while the row group's `all` value is >= 768 of the next unit (B, KiB, MiB, ...); counts
// divided by 1000 while >= 750 thousand.
#include <cstdio>
#include <string>
#include <vector>

#include "graft/memory.h"

namespace graft {
namespace {

std::string format_size_cell(int64_t sz, int64_t pref) {
  static const char* prefixes[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const char* prefix = prefixes[0];
  double pref_sz = static_cast<double>(pref);
  for (int i = 1; i < 6; ++i) {
    if (pref_sz < 768 * 1024) break;
    prefix = prefixes[i];
    sz = sz >= 0 ? sz / 1024 : -((-sz + 1023) / 1024);  // Python's floor division
    pref_sz /= 1024;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%6lld %s", static_cast<long long>(sz), prefix);
  return buf;
}

std::string format_count_cell(int64_t cnt, int64_t pref) {
  static const char* prefixes[] = {" ", "K", "M"};
  const char* prefix = prefixes[0];
  double pref_cnt = static_cast<double>(pref);
  for (int i = 1; i < 3; ++i) {
    if (pref_cnt < 750 * 1000) break;
    prefix = prefixes[i];
    cnt = cnt >= 0 ? cnt / 1000 : -((-cnt + 999) / 1000);
    pref_cnt /= 1000;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%7lld %s ", static_cast<long long>(cnt), prefix);
  return buf;
}

std::string pad_right(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

// " name | c0 | c1 | c2 | c3 " (appended piece by piece: GCC 12 warns falsely on operator+ chains)
std::string table_row(const std::string& name, const std::string (&cells)[4]) {
  std::string row(" ");
  row.append(pad_right(name, 21));
  for (const auto& c : cells) {
    row.append(" | ");
    row.append(c);
  }
  row.push_back(' ');
  return row;
}

}  // namespace

std::string memory_summary(Device device, bool abbreviated) {
  return format_memory_summary(memory_stats(device), device, abbreviated);
}

std::string format_memory_summary(const std::map<std::string, int64_t>& stats, Device device, bool abbreviated) {
  const bool cuda = device.is_cuda();
  const std::string kind = cuda ? "GPU" : "CPU";
  const int index = device.index() < 0 ? 0 : device.index();
  auto get = [&](const std::string& k) { return stats.at(k); };

  std::vector<std::string> lines;
  lines.push_back(std::string(75, '='));
  // the title starts at column 18 as in PyTorch's "PyTorch CUDA memory summary, device ID 0"
  lines.push_back(pad_right(
      std::string(18, ' ') + "graft " + (cuda ? "CUDA" : "CPU") + " memory summary, device ID " + std::to_string(index),
      75));
  lines.push_back(std::string(75, '-'));
  {  // "|" at column 36 as in PyTorch's OOMs / cudaMalloc retries line
    std::string left = std::string(11, ' ') + (cuda ? " CUDA OOMs: " : " CPU OOMs: ") + std::to_string(get("num_ooms"));
    std::string right = std::string(7, ' ') + (cuda ? "cudaMalloc retries: " : "raw alloc retries: ") +
                        std::to_string(get("num_alloc_retries"));
    lines.push_back(pad_right(pad_right(left, 35) + " | " + right, 75));
  }
  lines.push_back(std::string(75, '='));
  lines.push_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");

  struct Row {
    const char* key;
    std::string name;
    bool bytes;
  };
  const std::vector<Row> rows = {
      {"allocated_bytes", "Allocated memory", true},
      {"active_bytes", "Active memory", true},
      {"requested_bytes", "Requested memory", true},
      {"reserved_bytes", kind + " reserved memory", true},
      {"inactive_split_bytes", "Non-releasable memory", true},
      {"allocation", "Allocations", false},
      {"active", "Active allocs", false},
      {"segment", kind + " reserved segments", false},
      {"inactive_split", "Non-releasable allocs", false},
  };
  auto cell = [](bool bytes, int64_t v, int64_t pref) {
    return bytes ? format_size_cell(v, pref) : format_count_cell(v, pref);
  };
  for (const Row& r : rows) {
    lines.push_back(std::string(75, '-'));
    std::vector<std::pair<std::string, std::string>> subs = {{"all", r.name}};
    if (!abbreviated) {
      subs.emplace_back("large_pool", "      from large pool");
      subs.emplace_back("small_pool", "      from small pool");
    }
    const std::string all = std::string(r.key) + ".all.";
    const int64_t pc = get(all + "current"), pp = get(all + "peak"), pa = get(all + "allocated"),
                  pf = get(all + "freed");
    for (const auto& [sub, name] : subs) {
      const std::string p = std::string(r.key) + "." + sub + ".";
      const std::string cells[4] = {cell(r.bytes, get(p + "current"), pc), cell(r.bytes, get(p + "peak"), pp),
                                    cell(r.bytes, get(p + "allocated"), pa), cell(r.bytes, get(p + "freed"), pf)};
      lines.push_back(table_row(name, cells));
    }
  }
  for (const auto& [key, name] : std::vector<std::pair<std::string, std::string>>{
           {"oversize_allocations", "Oversize allocations"}, {"oversize_segments", "Oversize " + kind + " segments"}}) {
    lines.push_back(std::string(75, '-'));
    auto c = [&](const char* f) {
      const int64_t v = get(key + "." + f);
      return format_count_cell(v, v);
    };
    const std::string cells[4] = {c("current"), c("peak"), c("allocated"), c("freed")};
    lines.push_back(table_row(name, cells));
  }
  lines.push_back(std::string(75, '='));
  std::string out;
  for (const auto& l : lines) {
    out.push_back('|');
    out.append(l);
    out.append("|\n");
  }
  return out;
}

}  // namespace graft

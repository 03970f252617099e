// The memory snapshot as JSON (schema "graft.memory_snapshot", version 1; docs/memory.md):
// settings, statistics, bytes per category, segments with their blocks, and the history ring.
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graft/core/error.h"
#include "graft/memory.h"

namespace graft {
namespace {

using nlohmann::json;

json context_json(const std::shared_ptr<const alloc::AllocContext>& ctx) {
  if (!ctx) return nullptr;
  json j;
  j["op"] = ctx->op.empty() ? json(nullptr) : json(ctx->op);
  json frames = json::array();
  for (auto& f : ctx->symbolized_frames()) frames.push_back(f);
  j["frames"] = std::move(frames);
  return j;
}

}  // namespace

std::string memory_snapshot_json(Device device) {
  alloc::CachingAllocator& a = device_allocator(device);
  json root;
  root["schema"] = "graft.memory_snapshot";
  root["version"] = 1;
  root["device"] = device.str();
  root["allocator_settings"] = a.config().to_string();
  const auto limit = a.memory_limit();
  root["memory_limit"] = limit ? json(*limit) : json(nullptr);
  json stats = json::object();
  for (const auto& [k, v] : memory_stats(device)) stats[k] = v;
  root["stats"] = std::move(stats);
  json cats = json::object();
  for (const auto& [k, v] : memory_by_category(device)) cats[k] = v;
  root["by_category"] = std::move(cats);

  json segs = json::array();
  for (const auto& s : a.snapshot()) {
    json js;
    js["address"] = s.address;
    js["total_size"] = s.total_size;
    js["segment_type"] = s.segment_type;
    js["allocated_size"] = s.allocated_size;
    js["active_size"] = s.active_size;
    js["requested_size"] = s.requested_size;
    json blocks = json::array();
    for (const auto& b : s.blocks) {
      json jb;
      jb["address"] = b.address;
      jb["size"] = b.size;
      jb["requested_size"] = b.requested_size;
      jb["state"] = b.state;
      jb["category"] = std::string(b.state) == "inactive" ? json(nullptr) : json(memory_category_name(b.category));
      jb["context"] = context_json(b.context);
      blocks.push_back(std::move(jb));
    }
    js["blocks"] = std::move(blocks);
    segs.push_back(std::move(js));
  }
  root["segments"] = std::move(segs);

  json trace = json::array();
  for (const auto& e : a.history().entries()) {
    json je;
    je["action"] = alloc::trace_action_name(e.action);
    je["addr"] = e.addr;
    je["size"] = e.size;
    je["requested_size"] = e.requested_size;
    je["category"] = memory_category_name(e.category);
    je["time_us"] = e.time_us;
    je["context"] = context_json(e.context);
    trace.push_back(std::move(je));
  }
  root["history"] = {
      {"enabled", a.history().enabled()}, {"max_entries", a.history().max_entries()}, {"entries", std::move(trace)}};
  return root.dump(1);
}

void dump_snapshot(const std::string& path, Device device) {
  const std::string text = memory_snapshot_json(device);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    GRAFT_CHECK(f.good(), RuntimeError, "dump_snapshot: cannot open '", tmp, "' for writing");
    f << text << "\n";
    f.flush();
    if (!f.good()) {
      f.close();
      std::remove(tmp.c_str());
      throw RuntimeError(detail::str("dump_snapshot: writing '", tmp, "' failed"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw RuntimeError(detail::str("dump_snapshot: cannot move the snapshot to '", path, "'"));
  }
}

}  // namespace graft

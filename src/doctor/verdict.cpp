// The report's first paragraph: what the steps watched honestly show. "Nothing grows" is said only
// when allocated memory and the live graphs were flat after the warm-up; too few steps, an error
// that stopped the program, or growth that no finding explains are said as such.
// See docs/notes/doctor.md ("The verdict").
#include <numeric>

#include "internal.h"
#include "state.h"

namespace graft::doctor {

namespace detail {

namespace {

std::string plural(int64_t n, const char* word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

int64_t allocated_of(const StepRecord& r) {
  return std::accumulate(r.bytes_by_category.begin(), r.bytes_by_category.end(), int64_t{0},
                         [](int64_t a, const auto& kv) { return a + kv.second; });
}

/// The growth of one series from the end of the warm-up to the last step: a sentence, or ""
/// when it did not grow.
std::string growth_sentence(const std::vector<StepRecord>& records, size_t base, const char* what, bool bytes,
                            int64_t (*value)(const StepRecord&)) {
  const int64_t first = value(records[base]), last = value(records.back());
  if (last <= first) return {};
  const int64_t steps = records.back().step - records[base].step;
  const int64_t per_step = (last - first) / std::max<int64_t>(1, steps);
  auto amount = [&](int64_t v) { return bytes ? format_bytes(v) : std::to_string(v); };
  return std::string(what) + " grew from " + amount(first) + " at step " + std::to_string(records[base].step) + " to " +
         amount(last) + " at step " + std::to_string(records.back().step) + " (about " + amount(per_step) +
         " per step)";
}

/// The verdict's sentences without the withdrawn findings' notes.
std::vector<std::string> judge(const VerdictFacts& v) {
  std::vector<std::string> out;
  if (!v.stopped.empty())
    out.push_back(std::string(v.stopped_oom ? "The program ran out of memory" : "The program stopped with an error") +
                  " in step " + std::to_string(v.steps + 1) + ": " + v.stopped +
                  (v.stopped_oom              ? " (the OOM report follows the findings)."
                   : v.stopped.ends_with('.') ? ""
                                              : "."));
  const int64_t needed = int64_t{v.warmup} + v.confirm;
  std::string alive;
  if (v.live_nodes > 0) {
    alive.append(" ").append(plural(v.live_nodes, "graph node"));
    alive.append(v.live_nodes == 1 ? " is alive now." : " are alive now.");
  }
  if (v.steps == 0) {
    out.push_back(
        "No step was watched, so there is no verdict: a step ends at each optimizer.step(), after each iteration "
        "that runs backward when no optimizer steps, at each forward of an evaluation under grad mode, or at "
        "graft.doctor.step()." +
        alive);
    return out;
  }
  if (v.steps < needed) {
    out.push_back("Only " + plural(v.steps, "step") + " watched: a verdict needs at least " + std::to_string(needed) +
                  " (warm-up " + std::to_string(v.warmup) + " + confirmation " + std::to_string(v.confirm) +
                  "), so none is given." + alive);
    return out;
  }
  // the record of the warm-up's last step is the baseline (the first one if none was kept)
  size_t base = 0;
  while (base + 1 < v.records.size() && v.records[base].step < v.warmup) ++base;
  std::vector<std::string> grew;
  if (!v.records.empty()) {
    for (std::string s : {growth_sentence(v.records, base, "allocated memory", true, &allocated_of),
                          growth_sentence(v.records, base, "live graph nodes", false,
                                          [](const StepRecord& r) { return r.graph_nodes; })})
      if (!s.empty()) grew.push_back(std::move(s));
  }
  if (grew.empty()) {
    if (v.growth_findings == 0)
      out.push_back(
          "No findings: nothing grows from step to step (allocated memory and live graphs were flat from "
          "step " +
          std::to_string(v.records.empty() ? 0 : v.records[base].step) + " to step " + std::to_string(v.steps) + ").");
    if (!v.records.empty()) {
      const std::string cache = growth_sentence(v.records, base, "the allocator's cache (reserved memory)", true,
                                                [](const StepRecord& r) { return r.reserved; });
      if (!cache.empty())
        out.push_back("But " + cache +
                      ": blocks no tensor uses stay reserved (sizes that change from step to step). "
                      "graft.cpu.empty_cache() (torch.cuda.empty_cache() on a GPU) returns the free segments; "
                      "dr.fragmentation() shows where they are.");
    }
    return out;
  }
  std::string s = v.growth_findings ? "Memory grew: " : "No finding names a cause, but ";
  for (size_t i = 0; i < grew.size(); ++i) s += (i ? "; " : "") + grew[i];
  if (v.diff_available)
    out.push_back(s + ". graft.doctor's diff(" + std::to_string(v.records[base].step) + ", " + std::to_string(v.steps) +
                  ") lists what those steps made that is still alive.");
  else
    out.push_back(s + ".");
  return out;
}

}  // namespace

std::vector<std::string> verdict_sentences(const VerdictFacts& v) {
  std::vector<std::string> out = judge(v);
  out.insert(out.end(), v.withdrawn.begin(), v.withdrawn.end());
  return out;
}

}  // namespace detail

void Session::note_stopped(const std::string& error, bool out_of_memory) {
  std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
  s_->stopped = error;
  s_->stopped_oom = out_of_memory;
}

std::vector<std::string> Session::verdict() const {
  detail::VerdictFacts v;
  {
    std::lock_guard<detail::LightMutex> g(detail::recorder_mutex());
    v.steps = s_->steps;
    v.warmup = s_->options.warmup;
    v.confirm = s_->options.confirm;
    v.records = s_->records;
    for (const Finding& f : s_->findings)
      v.growth_findings += f.severity == Severity::Leak || f.severity == Severity::Growth;
    v.stopped = s_->stopped;
    v.stopped_oom = s_->stopped_oom;
    v.withdrawn = s_->withdrawn;
    v.diff_available = s_->framework == nullptr;  // diff() reads graft's object ledger
  }
  v.live_nodes = live_graphs().nodes();
  return detail::verdict_sentences(v);
}

}  // namespace graft::doctor

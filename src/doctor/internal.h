#pragma once
// Internal pieces of the leak doctor shared by its files. See docs/notes/doctor.md.
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graft/core/intrusive_ptr.h"
#include "graft/core/tensor_impl.h"
#include "graft/doctor/doctor.h"

namespace graft::doctor::detail {

/// The session step of a generation: 1 for the generation the session started in, 0 before.
inline int64_t step_of(uint32_t generation, uint32_t start_generation) {
  return generation >= start_generation ? int64_t(generation - start_generation) + 1 : 0;
}

/// A census plus strong references to its handles' tensors, so that their identities stay
/// valid while the Python layer resolves their holders (released when this dies).
struct PinnedCensus {
  Census census;
  std::vector<intrusive_ptr<TensorImpl>> pins;
};

/// Walks the object ledger (nodes, then tensors): every live graph with its saved slots and
/// handles. `current_step` is the step being ended (nodes of earlier steps are stale).
PinnedCensus take_census(uint32_t start_generation, int64_t current_step);

/// Live tensors without a graph made at one line in past steps of the session (LD011).
struct KeptGroup {
  lifetime::SiteId site = 0;
  std::set<int64_t> steps;  ///< the distinct past steps that made them
  int64_t tensors = 0;
  int64_t bytes = 0;                                     ///< their storages, each once
  std::vector<std::pair<uint64_t, HandleInfo>> handles;  ///< (creation order, handle): the newest few
};
struct KeptTensors {
  std::map<lifetime::SiteId, KeptGroup> groups;
};
/// Walks the ledger's tensors: those without a graph, made in steps before `current_step`, that are
/// not parameters, gradients, optimizer state or storages saved by live graphs (`graph_storages`).
std::vector<KeptTensor> take_kept_tensors(uint32_t start_generation, int64_t current_step,
                                          const std::unordered_set<uintptr_t>& graph_storages);
/// Groups a framework's kept tensors by the line that made them (storages counted once per line).
KeptTensors group_kept(const std::vector<KeptTensor>& tensors);

/// graft's own framework: its object ledger (docs/notes/doctor.md, "Frameworks").
std::unique_ptr<Framework> make_graft_framework(uint32_t start_generation);

/// What the verdict (the report's first paragraph) is judged from.
struct VerdictFacts {
  int64_t steps = 0;
  int warmup = 2, confirm = 3;
  std::vector<StepRecord> records;  ///< one per step, in order
  int64_t growth_findings = 0;      ///< findings of severity "leak" or "growth"
  int64_t live_nodes = 0;           ///< graph nodes alive now
  std::string stopped;              ///< the error the program stopped with ("": none)
  bool stopped_oom = false;
  std::vector<std::string> withdrawn;  ///< notes on withdrawn LD011 findings (bounded buffers)
  bool diff_available = true;          ///< Session::diff() can list what grew (graft's own framework)
};
/// The verdict's sentences (Session::verdict()).
std::vector<std::string> verdict_sentences(const VerdictFacts& v);

/// "1.5 KiB", "3.0 MiB" (binary units, as memory_summary prints them).
std::string format_bytes(int64_t bytes);
/// A site as "file:line" ("" for 0).
std::string where(lifetime::SiteId id);

/// Writes "<id> <rule name> (<severity>)", then " at <line>" when the finding has a line.
void write_finding_title(std::ostream& o, const Finding& f);
/// Writes "    held by <path>[ (made at <line>, step <n>)]\n" for each holder.
void write_holders(std::ostream& o, const std::vector<Holder>& holders);

/// Escapes text for HTML / XML.
std::string xml_escape(const std::string& s);

}  // namespace graft::doctor::detail

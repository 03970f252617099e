// The leak doctor's rule catalogue: stable ids, one-line summaries and fixes.
// The evidence each rule fires on is in docs/notes/doctor.md ("Rules").
#include <sstream>

#include "graft/core/enum_names.h"
#include "graft/doctor/doctor.h"
#include "internal.h"

namespace graft::doctor {

const char* severity_name(Severity s) {
  static constexpr const char* kNames[] = {"leak", "warning", "info", "growth"};
  return graft::detail::enum_name(kNames, s, "unknown");
}

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> catalogue = {
      {Rule::GraphGrowth, "LD000", "graph-growth", Severity::Leak,
       "a backward graph keeps nodes from ever more past steps alive",
       "find the holder below and detach() what it keeps, or drop it at the end of the step"},
      {Rule::AccumulatedLoss, "LD001", "accumulated-loss", Severity::Leak,
       "a running total (or a list) of losses keeps every step's graph alive",
       "accumulate loss.detach() (stays on the device, no sync), or loss.item() only at logging points"},
      {Rule::CarriedAcrossSteps, "LD002", "graph-carried-across-steps", Severity::Leak,
       "a tensor carried into the next step keeps the previous steps' graphs chained to the new one",
       "detach the carried state at the start of each step (h = h.detach()); for truncated BPTT detach every N "
       "steps and declare it with dr.allow_window(N)"},
      {Rule::OutputsKeptUnderGrad, "LD003", "outputs-kept-under-grad", Severity::Leak,
       "outputs computed under grad mode are kept with their graphs in a container or attribute",
       "run evaluation and logging under torch.no_grad() / torch.inference_mode(), or keep out.detach()"},
      {Rule::CreateGraphGradCycle, "LD004", "create-graph-grad-cycle", Severity::Leak,
       "a parameter's .grad has a grad_fn after backward(create_graph=True): parameter -> .grad -> graph -> "
       "parameter is a cycle the garbage collector cannot see",
       "use torch.autograd.grad(..., create_graph=True) instead, or set p.grad = None after use"},
      {Rule::HookCapture, "LD005", "hook-capture", Severity::Leak,
       "a hook's closure (or a module attribute set inside a hook) keeps the tensors it captured and their graphs",
       "store output.detach() in the hook, and remove the hook (handle.remove()) when done"},
      {Rule::CycleHeld, "LD006", "cycle-held", Severity::Leak,
       "tensors are held by a reference cycle: only the cyclic garbage collector frees them, late and in spikes",
       "break the cycle (weakref, or del the back-reference), or keep tensors out of objects that reference "
       "each other"},
      {Rule::DetachedTooLate, "LD007", "detached-too-late", Severity::Warning,
       "carried state is detached only every few steps, so each graph spans several steps (peak memory grows "
       "with the span)",
       "detach every step, or declare the window with dr.allow_window(N) if truncated BPTT is meant"},
      {Rule::MissingZeroGrad, "LD008", "missing-zero-grad", Severity::Warning,
       "gradients keep accumulating into .grad across optimizer steps (a correctness bug, not a leak)",
       "call optimizer.zero_grad() each step, or declare accumulation with dr.declare_accumulation(N)"},
      {Rule::RetainGraphUnused, "LD009", "retain-graph-unused", Severity::Info,
       "backward(retain_graph=True) kept a graph that no second backward reached before it died (peak memory only)",
       "drop retain_graph=True there"},
      {Rule::GradModeEval, "LD010", "grad-mode-eval", Severity::Info,
       "a forward ran under grad mode in a step without backward: it saved tensors for a backward that never came",
       "wrap evaluation in torch.no_grad() or torch.inference_mode()"},
      {Rule::TensorGrowth, "LD011", "tensor-growth", Severity::Growth,
       "tensors without a graph (kept predictions, metrics, a cache) from ever more past steps stay alive: memory "
       "grows every step",
       "keep numbers (t.item()) or host copies (t.cpu()) of what you log, bound what you keep "
       "(collections.deque(maxlen=N)), and clear caches that only grow"},
  };
  return catalogue;
}

const RuleInfo& rule_info(Rule r) { return rules().at(static_cast<size_t>(r)); }

void detail::write_finding_title(std::ostream& o, const Finding& f) {
  o << f.id << " " << rule_info(f.rule).name << " (" << severity_name(f.severity) << ")";
  if (!f.line.empty()) o << " at " << f.line;
  if (!f.made_at.empty()) o << " (made at " << f.made_at << ")";
}

void detail::write_holders(std::ostream& o, const std::vector<Holder>& holders) {
  for (const Holder& h : holders) {
    o << "    held by " << h.path;
    // "train.py:90" is where "train.py:90 (Net.forward at train.py:44)" was made too
    const bool stored_elsewhere = !h.stored_at.empty() && h.created_at.substr(0, h.created_at.find(' ')) != h.stored_at;
    if (stored_elsewhere && h.created_at.empty()) o << " (stored at " << h.stored_at << ")";
    if (stored_elsewhere && !h.created_at.empty()) o << " (stored at " << h.stored_at << ";";
    if (!h.created_at.empty())
      o << (stored_elsewhere ? " made at " : " (made at ") << h.created_at << ", step " << h.created_step << ")";
    o << "\n";
  }
}

std::string format_findings(const std::vector<Finding>& fs) {
  std::ostringstream o;
  for (const Finding& f : fs) {
    detail::write_finding_title(o, f);
    o << ", step " << f.step << ": " << f.message << "\n";
    detail::write_holders(o, f.holders);
    o << "    fix: " << f.fix << "\n";
  }
  return o.str();
}

}  // namespace graft::doctor

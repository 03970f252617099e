// An epoch loaded on the consumer thread (num_workers == 0), and build_batch, which both
// kinds of epoch use.
#include "epoch_run.h"
#include "graft/core/allocator.h"
#include "graft/core/grad_mode.h"

namespace graft::data::detail {

Batch build_batch(const EpochPlan& plan, size_t batch_index) {
  MemoryCategoryGuard category(MemoryCategory::DataBatch);
  AutoGradMode grad_mode(plan.grad_enabled);
  const std::vector<int64_t>& indices = plan.batches[batch_index];
  std::vector<Sample> samples;
  samples.reserve(indices.size());
  for (int64_t index : indices) samples.push_back(plan.dataset->get(index));
  return plan.collate(std::move(samples));
}

namespace {
class InlineEpoch final : public EpochRun {
 public:
  explicit InlineEpoch(EpochPlan plan) : plan_(std::move(plan)) {}
  std::optional<Batch> next() override {
    if (stopped_ || next_ >= plan_.batches.size()) return std::nullopt;
    return build_batch(plan_, next_++);  // counted as returned even when building throws
  }
  void stop() noexcept override { stopped_ = true; }

 private:
  EpochPlan plan_;
  size_t next_ = 0;
  bool stopped_ = false;
};
}  // namespace

std::shared_ptr<EpochRun> make_inline_epoch(EpochPlan plan) { return std::make_shared<InlineEpoch>(std::move(plan)); }

}  // namespace graft::data::detail

// DataLoader: option checks (PyTorch's order and texts), epochs, and the iterator.
#include "graft/data/dataloader.h"

#include "epoch_run.h"
#include "graft/autograd/autograd.h"
#include "graft/core/error.h"
#include "graft/core/grad_mode.h"

namespace graft::data {

namespace {
// PyTorch 2.x's warning when pin_memory is set and no accelerator exists.
constexpr const char* kPinMemoryWarning =
    "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used.";

std::shared_ptr<BatchSamplerBase> make_batch_sampler(const Dataset& dataset, const LoaderOptions& o) {
  if (o.batch_sampler) return o.batch_sampler;
  std::shared_ptr<Sampler> sampler = o.sampler;
  if (!sampler) {
    if (o.shuffle)
      sampler = std::make_shared<RandomSampler>(dataset.size(), false, std::nullopt, o.seed);
    else
      sampler = std::make_shared<SequentialSampler>(dataset.size());
  }
  return std::make_shared<BatchSampler>(std::move(sampler), o.batch_size, o.drop_last);
}
}  // namespace

DataLoader::DataLoader(std::shared_ptr<Dataset> dataset, LoaderOptions options) {
  GRAFT_CHECK(dataset != nullptr, ValueError, "DataLoader: dataset is null");
  const LoaderOptions& o = options;
  GRAFT_CHECK(o.num_workers >= 0, ValueError,
              "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  GRAFT_CHECK(o.timeout >= 0, ValueError, "timeout option should be non-negative");
  GRAFT_CHECK(o.num_workers > 0 || !o.prefetch_factor, ValueError,
              "prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 to enable "
              "multiprocessing, otherwise set prefetch_factor to None.");
  if (o.prefetch_factor) {
    GRAFT_CHECK(*o.prefetch_factor >= 0, ValueError, "prefetch_factor option should be non-negative");
    GRAFT_CHECK(*o.prefetch_factor > 0, ValueError,
                "DataLoader: prefetch_factor=0 leaves the workers no batch to build; use prefetch_factor >= 1");
  }
  GRAFT_CHECK(!(o.sampler && o.shuffle), ValueError, "sampler option is mutually exclusive with shuffle");
  GRAFT_CHECK(!o.batch_sampler || (o.batch_size == 1 && !o.shuffle && !o.sampler && !o.drop_last), ValueError,
              "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last");
  batch_sampler_ = make_batch_sampler(*dataset, options);
  if (options.num_workers > 0 && !options.prefetch_factor) options.prefetch_factor = 2;
  dataset_ = std::move(dataset);
  options_ = std::move(options);
}

DataLoader& DataLoader::operator=(DataLoader&& other) noexcept {
  if (this != &other) {
    stop_running_epoch();
    dataset_ = std::move(other.dataset_);
    options_ = std::move(other.options_);
    batch_sampler_ = std::move(other.batch_sampler_);
    running_ = std::move(other.running_);
    warned_pin_memory_ = other.warned_pin_memory_;
  }
  return *this;
}

DataLoader::~DataLoader() { stop_running_epoch(); }

void DataLoader::stop_running_epoch() noexcept {
  if (auto run = running_.lock()) run->cancel();
  running_.reset();
}

DataLoader::Iterator DataLoader::begin() {
  stop_running_epoch();
  if (options_.pin_memory && !warned_pin_memory_) {
    autograd::warn(kPinMemoryWarning);
    warned_pin_memory_ = true;
  }
  detail::EpochPlan plan;
  plan.dataset = dataset_;
  plan.collate = options_.collate_fn ? options_.collate_fn : CollateFn(default_collate);
  plan.batches = batch_sampler_->next_epoch();
  plan.grad_enabled = GradMode::is_enabled();
  std::shared_ptr<detail::EpochRun> run = options_.num_workers == 0
                                              ? detail::make_inline_epoch(std::move(plan))
                                              : detail::make_worker_epoch(std::move(plan), options_.num_workers,
                                                                          *options_.prefetch_factor, options_.timeout);
  running_ = run;
  return Iterator(std::move(run));
}

// ---- Iterator ----

DataLoader::Iterator::Iterator(std::shared_ptr<detail::EpochRun> run) : run_(std::move(run)) { fetch(); }

DataLoader::Iterator::Iterator(Iterator&& other) noexcept
    : run_(std::move(other.run_)), current_(std::move(other.current_)), has_current_(other.has_current_) {
  other.current_.clear();
  other.has_current_ = false;
}

DataLoader::Iterator& DataLoader::Iterator::operator=(Iterator&& other) noexcept {
  if (this != &other) {
    finish();
    run_ = std::move(other.run_);
    current_ = std::move(other.current_);
    has_current_ = other.has_current_;
    other.current_.clear();
    other.has_current_ = false;
  }
  return *this;
}

DataLoader::Iterator::~Iterator() { finish(); }

Batch& DataLoader::Iterator::operator*() {
  GRAFT_CHECK(has_current_, RuntimeError,
              "DataLoader iterator: no current batch (the iterator is at the end, or its last ++ failed)");
  return current_;
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  GRAFT_CHECK(run_ != nullptr, RuntimeError, "DataLoader iterator: ++ on an iterator at the end of its epoch");
  GRAFT_CHECK(!run_->cancelled(), RuntimeError,
              "DataLoader iterator: its epoch was stopped because the DataLoader started a new epoch (begin()) or "
              "was destroyed");
  current_.clear();  // the previous batch goes before the next one is waited for
  has_current_ = false;
  fetch();
  return *this;
}

void DataLoader::Iterator::fetch() {
  std::optional<Batch> batch = run_->next();
  if (!batch) {
    finish();
    return;
  }
  current_ = std::move(*batch);
  has_current_ = true;
}

void DataLoader::Iterator::finish() {
  if (!run_) return;
  run_->stop();
  run_.reset();
}

}  // namespace graft::data

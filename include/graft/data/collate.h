#pragma once
/// Collation: how a DataLoader turns the samples of one batch into a Batch.
#include <functional>
#include <vector>

#include "graft/data/dataset.h"

namespace graft::data {

/// Turns the samples of one batch into the batch. Runs in a worker thread when
/// num_workers > 0 (several at once: it must be thread-safe), under the data-batch memory
/// category.
using CollateFn = std::function<Batch(std::vector<Sample>)>;

/// PyTorch's default_collate for tensor fields: field k of the batch is
/// graft::stack({sample0[k], sample1[k], ...}) along a new dim 0 (requires_grad propagates
/// through stack). Ragged sizes raise stack's RuntimeError ("stack expects each tensor to be
/// equal size, but got [1] at entry 0 and [2] at entry 1"); samples with different field
/// counts raise RuntimeError "each element in list of batch should be of equal size" followed
/// by the counts; an empty list raises ValueError.
Batch default_collate(std::vector<Sample> examples);

}  // namespace graft::data

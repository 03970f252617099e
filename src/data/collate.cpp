// default_collate: stack each field of the samples along a new dim 0.
#include "graft/data/collate.h"
#include "graft/core/error.h"
#include "graft/ops/ops.h"

namespace graft::data {

Batch default_collate(std::vector<Sample> examples) {
  GRAFT_CHECK(!examples.empty(), ValueError, "default_collate: expected at least one example, got an empty list");
  const size_t fields = examples[0].size();
  for (size_t i = 1; i < examples.size(); ++i)
    GRAFT_CHECK(examples[i].size() == fields, RuntimeError,
                "each element in list of batch should be of equal size (example 0 has ", fields, " fields, example ", i,
                " has ", examples[i].size(), ")");
  Batch batch;
  batch.reserve(fields);
  TensorList column(examples.size());
  for (size_t f = 0; f < fields; ++f) {
    for (size_t i = 0; i < examples.size(); ++i) column[i] = std::move(examples[i][f]);
    batch.push_back(stack(column, 0));
  }
  return batch;
}

}  // namespace graft::data

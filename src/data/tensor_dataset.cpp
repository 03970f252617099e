// TensorDataset: samples are rows of tensors that share their first dimension.
#include "graft/core/error.h"
#include "graft/data/dataset.h"

namespace graft::data {

TensorDataset::TensorDataset(std::vector<Tensor> tensors) {
  GRAFT_CHECK(!tensors.empty(), ValueError, "TensorDataset: expected at least one tensor");
  for (size_t i = 0; i < tensors.size(); ++i) {
    GRAFT_CHECK(tensors[i].defined(), ValueError, "TensorDataset: tensor ", i, " is undefined");
    GRAFT_CHECK(tensors[i].dim() > 0, ValueError, "TensorDataset: tensor ", i,
                " is 0-dimensional; samples are indexed along the first dimension");
  }
  for (const Tensor& t : tensors)
    GRAFT_CHECK(t.size(0) == tensors[0].size(0), ValueError, "Size mismatch between tensors");
  size_ = tensors[0].size(0);
  tensors_ = std::move(tensors);
}

Sample TensorDataset::get(int64_t index) const {
  // PyTorch's tensor[index] text; negative indices count from the end as in Python.
  GRAFT_CHECK(index >= -size_ && index < size_, IndexError, "index ", index,
              " is out of bounds for dimension 0 with size ", size_);
  const int64_t row = index < 0 ? index + size_ : index;
  Sample sample;
  sample.reserve(tensors_.size());
  for (const Tensor& t : tensors_) sample.push_back(t.select(0, row));
  return sample;
}

}  // namespace graft::data

#pragma once
/// libtorch's MNIST dataset (torch::data::datasets::MNIST): the idx files of the MNIST (or
/// Fashion-MNIST) distribution under a root folder, read whole: images [N, 1, 28, 28] float32 in
/// [0, 1], targets int64. Its examples are {image, target}.
#include <string>

#include "graft/data/datasets/base.h"

namespace graft::data::datasets {

class MNIST : public Dataset<MNIST> {
 public:
  /// Which split: train-*-idx?-ubyte (60000 images) or t10k-*-idx?-ubyte (10000).
  enum class Mode { kTrain, kTest };
  /// Reads `root`/train-images-idx3-ubyte and train-labels-idx1-ubyte (kTest: t10k-...).
  /// RuntimeError for a missing file or one that is not an idx file of the expected shape, with
  /// libtorch's texts.
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return is_train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool is_train_;
};

}  // namespace graft::data::datasets

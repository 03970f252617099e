#pragma once
/// Embedding: a lookup table of num_embeddings rows of embedding_dim, initialised N(0, 1)
/// with the padding row zeroed.
#include <optional>

#include "graft/nn/module.h"
#include "graft/nn/options.h"

namespace graft::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  GRAFT_ARG(int64_t, num_embeddings);
  GRAFT_ARG(int64_t, embedding_dim);
  GRAFT_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  /// Divide each lookup's weight gradient by its index's count in the batch.
  GRAFT_ARG(bool, scale_grad_by_freq) = false;
};

class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  Tensor forward(const Tensor& indices);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  EmbeddingOptions options;
  Tensor weight;
};
GRAFT_MODULE(Embedding);

}  // namespace graft::nn

// Embedding.
#include "graft/nn/modules/embedding.h"

#include "graft/core/grad_mode.h"
#include "graft/nn/init.h"
#include "graft/ops/nn_ops.h"

namespace graft::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : Module("Embedding"), options(o) {
  if (o.padding_idx()) {
    const int64_t p = *o.padding_idx();
    GRAFT_CHECK(p >= -o.num_embeddings() && p < o.num_embeddings(), ValueError,
                "Padding_idx must be within num_embeddings");
    if (p < 0) options.padding_idx(p + o.num_embeddings());
  }
  weight = register_parameter("weight", empty({o.num_embeddings(), o.embedding_dim()}));
  reset_parameters();
}
void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx()) {
    NoGradGuard ng;
    weight.select(0, *options.padding_idx()).fill_(0);
  }
}
Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return embedding(weight, indices, options.padding_idx(), options.scale_grad_by_freq());
}
void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (options.padding_idx()) os << ", padding_idx=" << *options.padding_idx();
  os << ")";
}

}  // namespace graft::nn

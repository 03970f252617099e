// nn::Module: registration and traversal, state_dict / load_state_dict (PyTorch's error
// report, nothing changed on failure), train/eval, zero_grad, to(), the allocator tags, and
// the printed tree.
#include <cmath>
#include <sstream>

#include "support/test_util.h"

using namespace graft;
using graft::testing::expect_tensor;

namespace {

// A small model with nested submodules, a buffer and a layer without bias.
class NetImpl : public nn::Module {
 public:
  NetImpl() : Module("Net") {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding({1})));
    bn = register_module("bn", nn::BatchNorm2d(2));
    head =
        register_module("head", nn::Sequential(nn::Flatten(), nn::Linear(nn::LinearOptions(2 * 4 * 4, 3).bias(false))));
    scale = register_buffer("scale", ones({1}));
  }
  Tensor forward(const Tensor& x) { return head->forward(relu(bn->forward(conv->forward(x)))) * scale; }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Sequential head{nullptr};
  Tensor scale;
};
GRAFT_MODULE(Net);

std::vector<std::string> keys_of(const StateDict& sd) { return sd.keys(); }

}  // namespace

TEST(Module, NamedParametersBuffersAndChildrenInRegistrationOrder) {
  Net net;
  EXPECT_EQ(net->named_parameters().keys(),
            (std::vector<std::string>{"conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight"}));
  EXPECT_EQ(net->named_buffers().keys(),
            (std::vector<std::string>{"scale", "bn.running_mean", "bn.running_var", "bn.num_batches_tracked"}));
  EXPECT_EQ(net->named_children().keys(), (std::vector<std::string>{"conv", "bn", "head"}));
  EXPECT_EQ(net->named_modules().keys(), (std::vector<std::string>{"", "conv", "bn", "head", "head.0", "head.1"}));
  EXPECT_EQ(net->parameters(false).size(), 0u);
  for (auto& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_THROW_MSG(net->register_parameter("scale", ones({1})), KeyError, "attribute 'scale' already exists");
  EXPECT_THROW_HAS(net->register_parameter("a.b", ones({1})), KeyError, "can't contain \".\"");
}

TEST(Module, StateDictHoldsParametersAndPersistentBuffers) {
  Net net;
  StateDict sd = net->state_dict();
  // PyTorch's order: each module's parameters, then its buffers, then its children
  EXPECT_EQ(keys_of(sd),
            (std::vector<std::string>{"scale", "conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean",
                                      "bn.running_var", "bn.num_batches_tracked", "head.1.weight"}));
  EXPECT_FALSE(sd["conv.weight"].requires_grad());  // detached, shares storage
  EXPECT_EQ(sd["conv.weight"].data_ptr(), net->conv->weight.data_ptr());
  EXPECT_EQ(sd["bn.num_batches_tracked"].dtype(), kInt64);
}

TEST(Module, LoadStateDictCopiesIntoTheSameTensors) {
  manual_seed(1);
  Net a, b;
  Tensor w_before = b->conv->weight;  // the handle optimizers hold
  b->load_state_dict(a->state_dict());
  EXPECT_TRUE(b->conv->weight.is_same(w_before));
  EXPECT_TRUE(equal(b->conv->weight, a->conv->weight));
  EXPECT_TRUE(equal(b->head->ptr<nn::LinearImpl>(1)->weight, a->head->ptr<nn::LinearImpl>(1)->weight));
  Tensor x = randn({2, 1, 4, 4});
  a->eval();
  b->eval();
  EXPECT_TRUE(equal(a->forward(x), b->forward(x)));
}

TEST(Module, LoadStateDictReportsEveryProblemAndChangesNothing) {
  Net net;
  StateDict sd = net->state_dict();
  StateDict bad;
  for (auto& it : sd)
    if (it.key() != "conv.bias") bad.insert(it.key(), it.value().clone());
  bad.insert("extra.weight", ones({1}));
  bad.insert_or_assign("head.1.weight", zeros({3, 5}));
  bad.insert_or_assign("conv.weight", zeros({2, 1, 3, 3}));  // valid: would be copied if the load went ahead
  Tensor before = net->conv->weight.clone();
  EXPECT_THROW_MSG(net->load_state_dict(bad), RuntimeError,
                   "Error(s) in loading state_dict for Net:\n"
                   "\tMissing key(s) in state_dict: \"conv.bias\". \n"
                   "\tUnexpected key(s) in state_dict: \"extra.weight\". \n"
                   "\tsize mismatch for head.1.weight: copying a param with shape torch.Size([3, 5]) from "
                   "checkpoint, the shape in current model is torch.Size([3, 32]).");
  EXPECT_TRUE(equal(net->conv->weight, before));  // nothing was copied
  // strict=false: missing and unexpected keys are returned, but a size mismatch still fails
  EXPECT_THROW_HAS(net->load_state_dict(bad, false), RuntimeError, "size mismatch for head.1.weight");
  bad.insert_or_assign("head.1.weight", zeros({3, 32}));
  nn::IncompatibleKeys k = net->load_state_dict(bad, false);
  EXPECT_EQ(k.missing_keys, (std::vector<std::string>{"conv.bias"}));
  EXPECT_EQ(k.unexpected_keys, (std::vector<std::string>{"extra.weight"}));
  EXPECT_TRUE(equal(net->conv->weight, zeros({2, 1, 3, 3})));
}

TEST(Module, TrainEvalReachEveryDescendant) {
  Net net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (auto& m : net->modules()) EXPECT_FALSE(m->is_training());
  net->train();
  for (auto& m : net->modules()) EXPECT_TRUE(m->is_training());
  nn::Dropout drop(0.5);
  drop->eval();
  Tensor x = ones({10});
  EXPECT_TRUE(drop->forward(x).is_same(x));
}

TEST(Module, BatchNormTracksRunningStatsInTrainingAndUsesThemInEval) {
  nn::BatchNorm1d bn(2);
  Tensor x = tensor({1.0, 2.0, 3.0, 5.0}).view({2, 2});
  bn->forward(x);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  expect_tensor(bn->running_mean, {2}, {0.2, 0.35});
  expect_tensor(bn->running_var, {2}, {0.9 + 0.1 * 2.0, 0.9 + 0.1 * 4.5});
  bn->eval();
  Tensor y = bn->forward(x);
  EXPECT_NEAR(y[0][0].item<float>(), (1 - 0.2) / std::sqrt(1.1 + 1e-5), 1e-5);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  // momentum None: cumulative average
  nn::BatchNorm1d cma(nn::BatchNormOptions(2).momentum(std::nullopt));
  cma->forward(x);
  cma->forward(x * 3.0);
  expect_tensor(cma->running_mean, {2}, {(2.0 + 6.0) / 2, (3.5 + 10.5) / 2}, 1e-5);
}

TEST(Module, ZeroGradSetsToNoneOrZeroesInPlace) {
  nn::Linear lin(3, 2);
  lin->forward(ones({1, 3})).sum().backward();
  ASSERT_TRUE(lin->weight.grad().defined());
  Tensor g = lin->weight.grad();
  lin->zero_grad(false);
  EXPECT_TRUE(lin->weight.grad().is_same(g));
  EXPECT_EQ(lin->weight.grad().abs().sum().item<float>(), 0.0f);
  lin->zero_grad();
  EXPECT_FALSE(lin->weight.grad().defined());
  EXPECT_FALSE(lin->bias.grad().defined());
}

TEST(Module, ParametersAndBuffersAreTaggedInTheAllocator) {
  const int64_t before = memory_by_category().at("parameter");
  {
    nn::Linear lin(64, 32);
    nn::BatchNorm1d bn(32);
    const int64_t bytes = (64 * 32 + 32 + 32 * 4) * 4 + 8;  // weight, bias, bn weight/bias/mean/var, counter
    EXPECT_GE(memory_by_category().at("parameter") - before, bytes);
    lin->forward(ones({2, 64})).sum().backward();
    EXPECT_GE(memory_by_category().at("gradient"), (64 * 32 + 32) * 4);
  }
  EXPECT_EQ(memory_by_category().at("parameter"), before);
}

TEST(Module, ToDTypeConvertsFloatingParametersAndBuffers) {
  Net net;
  net->to(kFloat64);
  for (auto& p : net->parameters()) {
    EXPECT_EQ(p.dtype(), kFloat64);
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  EXPECT_EQ(net->bn->running_mean.dtype(), kFloat64);
  EXPECT_EQ(net->bn->num_batches_tracked.dtype(), kInt64);  // integers stay
  EXPECT_EQ(net->forward(randn({1, 1, 4, 4}, kFloat64)).dtype(), kFloat64);
  net->to(kCPU);  // already there: nothing to do
  EXPECT_THROW_HAS(net->to(kInt64), TypeError, "only accepts floating point dtypes");
}

TEST(Module, InitialisationFollowsPyTorch) {
  manual_seed(0);
  nn::Linear lin(100, 50);
  const double bound = 1.0 / std::sqrt(100.0);
  EXPECT_LE(lin->weight.abs().max().item<float>(), bound);
  EXPECT_GT(lin->weight.abs().max().item<float>(), 0.9 * bound);  // spread over the whole range
  EXPECT_LE(lin->bias.abs().max().item<float>(), bound);
  nn::Conv2d conv(nn::Conv2dOptions(4, 8, 3).groups(2));
  const double cbound = 1.0 / std::sqrt(2.0 * 9.0);  // fan_in = in/groups * k*k
  EXPECT_LE(conv->weight.abs().max().item<float>(), cbound);
  EXPECT_GT(conv->weight.abs().max().item<float>(), 0.9 * cbound);
  nn::Embedding emb(nn::EmbeddingOptions(10, 4).padding_idx(-1));
  EXPECT_EQ(*emb->options.padding_idx(), 9);
  EXPECT_EQ(emb->weight[9].abs().sum().item<float>(), 0.0f);
  EXPECT_NEAR(emb->weight.narrow(0, 0, 9).std().item<float>(), 1.0, 0.5);
  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  expect_tensor(ln->weight, {4}, {1, 1, 1, 1});
  expect_tensor(ln->bias, {4}, {0, 0, 0, 0});
  Tensor w = empty({300, 200});
  nn::init::xavier_uniform_(w);
  EXPECT_LE(w.abs().max().item<float>(), std::sqrt(6.0 / 500.0));
  nn::init::kaiming_normal_(w, 0.0, "fan_in", "relu");
  EXPECT_NEAR(w.std().item<float>(), std::sqrt(2.0 / 200.0), 0.01);
  EXPECT_NEAR(nn::init::calculate_gain("tanh"), 5.0 / 3.0, 1e-12);
  EXPECT_NEAR(nn::init::calculate_gain("leaky_relu", 0.2), std::sqrt(2.0 / 1.04), 1e-12);
  EXPECT_THROW_MSG(nn::init::calculate_gain("swish"), ValueError, "Unsupported nonlinearity swish");
}

TEST(Module, SequentialRunsInOrderAndPrintsLikePyTorch) {
  nn::Sequential seq(nn::Linear(4, 3), nn::ReLU(), [](const Tensor& x) { return x * 2.0; });
  EXPECT_EQ(seq->size(), 3u);
  Tensor x = randn({2, 4});
  auto lin = seq->ptr<nn::LinearImpl>(0);
  ASSERT_NE(lin, nullptr);
  EXPECT_TRUE(allclose(seq->forward(x), relu(lin->forward(x)) * 2.0));
  std::ostringstream os;
  os << *seq;
  EXPECT_EQ(os.str(),
            "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=true)\n  (1): ReLU\n  (2): Functional\n)");
  nn::Sequential empty_seq;
  EXPECT_THROW_MSG(empty_seq->forward(x), ValueError, "Cannot call forward() on an empty Sequential");
  EXPECT_THROW_HAS((*seq)[5], IndexError, "Index 5 is out of range");
}

TEST(Module, ModuleListAndDictRegisterTheirModules) {
  nn::ModuleList list;
  list->push_back(nn::Linear(2, 2));
  list->push_back(nn::Linear(2, 1));
  EXPECT_EQ(list->named_parameters().keys(), (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias"}));
  nn::ModuleDict dict;
  dict->insert("enc", nn::Linear(2, 2));
  dict->insert("dec", nn::Linear(2, 2));
  EXPECT_EQ(dict->keys(), (std::vector<std::string>{"enc", "dec"}));
  EXPECT_NE(dict->ptr<nn::LinearImpl>("dec"), nullptr);
  EXPECT_THROW_MSG((*dict)["nope"], KeyError, "ModuleDict has no module named 'nope'");
}

TEST(Module, LayersComputeTheirFunctionalOps) {
  manual_seed(5);
  Tensor img = randn({2, 3, 6, 6});
  nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3).stride({2}).padding({1}));
  EXPECT_TRUE(equal(conv->forward(img), conv2d(img, conv->weight, conv->bias, {2}, {1})));
  EXPECT_EQ(conv->forward(img).sizes().vec(), (std::vector<int64_t>{2, 4, 3, 3}));
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(3, 2, 2).stride({2}));
  EXPECT_EQ(up->forward(img).sizes().vec(), (std::vector<int64_t>{2, 2, 12, 12}));
  nn::Conv1d c1(2, 5, 3);
  EXPECT_EQ(c1->forward(randn({4, 2, 10})).sizes().vec(), (std::vector<int64_t>{4, 5, 8}));
  nn::MaxPool2d mp(2);
  EXPECT_TRUE(equal(mp->forward(img), max_pool2d(img, {2})));
  nn::AvgPool2d ap(nn::AvgPool2dOptions(3).stride({1}).padding({1}));
  EXPECT_TRUE(equal(ap->forward(img), avg_pool2d(img, {3}, {1}, {1})));
  nn::AdaptiveAvgPool2d gap(1);
  EXPECT_TRUE(allclose(gap->forward(img).flatten(1), img.mean({2, 3})));
  nn::GroupNorm gn(nn::GroupNormOptions(3, 3));
  EXPECT_TRUE(allclose(gn->forward(img), group_norm(img, 3, gn->weight, gn->bias)));
  nn::Bilinear bil(3, 2, 4);
  Tensor x1 = randn({5, 3}), x2 = randn({5, 2});
  Tensor y = bil->forward(x1, x2);
  // y[n, k] = x1[n] . W[k] . x2[n] + b[k]
  double want = bil->bias[1].item<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      want += x1[2][i].item<float>() * bil->weight[1][i][j].item<float>() * x2[2][j].item<float>();
  EXPECT_NEAR(y[2][1].item<float>(), want, 1e-5);
  nn::Softmax sm(1);
  EXPECT_TRUE(allclose(sm->forward(x1).sum({1}), ones({5})));
  nn::GELU g("tanh");
  EXPECT_TRUE(equal(g->forward(x1), gelu(x1, "tanh")));
  nn::Embedding emb(10, 3);
  EXPECT_EQ(emb->forward(tensor(std::vector<int64_t>{1, 2, 9}).view({3, 1})).sizes().vec(),
            (std::vector<int64_t>{3, 1, 3}));
}

TEST(Module, PrettyPrintsOfTheLayers) {
  auto str = [](const nn::Module& m) {
    std::ostringstream os;
    m.pretty_print(os);
    return os.str();
  };
  EXPECT_EQ(str(*nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding({1}))),
            "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  EXPECT_EQ(str(*nn::MaxPool2d(2)), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=false)");
  EXPECT_EQ(str(*nn::BatchNorm2d(4)), "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)");
  EXPECT_EQ(str(*nn::Dropout(0.25)), "Dropout(p=0.25, inplace=false)");
}

TEST(Module, ToKeepsEveryHandleCurrent) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(8).dropout(0.0));
  nn::GRUCell cell(3, 2);
  Tensor w = layer->linear1->weight;  // a handle held outside, as an optimizer would
  layer->to(kFloat64);
  cell->to(kFloat64);
  EXPECT_EQ(w.dtype(), kFloat64);
  EXPECT_EQ(cell->weight_ih.dtype(), kFloat64);
  EXPECT_EQ(layer->forward(randn({3, 1, 4}, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(std::get<0>(std::make_tuple(cell->forward(randn({1, 3}, kFloat64)))).dtype(), kFloat64);
}

// ---- regressions found in review ----

TEST(Module, SharedModulesAndParametersAreListedOnce) {
  struct TiedImpl : nn::Module {
    TiedImpl() : Module("Tied") {
      shared = nn::Linear(4, 4);
      register_module("a", shared);
      register_module("b", shared);
    }
    nn::Linear shared{nullptr};
  };
  auto tied = std::make_shared<TiedImpl>();
  EXPECT_EQ(tied->named_parameters().keys(), (std::vector<std::string>{"a.weight", "a.bias"}));
  EXPECT_EQ(tied->named_modules().keys(), (std::vector<std::string>{"", "a"}));
  EXPECT_EQ(tied->children().size(), 1u);
  // state_dict keeps every name, as PyTorch's
  EXPECT_EQ(tied->state_dict().keys(), (std::vector<std::string>{"a.weight", "a.bias", "b.weight", "b.bias"}));
  // an optimizer over parameters() steps the tied weight once
  Tensor before = tied->shared->weight.clone();
  tied->shared->forward(ones({1, 4})).sum().backward();
  optim::SGD opt(tied->parameters(), optim::SGDOptions(1.0));
  opt.step();
  EXPECT_TRUE(allclose(tied->shared->weight, before - tied->shared->weight.grad()));
}

TEST(Module, FailedRegistrationChangesNothing) {
  nn::Linear lin(2, 2);
  lin->register_buffer("stat", ones({1}));
  EXPECT_THROW_HAS(lin->register_buffer("stat", zeros({1}), false), KeyError, "already exists");
  EXPECT_TRUE(lin->state_dict().contains("stat"));  // still persistent
  Tensor t = ones({2});
  EXPECT_THROW_HAS(lin->register_parameter("weight", t), KeyError, "already exists");
  EXPECT_FALSE(t.requires_grad());
  nn::Linear empty{nullptr};
  EXPECT_THROW_MSG(empty->forward(ones({1, 2})), ValueError, "Accessing empty ModuleHolder");
}

TEST(Module, SetDataKeepsTheVersionCounterAndAcceptsItself) {
  Tensor a = ones({2});
  a.add_(1);
  const uint32_t v = a._version();
  a.set_data(a);
  EXPECT_EQ(a._version(), v);
  a.set_data(zeros({3}, kFloat64));
  EXPECT_EQ(a._version(), v);
  EXPECT_EQ(a.dtype(), kFloat64);
  EXPECT_EQ(a.numel(), 3);
}

// Generator objects: every random op draws from the one it is given, leaving the default
// generator alone; handles share their engine; states round-trip and bad ones change nothing.
#include "graft/nn/init.h"
#include "support/test_util.h"

using namespace graft;

namespace {
std::vector<double> values(const Tensor& t) { return t.to(kFloat64).contiguous().to_vector<double>(); }
std::vector<int64_t> ints(const Tensor& t) { return t.contiguous().to_vector<int64_t>(); }
}  // namespace

TEST(Generator, SeedsAsPyTorch) {
  Generator g;
  EXPECT_EQ(g.current_seed(), 67280421310721ULL);  // PyTorch's default_rng_seed_val
  EXPECT_TRUE(g.device().is_cpu());
  g.set_current_seed(7);
  EXPECT_EQ(g.current_seed(), 7u);
  const uint64_t s = g.seed();
  EXPECT_EQ(g.current_seed(), s);
}

TEST(Generator, SameSeedSameDraws) {
  Generator a(3), b(3);
  EXPECT_EQ(values(rand({5}, a)), values(rand({5}, b)));
  EXPECT_EQ(values(randn({5}, a, kFloat64)), values(randn({5}, b, kFloat64)));
  EXPECT_EQ(ints(randint(0, 100, {6}, a)), ints(randint(0, 100, {6}, b)));
  EXPECT_EQ(ints(randint(10, {6}, a)), ints(randint(10, {6}, b)));
  EXPECT_EQ(ints(randperm(9, a)), ints(randperm(9, b)));
  const Tensor w = tensor({0.1, 0.2, 0.7});
  EXPECT_EQ(ints(multinomial(w, 2, false, a)), ints(multinomial(w, 2, false, b)));
  Tensor x = empty({4}), y = empty({4});
  x.uniform_(-1, 1, a), y.uniform_(-1, 1, b);
  EXPECT_EQ(values(x), values(y));
  x.normal_(0, 1, a), y.normal_(0, 1, b);
  EXPECT_EQ(values(x), values(y));
  x.bernoulli_(0.5, a), y.bernoulli_(0.5, b);
  EXPECT_EQ(values(x), values(y));
  x.exponential_(2, a), y.exponential_(2, b);
  EXPECT_EQ(values(x), values(y));
  nn::init::kaiming_uniform_(x.view({2, 2}), 0.0, "fan_in", "leaky_relu", a);
  nn::init::kaiming_uniform_(y.view({2, 2}), 0.0, "fan_in", "leaky_relu", b);
  EXPECT_EQ(values(x), values(y));
  nn::init::trunc_normal_(x, 0, 1, -2, 2, a), nn::init::trunc_normal_(y, 0, 1, -2, 2, b);
  EXPECT_EQ(values(x), values(y));
  Tensor p = empty({5}, kInt64), q = empty({5}, kInt64);
  p.random_(a), q.random_(b);
  EXPECT_EQ(ints(p), ints(q));
}

TEST(Generator, LeavesTheDefaultGeneratorAlone) {
  manual_seed(11);
  const std::vector<double> plain = values(rand({8}));
  manual_seed(11);
  Generator g(5);
  const std::vector<double> first = values(rand({4}));
  (void)randperm(100, g);
  (void)rand({50}, g);
  const std::vector<double> second = values(rand({4}));
  std::vector<double> joined = first;
  joined.insert(joined.end(), second.begin(), second.end());
  EXPECT_EQ(joined, plain);
  EXPECT_EQ(initial_seed(), 11u);
  EXPECT_EQ(g.current_seed(), 5u);
}

TEST(Generator, HandlesShareOneEngine) {
  Generator a(21), b(21);
  Generator alias = a;  // a copy is the same generator
  EXPECT_TRUE(alias == a);
  EXPECT_FALSE(a == b);
  const std::vector<double> from_a = values(rand({3}, a));
  const std::vector<double> from_alias = values(rand({3}, alias));  // continues a's stream
  EXPECT_EQ(from_a, values(rand({3}, b)));
  EXPECT_EQ(from_alias, values(rand({3}, b)));
  EXPECT_NE(from_a, from_alias);
  EXPECT_TRUE(default_generator() == default_generator());
}

TEST(Generator, StateRoundTripsAndBadStatesChangeNothing) {
  Generator g(9);
  (void)rand({3}, g);
  const Tensor state = g.get_state();
  EXPECT_EQ(state.dtype(), kInt64);
  EXPECT_EQ(static_cast<size_t>(state.numel()), Generator::state_word_count());
  const std::vector<double> next = values(rand({6}, g));
  g.set_state(state);
  EXPECT_EQ(values(rand({6}, g)), next);
  EXPECT_EQ(g.current_seed(), 9u);

  g.set_state(state);
  EXPECT_THROW_MSG(g.set_state(zeros({3}, kInt64)), RuntimeError,
                   "Expected a graft RNG state of size " + std::to_string(Generator::state_word_count()) +
                       " but found the input RNG state size to be 3");
  EXPECT_THROW_MSG(g.set_state(zeros({3})), TypeError, "RNG state must be a torch.LongTensor");
  EXPECT_EQ(values(rand({6}, g)), next);  // the failed calls left it as it was
}

TEST(Generator, MetaDrawsLeaveTheGeneratorUntouched) {
  Generator a(4), b(4);
  (void)rand({1000}, a, TensorOptions().device(kMeta));
  Tensor m = empty({10}, TensorOptions().device(kMeta));
  m.normal_(0, 1, a);
  EXPECT_EQ(values(rand({4}, a)), values(rand({4}, b)));
}

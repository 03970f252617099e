// Generator: the CPU engine behind every random op, shared by its handles (generator.h).
#include "graft/core/generator.h"

#include <sstream>

#include "graft/core/error.h"

namespace graft {

struct Generator::State {
  mutable std::mutex mu;
  std::mt19937_64 engine;
  uint64_t seed;  // guarded by mu
  explicit State(uint64_t s) : engine(s), seed(s) {}
};

namespace {
// The engine's state as the words of its standard text form (operator<<), which its
// operator>> reads back exactly.
std::vector<uint64_t> engine_words(const std::mt19937_64& e) {
  std::ostringstream os;
  os << e;
  std::istringstream is(os.str());
  std::vector<uint64_t> words;
  for (uint64_t w; is >> w;) words.push_back(w);
  return words;
}
}  // namespace

Generator::Generator(uint64_t seed) : state_(std::make_shared<State>(seed)) {}

void Generator::set_current_seed(uint64_t seed) {
  std::lock_guard<std::mutex> g(state_->mu);
  state_->engine.seed(seed);
  state_->seed = seed;
}

uint64_t Generator::current_seed() const {
  std::lock_guard<std::mutex> g(state_->mu);
  return state_->seed;
}

uint64_t Generator::seed() {
  std::random_device device;
  const uint64_t s = (static_cast<uint64_t>(device()) << 32) ^ device();
  set_current_seed(s);
  return s;
}

size_t Generator::state_word_count() {
  static const size_t n = engine_words(std::mt19937_64()).size() + 1;
  return n;
}

std::vector<uint64_t> Generator::state_words() const {
  std::lock_guard<std::mutex> g(state_->mu);
  std::vector<uint64_t> words = engine_words(state_->engine);
  words.insert(words.begin(), state_->seed);
  return words;
}

void Generator::set_state_words(const std::vector<uint64_t>& words) {
  const size_t n = state_word_count();
  GRAFT_CHECK(words.size() == n, RuntimeError, "Expected a graft RNG state of size ", n,
              " but found the input RNG state size to be ", words.size());
  std::ostringstream os;
  for (size_t i = 1; i < n; ++i) os << words[i] << ' ';
  std::mt19937_64 e;
  std::istringstream is(os.str());
  is >> e;
  GRAFT_CHECK(!is.fail(), RuntimeError, "set_rng_state: the state words are not a valid generator state");
  std::lock_guard<std::mutex> g(state_->mu);
  state_->engine = e;
  state_->seed = words[0];
}

std::mutex& Generator::mutex() const { return state_->mu; }
std::mt19937_64& Generator::engine() const { return state_->engine; }

Generator default_generator() {
  static const Generator g;  // a handle: every copy shares its engine
  return g;
}

}  // namespace graft

// A generator's state as a tensor (Generator::get_state/set_state), and the default
// generator's seed and state as graft's free functions (manual_seed, get_rng_state, ...).
#include <cstring>

#include "graft/core/generator.h"
#include "op_util.h"

namespace graft {

Tensor Generator::get_state() const {
  const std::vector<uint64_t> words = state_words();
  std::vector<int64_t> out(words.size());
  std::memcpy(out.data(), words.data(), words.size() * sizeof(uint64_t));
  return tensor(out, TensorOptions(kInt64).device(kCPU));  // the state lives on the CPU, whatever the default
}

void Generator::set_state(const Tensor& state) {
  GRAFT_CHECK(state.defined() && state.dtype() == kInt64 && state.device().type() == DeviceType::CPU, TypeError,
              "RNG state must be a torch.LongTensor");
  GRAFT_CHECK(state.is_contiguous(), RuntimeError, "RNG state must be contiguous");
  const size_t n = state_word_count();  // checked before copying: a huge tensor is refused, not copied
  GRAFT_CHECK(static_cast<size_t>(state.numel()) == n, RuntimeError, "Expected a graft RNG state of size ", n,
              " but found the input RNG state size to be ", state.numel());
  std::vector<uint64_t> words(n);
  std::memcpy(words.data(), state.data_ptr(), words.size() * sizeof(uint64_t));
  set_state_words(words);
}

void manual_seed(uint64_t seed) { default_generator().set_current_seed(seed); }
uint64_t initial_seed() { return default_generator().current_seed(); }
Tensor get_rng_state() { return default_generator().get_state(); }
void set_rng_state(const Tensor& state) { default_generator().set_state(state); }

void detail::draw(kernel::RandomFill kind, const Tensor& self, const kernel::RandomParams& p,
                  const std::optional<Generator>& gen) {
  if (!detail::has_data(self)) return;  // meta: sizes only, the generator untouched
  const Generator g = gen.value_or(default_generator());
  std::lock_guard<std::mutex> lock(g.mutex());
  kernel::random_fill(kind, self, p, g.engine());
}

}  // namespace graft

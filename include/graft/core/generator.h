#pragma once
/// Generator: a source of random numbers, PyTorch's torch.Generator and libtorch's at::Generator
/// for the CPU. A Generator is a handle: copies share one engine (std::mt19937_64) and its lock,
/// as PyTorch's generator objects are shared. Every random op takes an optional one
/// (`rand(sizes, gen)`, `t.uniform_(0, 1, gen)`, `randperm(n, gen)`, `multinomial(..., gen)`);
/// without one it draws from default_generator(), which graft::manual_seed seeds.
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "graft/core/device.h"

namespace graft {

class Tensor;

class Generator {
 public:
  /// The seed a new generator starts from: PyTorch's default_rng_seed_val.
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;

  /// A new generator on the CPU, seeded with `seed`.
  explicit Generator(uint64_t seed = kDefaultSeed);

  /// Always the CPU: graft's generators live there (a CUDA build would add its own).
  Device device() const { return Device(DeviceType::CPU); }
  /// Reseeds the engine (libtorch's name; Python's Generator.manual_seed).
  void set_current_seed(uint64_t seed);
  /// The seed the engine was last seeded with (Python's Generator.initial_seed).
  uint64_t current_seed() const;
  /// Reseeds with a non-deterministic 64-bit number and returns it.
  uint64_t seed();

  /// A copy of the whole state: a 1-D int64 CPU tensor holding the current seed, then the
  /// engine's words (bit-cast to int64). set_state() of it makes the same draws follow.
  /// (PyTorch's is a uint8 ByteTensor of its own engine.) Defined with the tensor factories.
  Tensor get_state() const;
  /// Restores a get_state() result: TypeError unless a CPU int64 tensor ("RNG state must be a
  /// torch.LongTensor"); RuntimeError for a non-contiguous one, a wrong number of elements, or
  /// words the engine does not accept. A failed call leaves the generator as it was.
  void set_state(const Tensor& state);

  /// The state as words (the seed first); set_state_words() checks them as set_state() does.
  std::vector<uint64_t> state_words() const;
  void set_state_words(const std::vector<uint64_t>& words);
  /// How many words a state has (the seed and the engine's words; the engine's count is the
  /// standard library's: libstdc++ writes 312 words and the position).
  static size_t state_word_count();

  /// The engine's lock: hold it while drawing from engine().
  std::mutex& mutex() const;
  std::mt19937_64& engine() const;

  /// True when both handles share one engine.
  bool operator==(const Generator& other) const { return state_ == other.state_; }
  bool operator!=(const Generator& other) const { return !(*this == other); }

 private:
  struct State;
  std::shared_ptr<State> state_;
};

/// The generator every random op draws from when it is given none (PyTorch's
/// torch.default_generator): graft::manual_seed seeds it.
Generator default_generator();

}  // namespace graft

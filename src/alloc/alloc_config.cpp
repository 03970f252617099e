// GRAFT_ALLOC_CONF parsing: PyTorch's tokenizer rules (`,` `:` `[` `]` are tokens, spaces are
// ignored) and its messages for bad keys and values (c10 AllocatorConfig / CUDAAllocatorConfig).
#include "graft/alloc/alloc_config.h"

#include <cstdlib>
#include <sstream>
#include <vector>

#include "graft/core/error.h"

namespace graft::alloc {
namespace {

constexpr size_t kMB = 1024 * 1024;
constexpr size_t kLargeBufferMB = 20;

bool is_pow2(size_t v) { return v != 0 && (v & (v - 1)) == 0; }
size_t log2_floor(size_t v) { return 63 - static_cast<size_t>(__builtin_clzll(v)); }

class Tokens {
 public:
  explicit Tokens(const std::string& s) {
    std::string cur;
    for (char c : s) {
      if (c == ' ' || c == '\t' || c == '\n') continue;
      if (c == ',' || c == ':' || c == '[' || c == ']') {
        if (!cur.empty()) toks_.push_back(cur), cur.clear();
        toks_.emplace_back(1, c);
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) toks_.push_back(cur);
  }
  size_t size() const { return toks_.size(); }
  const std::string& operator[](size_t i) const { return toks_[i]; }
  void expect(size_t i, const char* tok) const {
    GRAFT_CHECK(i < toks_.size() && toks_[i] == tok, RuntimeError, "Error parsing CachingAllocator settings, expected ",
                tok);
  }
  size_t to_size(size_t i, const std::string& key) const {
    GRAFT_CHECK(i < toks_.size(), RuntimeError, "Error parsing CachingAllocator settings, expected a value for ", key);
    const std::string& t = toks_[i];
    GRAFT_CHECK(!t.empty() && t.find_first_not_of("0123456789") == std::string::npos && t.size() < 19, ValueError,
                "Error parsing CachingAllocator settings, expected a non-negative integer for ", key, ", got '", t,
                "'");
    return static_cast<size_t>(std::stoull(t));
  }
  bool to_bool(size_t i, const std::string& key) const {
    GRAFT_CHECK(i < toks_.size() && (toks_[i] == "True" || toks_[i] == "False"), ValueError,
                "Expected a single True/False argument for ", key);
    return toks_[i] == "True";
  }

 private:
  std::vector<std::string> toks_;
};

size_t parse_roundup(AllocatorConfig& c, const Tokens& t, size_t i) {
  t.expect(++i, ":");
  GRAFT_CHECK(++i < t.size(), ValueError, "Error, expecting roundup_power2_divisions value");
  auto& div = c.roundup_power2_divisions;
  if (t[i] != "[") {  // one value for every interval
    const size_t v = t.to_size(i, "roundup_power2_divisions");
    GRAFT_CHECK(is_pow2(v), ValueError, "For roundups, the divisons has to be power of 2");
    div.fill(v);
    return i;
  }
  size_t last_index = 0;
  bool first = true;
  while (++i < t.size() && t[i] != "]") {
    const std::string key = t[i];
    t.expect(++i, ":");
    GRAFT_CHECK(++i < t.size(), ValueError, "Error parsing roundup_power2_divisions value");
    const size_t v = t.to_size(i, "roundup_power2_divisions");
    GRAFT_CHECK(v == 0 || is_pow2(v), ValueError,
                "For roundups, the divisons has to be power of 2 or 0 to disable roundup");
    if (key == ">") {  // every interval after the last one named (PyTorch: from last_index + 1)
      for (size_t k = last_index + 1; k < div.size(); ++k) div[k] = v;
    } else {
      const size_t mb = t.to_size(i - 2, "roundup_power2_divisions interval");
      GRAFT_CHECK(is_pow2(mb), ValueError, "For roundups, the intervals have to be power of 2");
      const size_t index = std::min(log2_floor(mb), div.size() - 1);
      if (first) {
        for (size_t k = 0; k < index; ++k) div[k] = v;
        first = false;
      }
      div[index] = v;
      last_index = index;
    }
    if (i + 1 < t.size() && t[i + 1] != "]") t.expect(++i, ",");
  }
  GRAFT_CHECK(i < t.size(), RuntimeError, "Error parsing CachingAllocator settings, expected ]");
  return i;
}

// "<key>:<n>" at token i: n MB (at least kLargeBufferMB) in bytes, saturating; i ends on n.
size_t parse_size_mb(const Tokens& t, size_t& i, const std::string& key) {
  t.expect(++i, ":");
  const size_t v = t.to_size(++i, key);
  GRAFT_CHECK(v >= kLargeBufferMB, ValueError, "CachingAllocator option ", key,
              " too small, must be >= ", kLargeBufferMB);
  return std::min(v, std::numeric_limits<size_t>::max() / kMB) * kMB;
}

}  // namespace

void AllocatorConfig::update(const std::string& conf) {
  AllocatorConfig c = *this;  // parse into a copy: a bad string leaves the settings as they were
  // As PyTorch's parseArgs, every parse starts these three from their defaults.
  c.max_split_size = std::numeric_limits<size_t>::max();
  c.roundup_power2_divisions.fill(0);
  c.garbage_collection_threshold = 0.0;
  Tokens t(conf);
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string key = t[i];
    if (key == ",") continue;
    if (key == "backend") {
      t.expect(++i, ":");
      GRAFT_CHECK(++i < t.size() && (t[i] == "native" || t[i] == "malloc"), ValueError,
                  "Unknown allocator backend, options are native and malloc");
      c.backend = t[i] == "native" ? Backend::Native : Backend::Malloc;
    } else if (key == "max_split_size_mb") {
      c.max_split_size = parse_size_mb(t, i, key);
    } else if (key == "max_non_split_rounding_mb") {
      c.max_non_split_rounding = parse_size_mb(t, i, key);
    } else if (key == "roundup_power2_divisions") {
      i = parse_roundup(c, t, i);
    } else if (key == "garbage_collection_threshold") {
      t.expect(++i, ":");
      GRAFT_CHECK(++i < t.size(), ValueError, "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
      char* end = nullptr;
      const double v = std::strtod(t[i].c_str(), &end);
      GRAFT_CHECK(end && *end == '\0' && v > 0.0 && v < 1.0, ValueError,
                  "garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
      c.garbage_collection_threshold = v;
    } else if (key == "expandable_segments") {
      t.expect(++i, ":");
      c.expandable_segments = t.to_bool(++i, key);
      GRAFT_CHECK(!c.expandable_segments, NotImplementedError,
                  "expandable_segments:True is not supported by graft's caching allocator yet; use "
                  "max_split_size_mb to limit fragmentation");
    } else if (key == "release_lock_on_cudamalloc") {
      t.expect(++i, ":");
      c.release_lock_on_cudamalloc = t.to_bool(++i, key);
    } else if (key == "pinned_use_cuda_host_register") {
      t.expect(++i, ":");
      c.pinned_use_cuda_host_register = t.to_bool(++i, key);
    } else if (key == "pinned_num_register_threads") {
      t.expect(++i, ":");
      const size_t v = t.to_size(++i, key);
      GRAFT_CHECK(is_pow2(v), ValueError, "Number of register threads has to be power of 2");
      GRAFT_CHECK(v <= 128, ValueError, "Number of register threads should be less than or equal to 128");
      c.pinned_num_register_threads = v;
    } else {
      throw RuntimeError("Unrecognized CachingAllocator option: " + key);
    }
    if (i + 1 < t.size()) t.expect(++i, ",");
  }
  *this = c;
}

AllocatorConfig AllocatorConfig::parse(const std::string& conf) {
  AllocatorConfig c;
  c.update(conf);
  return c;
}

AllocatorConfig AllocatorConfig::from_env() {
  const char* env = std::getenv("GRAFT_ALLOC_CONF");
  return parse(env ? env : "");
}

size_t AllocatorConfig::divisions_for(size_t size) const {
  constexpr size_t kIntervalStart = 20;  // log2(1 MiB)
  const size_t log_size = log2_floor(size);
  size_t index = log_size > kIntervalStart ? log_size - kIntervalStart : 0;
  index = std::min(index, kRoundUpPowerOfTwoIntervals - 1);
  return roundup_power2_divisions[index];
}

std::string AllocatorConfig::to_string() const {
  std::ostringstream os;
  os << "backend:" << (backend == Backend::Native ? "native" : "malloc");
  if (max_split_size != std::numeric_limits<size_t>::max()) os << ",max_split_size_mb:" << max_split_size / kMB;
  os << ",max_non_split_rounding_mb:" << max_non_split_rounding / kMB;
  os << ",roundup_power2_divisions:[";
  for (size_t k = 0; k < roundup_power2_divisions.size(); ++k)
    os << (k ? "," : "") << (size_t{1} << k) << ":" << roundup_power2_divisions[k];
  os << "]";
  if (garbage_collection_threshold > 0) os << ",garbage_collection_threshold:" << garbage_collection_threshold;
  os << ",expandable_segments:" << (expandable_segments ? "True" : "False");
  return os.str();
}

}  // namespace graft::alloc

// A seeded mutation fuzzer over valid files (bit flips, byte overwrites, truncations, extensions,
// header-length edits, JSON token edits that keep the header length consistent). Every mutant
// must either load, and then be self-consistent, or throw a graft::Error; and which of the two
// (and which error class) must agree with an independent reading of the spec below.
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "st_test_util.h"

namespace graft::testing {
namespace {

using safetensors::from_bytes;

// ---- an independent reference: what the spec (plus graft's documented stricter rules) says ----

enum class Verdict { Invalid, Unsupported, Valid };
const char* verdict_name(Verdict v) {
  return v == Verdict::Valid ? "valid" : v == Verdict::Unsupported ? "unsupported dtype" : "invalid";
}

struct RefTensor {
  std::string dtype;
  std::vector<uint64_t> shape;
  uint64_t begin, end;
};

// dtype name -> (bits per element, whether graft loads it)
const std::map<std::string, std::pair<unsigned, bool>>& spec_dtypes() {
  static const std::map<std::string, std::pair<unsigned, bool>> m = {
      {"BOOL", {8, true}},     {"U8", {8, true}},       {"I8", {8, true}},       {"F8_E5M2", {8, false}},
      {"F8_E4M3", {8, false}}, {"F8_E8M0", {8, false}}, {"I16", {16, true}},     {"U16", {16, true}},
      {"F16", {16, true}},     {"BF16", {16, true}},    {"I32", {32, true}},     {"U32", {32, true}},
      {"F32", {32, true}},     {"C64", {64, false}},    {"F64", {64, true}},     {"I64", {64, true}},
      {"U64", {64, false}},    {"F4", {4, false}},      {"F6_E2M3", {6, false}}, {"F6_E3M2", {6, false}},
  };
  return m;
}

bool is_uint(const nlohmann::json& j) {
  return j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0);
}

Verdict reference_verdict(const std::string& bytes, std::map<std::string, RefTensor>* tensors_out = nullptr) {
  if (bytes.size() < 8) return Verdict::Invalid;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > 100'000'000 || n + 8 > bytes.size()) return Verdict::Invalid;
  const std::string text = bytes.substr(8, n);
  const uint64_t buffer = bytes.size() - 8 - n;
  if (text.find('\0') != std::string::npos) return Verdict::Invalid;  // JSON has no raw NUL (nlohmann stops there)

  // Duplicate keys are lost in a parsed document: catch them while parsing. Keys at depth 1 are
  // names; at depth 2 they are metadata keys (all must differ) or tensor fields (the three known
  // ones must not repeat).
  bool duplicate = false;
  std::vector<std::set<std::string>> seen;
  std::vector<std::string> object_key;  // the key that opened each open object
  std::string last_key;
  auto cb = [&](int depth, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (ev == E::object_start) {
      seen.emplace_back();
      object_key.push_back(last_key);
    } else if (ev == E::object_end) {
      seen.pop_back();
      object_key.pop_back();
    } else if (ev == E::key) {
      last_key = parsed.get<std::string>();
      const bool counts = depth == 1 || (depth == 2 && (object_key.back() == "__metadata__" || last_key == "dtype" ||
                                                        last_key == "shape" || last_key == "data_offsets"));
      if (counts && !seen.back().insert(last_key).second) duplicate = true;
    } else if (ev == E::array_start) {
      last_key.clear();
    }
    return true;
  };
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(text, cb);
  } catch (const nlohmann::json::exception&) {
    return Verdict::Invalid;
  }
  if (duplicate || !h.is_object()) return Verdict::Invalid;

  bool unsupported = false;
  std::vector<RefTensor> all;
  for (auto it = h.begin(); it != h.end(); ++it) {
    const auto& v = it.value();
    if (it.key() == "__metadata__") {
      if (v.is_null()) continue;
      if (!v.is_object()) return Verdict::Invalid;
      for (const auto& m : v)
        if (!m.is_string()) return Verdict::Invalid;
      continue;
    }
    if (it.key().empty() || !v.is_object()) return Verdict::Invalid;
    if (!v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets")) return Verdict::Invalid;
    const auto& dt = v["dtype"];
    const auto& sh = v["shape"];
    const auto& off = v["data_offsets"];
    if (!dt.is_string() || !sh.is_array() || !off.is_array() || off.size() != 2) return Verdict::Invalid;
    RefTensor t;
    for (const auto& d : sh) {
      if (!is_uint(d)) return Verdict::Invalid;
      t.shape.push_back(d.get<uint64_t>());
    }
    if (!is_uint(off[0]) || !is_uint(off[1])) return Verdict::Invalid;
    t.begin = off[0].get<uint64_t>();
    t.end = off[1].get<uint64_t>();
    t.dtype = dt.get<std::string>();
    auto d = spec_dtypes().find(t.dtype);
    if (d == spec_dtypes().end()) return Verdict::Invalid;
    unsigned __int128 bits = d->second.first;
    for (uint64_t s : t.shape) {
      bits *= s;
      if (bits > std::numeric_limits<uint64_t>::max()) return Verdict::Invalid;
    }
    if (bits % 8 != 0 || t.begin > t.end || t.end - t.begin != bits / 8 || t.end > buffer) return Verdict::Invalid;
    // graft: sizes and the outermost contiguous stride must fit int64.
    unsigned __int128 extent = 1;
    for (uint64_t s : t.shape) {
      extent *= std::max<uint64_t>(s, 1);
      if (s > uint64_t{std::numeric_limits<int64_t>::max()} || extent > uint64_t{std::numeric_limits<int64_t>::max()})
        return Verdict::Invalid;
    }
    unsupported = unsupported || !d->second.second;
    all.push_back(t);
    if (tensors_out) (*tensors_out)[it.key()] = t;
  }
  std::sort(all.begin(), all.end(), [](const RefTensor& a, const RefTensor& b) {
    return std::pair(a.begin, a.end) < std::pair(b.begin, b.end);
  });
  uint64_t at = 0;
  for (const auto& t : all) {
    if (t.begin != at) return Verdict::Invalid;
    at = t.end;
  }
  if (at != buffer) return Verdict::Invalid;
  return unsupported ? Verdict::Unsupported : Verdict::Valid;
}

// ---- seeds ----

std::vector<std::string> seed_files() {
  std::vector<std::string> seeds;
  {
    StateDict sd;
    sd.insert("weight", arange(12, kFloat32).reshape({3, 4}));
    sd.insert("bias", tensor({0.5, -1.5, 2.5}, kFloat64));
    sd.insert("step", scalar_tensor(int64_t{7}));
    sd.insert("ids", tensor(std::vector<int32_t>{3, 1, 2}));
    sd.insert("mask", tensor({1, 0, 1, 1}, kBool));
    seeds.push_back(safetensors::to_bytes(sd, {{"format", "pt"}, {"epoch", "12"}}));
  }
  {
    StateDict sd;
    sd.insert("empty", zeros({0, 3}));
    sd.insert("scalar", scalar_tensor(1.0));
    sd.insert("e2", zeros({2, 0}, kInt64));
    seeds.push_back(safetensors::to_bytes(sd));
  }
  seeds.push_back(safetensors::to_bytes(StateDict()));
  // Python-style, with the dtypes graft converts.
  seeds.push_back(st_file(R"({"__metadata__":{"format":"pt"},"u32":{"dtype":"U32","shape":[2],"data_offsets":[0,8]},)"
                          R"("bf":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},)"
                          R"("h":{"dtype":"F16","shape":[1,2],"data_offsets":[12,16]},)"
                          R"("s":{"dtype":"I16","shape":[1],"data_offsets":[16,18]},)"
                          R"("us":{"dtype":"U16","shape":[1],"data_offsets":[18,20]},)"
                          R"("b":{"dtype":"U8","shape":[2],"data_offsets":[20,22]},)"
                          R"("c":{"dtype":"I8","shape":[2],"data_offsets":[22,24]}})",
                          std::string("\x01\x00\x00\x00\xff\xff\xff\xff\x80\x3f\x49\x40\x00\x3c\x00\xb8\x00\x80\xff\xff"
                                      "\x00\xff\x80\x7f",
                                      24)));
  // A dtype graft cannot hold.
  seeds.push_back(st_file(R"({"big":{"dtype":"U64","shape":[1],"data_offsets":[0,8]},)"
                          R"("x":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                          std::string(12, '\x01')));
  return seeds;
}

// ---- the mutator ----

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  std::string mutate(std::string f) {
    const int rounds = 1 + static_cast<int>(pick(3));
    for (int r = 0; r < rounds; ++r) {
      // Token edits keep the header length consistent so they reach the deeper checks.
      static constexpr void (Mutator::*kMutations[])(std::string&) = {
          &Mutator::bit_flip,    &Mutator::overwrite_byte, &Mutator::truncate,      &Mutator::extend,
          &Mutator::edit_length, &Mutator::edit_number,    &Mutator::edit_number,   &Mutator::edit_dtype,
          &Mutator::edit_key,    &Mutator::move_offsets,   &Mutator::edit_structure};
      (this->*kMutations[pick(std::size(kMutations))])(f);
    }
    return f;
  }

 private:
  uint64_t pick(uint64_t n) { return n == 0 ? 0 : std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }

  static uint64_t header_length(const std::string& f) {
    if (f.size() < 8) return 0;
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(f[i]);
    return n;
  }
  static void set_length(std::string& f, uint64_t n) {
    for (int i = 0; i < 8; ++i) f[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  }
  // Splits f into header text and data when the length field is sane; false otherwise.
  static bool split(const std::string& f, std::string& header, std::string& data) {
    const uint64_t n = header_length(f);
    if (f.size() < 8 || n > f.size() - 8) return false;
    header = f.substr(8, n);
    data = f.substr(8 + n);
    return true;
  }
  // Rebuilds the file around an edited header, keeping the length field consistent.
  static std::string join(const std::string& header, const std::string& data) { return st_file(header, data); }

  void bit_flip(std::string& f) {
    if (f.empty()) return;
    f[pick(f.size())] ^= static_cast<char>(1u << pick(8));
  }
  void overwrite_byte(std::string& f) {
    if (f.empty()) return;
    static const std::string kInteresting = std::string("{}[]\",:0123456789-. \n\xff\x80\xc3\x00", 22);
    f[pick(f.size())] = pick(2) ? kInteresting[pick(kInteresting.size())] : static_cast<char>(pick(256));
  }
  void truncate(std::string& f) { f.resize(pick(f.size() + 1)); }
  void extend(std::string& f) {
    const uint64_t k = 1 + pick(16);
    for (uint64_t i = 0; i < k; ++i) f.push_back(pick(2) ? '\0' : static_cast<char>(pick(256)));
  }
  void edit_length(std::string& f) {
    if (f.size() < 8) return;
    const uint64_t n = header_length(f);
    const uint64_t size = f.size();
    const uint64_t options[] = {n + 1,    n - 1,    n + 8,       n - 8,       0,
                                size - 8, size - 7, 100'000'000, 100'000'001, std::numeric_limits<uint64_t>::max(),
                                rng_(),   pick(256)};
    set_length(f, options[pick(std::size(options))]);
  }
  void edit_number(std::string& f) {
    std::string header, data;
    if (!split(f, header, data)) return bit_flip(f);
    std::vector<std::pair<size_t, size_t>> numbers;  // [begin, end) of each digit run (with a leading '-')
    for (size_t i = 0; i < header.size();) {
      if (std::isdigit(static_cast<unsigned char>(header[i]))) {
        size_t b = (i > 0 && header[i - 1] == '-') ? i - 1 : i, e = i;
        while (e < header.size() && std::isdigit(static_cast<unsigned char>(header[e]))) ++e;
        numbers.push_back({b, e});
        i = e;
      } else {
        ++i;
      }
    }
    if (numbers.empty()) return;
    auto [b, e] = numbers[pick(numbers.size())];
    uint64_t value = 0;
    try {
      value = std::stoull(header.substr(b, e - b));
    } catch (const std::exception&) {
    }
    const std::string options[] = {"0",
                                   "1",
                                   std::to_string(value + 1),
                                   std::to_string(value - 1),
                                   std::to_string(value * 2),
                                   std::to_string(value + 4),
                                   std::to_string(value + 8),
                                   "18446744073709551615",
                                   "18446744073709551616",
                                   "9223372036854775807",
                                   "9223372036854775808",
                                   "4294967296",
                                   "-1",
                                   "-0",
                                   "1.0",
                                   "1e3",
                                   std::to_string(rng_()),
                                   std::to_string(pick(100))};
    header.replace(b, e - b, options[pick(std::size(options))]);
    f = join(header, data);
  }
  void edit_dtype(std::string& f) {
    std::string header, data;
    if (!split(f, header, data)) return bit_flip(f);
    std::vector<size_t> at;
    for (size_t p = header.find("\"dtype\":\""); p != std::string::npos; p = header.find("\"dtype\":\"", p + 1))
      at.push_back(p + 9);
    if (at.empty()) return;
    const size_t b = at[pick(at.size())];
    const size_t e = header.find('"', b);
    if (e == std::string::npos) return;
    static const char* kNames[] = {"BOOL", "U8",      "I8",      "I16",     "U16",
                                   "F16",  "BF16",    "I32",     "U32",     "F32",
                                   "F64",  "I64",     "U64",     "F8_E4M3", "C64",
                                   "F4",   "F6_E2M3", "f32",     "",        "F",
                                   "F33",  "I",       "BOOLEAN", "F64 ",    "\\u0046\\u0033\\u0032"};
    header.replace(b, e - b, kNames[pick(std::size(kNames))]);
    f = join(header, data);
  }
  void edit_key(std::string& f) {
    std::string header, data;
    if (!split(f, header, data)) return bit_flip(f);
    static const char* kKeys[] = {"\"dtype\"", "\"shape\"", "\"data_offsets\"", "\"__metadata__\""};
    const std::string from = kKeys[pick(std::size(kKeys))];
    std::vector<size_t> at;
    for (size_t p = header.find(from); p != std::string::npos; p = header.find(from, p + 1)) at.push_back(p);
    if (at.empty()) return;
    const char* to[] = {"\"dtype\"", "\"shape\"", "\"data_offsets\"", "\"__metadata__\"",
                        "\"extra\"", "\"\"",      "\"Shape\""};
    header.replace(at[pick(at.size())], from.size(), to[pick(std::size(to))]);
    f = join(header, data);
  }
  // Shifts one tensor's data_offsets (size kept) or swaps two tensors' ranges: gaps, overlaps,
  // and valid reorderings.
  void move_offsets(std::string& f) {
    std::string header, data;
    if (!split(f, header, data)) return bit_flip(f);
    struct Range {
      size_t at, len;
      uint64_t begin, end;
    };
    std::vector<Range> ranges;
    const std::string key = "\"data_offsets\":[";
    for (size_t p = header.find(key); p != std::string::npos; p = header.find(key, p + 1)) {
      const size_t b = p + key.size(), close = header.find(']', b);
      unsigned long long x = 0, y = 0;
      if (close == std::string::npos || std::sscanf(header.c_str() + b, "%llu,%llu", &x, &y) != 2) continue;
      ranges.push_back({b, close - b, x, y});
    }
    if (ranges.empty()) return;
    const Range r = ranges[pick(ranges.size())];
    if (ranges.size() > 1 && pick(2)) {
      Range first = r, second = ranges[pick(ranges.size())];
      if (first.at == second.at) return;
      if (first.at > second.at) std::swap(first, second);
      // Replace the later one first so the earlier position stays valid.
      header.replace(second.at, second.len, std::to_string(first.begin) + "," + std::to_string(first.end));
      header.replace(first.at, first.len, std::to_string(second.begin) + "," + std::to_string(second.end));
    } else {
      static const int64_t kDeltas[] = {-8, -4, -2, -1, 1, 2, 4, 8};
      const int64_t d = kDeltas[pick(std::size(kDeltas))];
      if (d < 0 && r.begin < static_cast<uint64_t>(-d)) return;
      header.replace(r.at, r.len, std::to_string(r.begin + d) + "," + std::to_string(r.end + d));
    }
    f = join(header, data);
  }
  void edit_structure(std::string& f) {
    std::string header, data;
    if (!split(f, header, data) || header.empty()) return bit_flip(f);
    static const std::string kTokens = "{}[]\",: ";
    const size_t p = pick(header.size());
    switch (pick(4)) {
      case 0:
        header.erase(p, 1);
        break;
      case 1:
        header.insert(p, 1, header[p]);
        break;
      case 2:
        header.insert(p, 1, kTokens[pick(kTokens.size())]);
        break;
      default: {
        // Move a chunk: reorders fields and entries now and then.
        const size_t q = pick(header.size());
        const size_t len = 1 + pick(12);
        std::string chunk = header.substr(p, len);
        header.erase(p, chunk.size());
        header.insert(std::min(q, header.size()), chunk);
      }
    }
    f = join(header, data);
  }

  std::mt19937_64 rng_;
};

// One mutant: graft's outcome must be what the reference says, and a loaded file must be
// self-consistent. Returns the verdict.
Verdict check_one(const std::string& bytes, int iteration) {
  std::map<std::string, RefTensor> ref_tensors;
  const Verdict expected = reference_verdict(bytes, &ref_tensors);
  Verdict got;
  std::string message = "(loaded)";
  safetensors::SafetensorsFile file;
  try {
    file = from_bytes(bytes, "mutant");
    got = Verdict::Valid;
  } catch (const ValueError& e) {
    got = Verdict::Invalid;
    message = e.what();
    EXPECT_EQ(std::string(e.what()).rfind("invalid safetensors file 'mutant': ", 0), 0u) << e.what();
  } catch (const TypeError& e) {
    got = Verdict::Unsupported;
    message = e.what();
  }  // any other exception escapes and fails the test
  EXPECT_EQ(verdict_name(got), std::string(verdict_name(expected)))
      << "iteration " << iteration << ", mutant: " << ::testing::PrintToString(bytes) << ", graft says: " << message;
  if (got != Verdict::Valid || expected != Verdict::Valid) return expected;

  // Self-consistent: names, dtypes and shapes match the header; native dtypes hold the file's
  // bytes; no tensor requires grad; and the dict survives a second round trip unchanged.
  EXPECT_EQ(file.tensors.size(), ref_tensors.size()) << "iteration " << iteration;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  for (const auto& item : file.tensors) {
    auto it = ref_tensors.find(item.key());
    if (it == ref_tensors.end()) {
      ADD_FAILURE() << "iteration " << iteration << ": unexpected tensor " << item.key();
      continue;
    }
    const Tensor& t = item.value();
    std::vector<int64_t> shape(it->second.shape.begin(), it->second.shape.end());
    EXPECT_EQ(t.sizes().vec(), shape);
    EXPECT_FALSE(t.requires_grad());
    const std::string& d = it->second.dtype;
    if (d == "F32" || d == "F64" || d == "I32" || d == "I64") {
      EXPECT_EQ(tensor_bytes(t), bytes.substr(8 + n + it->second.begin, it->second.end - it->second.begin));
    }
  }
  auto again = from_bytes(safetensors::to_bytes(file.tensors, file.metadata));
  expect_same_state(file.tensors, again.tensors);
  EXPECT_EQ(file.metadata, again.metadata);
  return expected;
}

TEST(Fuzz, SeedsAreValid) {
  const auto seeds = seed_files();
  for (size_t i = 0; i < seeds.size(); ++i)
    EXPECT_EQ(check_one(seeds[i], -1), i == seeds.size() - 1 ? Verdict::Unsupported : Verdict::Valid) << "seed " << i;
}

TEST(Fuzz, MutantsLoadConsistentlyOrThrowGraftErrors) {
  const auto seeds = seed_files();
  Mutator mutator(0x5afe7e45u);
  // Per seed; GRAFT_SLOW_TESTS=1 runs 25 times more.
  const int kIterations = std::getenv("GRAFT_SLOW_TESTS") ? 100000 : 4000;
  std::map<Verdict, int> counts;
  for (int i = 0; i < kIterations * static_cast<int>(seeds.size()); ++i) {
    const std::string mutant = mutator.mutate(seeds[static_cast<size_t>(i) % seeds.size()]);
    counts[check_one(mutant, i)]++;
    if (::testing::Test::HasFailure()) break;  // one reported mutant is enough
  }
  // The mutator reaches every outcome, so each path above was exercised.
  EXPECT_GT(counts[Verdict::Valid], 1000);
  EXPECT_GT(counts[Verdict::Unsupported], 100);
  EXPECT_GT(counts[Verdict::Invalid], 10000);
}

}  // namespace
}  // namespace graft::testing

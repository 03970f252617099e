// save/load and to_bytes/from_bytes round trips: every graft dtype, 0-d and empty tensors,
// non-contiguous input, metadata, order, overwrite; dtype conversions on load; bad arguments.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "st_test_util.h"

namespace graft::testing {
namespace {

using safetensors::from_bytes;
using safetensors::load_file;
using safetensors::Metadata;
using safetensors::to_bytes;

// The header of `bytes` as JSON (independent of the reader under test).
nlohmann::json header_of(const std::string& bytes) {
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  return nlohmann::json::parse(bytes.substr(8, n));
}

StateDict every_dtype() {
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  StateDict sd;
  sd.insert("b", tensor({1, 0, 1, 1, 0, 0}, kBool).reshape({2, 3}));
  sd.insert("i32", tensor(std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -1, 0, 7,
                                               std::numeric_limits<int32_t>::max()}));
  sd.insert("i64", tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -5, 0, 1LL << 40,
                                               std::numeric_limits<int64_t>::max(), 3})
                       .reshape({3, 2}));
  sd.insert("f32", tensor(std::vector<float>{1.5f, -0.0f, kNan, std::numeric_limits<float>::denorm_min(), 3e38f, -1e-7f,
                                             0.1f, 2.f})
                       .reshape({2, 2, 2}));
  sd.insert("f64", tensor(std::vector<double>{0.1, -kInf, kInf, 1e308, -2.5e-310}, kFloat64));
  return sd;
}

TEST(RoundTrip, EveryGraftDtypeThroughAFile) {
  ScratchDir dir;
  const std::string path = dir.file("all.safetensors");
  StateDict sd = every_dtype();
  save(sd, path);
  StateDict back = load(path);
  expect_same_state(sd, back);  // bytes compared: NaN, -0 and denormals survive exactly
  for (const auto& item : back) {
    EXPECT_FALSE(item.value().requires_grad()) << item.key();
    EXPECT_TRUE(item.value().is_contiguous()) << item.key();
  }
  // The file holds exactly what to_bytes produces, and the dtype names are the format's.
  const std::string bytes = read_all(path);
  EXPECT_EQ(bytes, to_bytes(sd));
  const auto h = header_of(bytes);
  EXPECT_EQ(h["b"]["dtype"], "BOOL");
  EXPECT_EQ(h["i32"]["dtype"], "I32");
  EXPECT_EQ(h["i64"]["dtype"], "I64");
  EXPECT_EQ(h["f32"]["dtype"], "F32");
  EXPECT_EQ(h["f64"]["dtype"], "F64");
  EXPECT_EQ(h["i64"]["shape"], nlohmann::json::array({3, 2}));
  EXPECT_FALSE(h.contains("__metadata__"));
}

TEST(RoundTrip, ZeroDimAndEmptyTensors) {
  StateDict sd;
  sd.insert("scalar_f", scalar_tensor(2.5, kFloat64));
  sd.insert("scalar_i", scalar_tensor(int64_t{-9}));
  sd.insert("scalar_b", scalar_tensor(true, kBool));
  sd.insert("empty", zeros({0}));
  sd.insert("empty_mid", zeros({2, 0, 3}, kInt32));
  sd.insert("empty_bool", zeros({0, 4}, kBool));
  const std::string bytes = to_bytes(sd);
  auto file = from_bytes(bytes);
  expect_same_state(sd, file.tensors);
  EXPECT_EQ(file.tensors["scalar_f"].dim(), 0);
  EXPECT_EQ(file.tensors["scalar_f"].item<double>(), 2.5);
  EXPECT_EQ(file.tensors["scalar_i"].item<int64_t>(), -9);
  EXPECT_TRUE(file.tensors["scalar_b"].item<bool>());
  EXPECT_EQ(file.tensors["empty_mid"].sizes().vec(), (std::vector<int64_t>{2, 0, 3}));
  const auto h = header_of(bytes);
  EXPECT_EQ(h["scalar_f"]["shape"], nlohmann::json::array());
  // Empty tensors take no bytes: begin == end.
  EXPECT_EQ(h["empty_mid"]["data_offsets"][0], h["empty_mid"]["data_offsets"][1]);
}

TEST(RoundTrip, EmptyStateDictIsTheReferenceEmptyFile) {
  // {} padded to 8 bytes: what the reference writer produces for no tensors.
  EXPECT_EQ(to_bytes(StateDict()), std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  auto file = from_bytes(to_bytes(StateDict()));
  EXPECT_TRUE(file.tensors.empty());
  EXPECT_TRUE(file.metadata.empty());
}

TEST(RoundTrip, NonContiguousTensorsAreWrittenContiguously) {
  Tensor base = arange(24, kFloat32).reshape({2, 3, 4});
  StateDict sd;
  sd.insert("transposed", base.transpose(0, 2));             // strides (1, 4, 12)
  sd.insert("stepped", base.slice(2, 0, 4, 2));              // every other column
  sd.insert("expanded", tensor({1.0, 2.0}).expand({3, 2}));  // stride 0
  sd.insert("offset", base.select(0, 1));                    // storage offset 12, contiguous
  for (const auto& item : sd) ASSERT_TRUE(!item.value().is_contiguous() || item.key() == "offset");
  StateDict contiguous;
  for (const auto& item : sd) contiguous.insert(item.key(), item.value().contiguous());
  const std::string bytes = to_bytes(sd);
  EXPECT_EQ(bytes, to_bytes(contiguous));
  auto back = from_bytes(bytes).tensors;
  expect_same_state(contiguous, back);
  expect_tensor(back["expanded"], {3, 2}, {1, 2, 1, 2, 1, 2});
  expect_tensor(back["stepped"], {2, 3, 2}, {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});
  expect_tensor(back["offset"], {3, 4}, {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
}

TEST(RoundTrip, TensorsThatRequireGradSaveTheirValuesAndLoadWithoutGrad) {
  Tensor w = tensor({1.0, 2.0, 3.0}, requires_grad());
  Tensor y = (w * 2).t();  // a non-leaf, 1-d so t() is a no-op view
  StateDict sd;
  sd.insert("w", w);
  sd.insert("y", y);
  auto back = from_bytes(to_bytes(sd)).tensors;
  expect_tensor(back["w"], {3}, {1, 2, 3});
  expect_tensor(back["y"], {3}, {2, 4, 6});
  EXPECT_FALSE(back["w"].requires_grad());
  EXPECT_FALSE(back["y"].requires_grad());
  EXPECT_TRUE(back["y"].is_leaf());
}

TEST(RoundTrip, LoadedTensorsOwnTheirMemory) {
  StateDict sd;
  sd.insert("x", tensor({4.0, 5.0}));
  std::string bytes = to_bytes(sd);
  auto back = from_bytes(bytes).tensors;
  std::fill(bytes.begin(), bytes.end(), '\xff');
  bytes.clear();
  bytes.shrink_to_fit();
  expect_tensor(back["x"], {2}, {4, 5});
  // And the saved tensor is not aliased either.
  back["x"].fill_(0.0);
  expect_tensor(sd["x"], {2}, {4, 5});
}

TEST(RoundTrip, MetadataRoundTrips) {
  ScratchDir dir;
  const std::string path = dir.file("m.safetensors");
  StateDict sd;
  sd.insert("w", ones({2}));
  const Metadata meta = {{"format", "pt"}, {"note", "h\xc3\xa9llo \"quoted\"\n"}, {"empty", ""}, {"", "empty key"}};
  save(sd, path, meta);
  auto file = load_file(path);
  EXPECT_EQ(file.metadata, meta);
  expect_same_state(sd, file.tensors);
  const auto h = header_of(read_all(path));
  EXPECT_EQ(h["__metadata__"]["format"], "pt");
  // A file without metadata loads with an empty map.
  save(sd, path);
  EXPECT_TRUE(load_file(path).metadata.empty());
}

TEST(RoundTrip, InsertionOrderIsKeptAndDataIsAlignedWidestFirst) {
  StateDict sd;
  sd.insert("z_bool", tensor({1, 0, 1}, kBool));
  sd.insert("a_f32", tensor({1.0, 2.0, 3.0}));
  sd.insert("m_f64", tensor({1.0}, kFloat64));
  sd.insert("b_i32", tensor(std::vector<int32_t>{5}));
  sd.insert("c_i64", tensor(std::vector<int64_t>{6, 7}));
  const std::string bytes = to_bytes(sd);
  EXPECT_EQ(from_bytes(bytes).tensors.keys(), sd.keys());
  const auto h = header_of(bytes);
  // Header keys in insertion order (read from the raw text: nlohmann::json sorts keys).
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  const std::string text = bytes.substr(8, n);
  EXPECT_LT(text.find("\"z_bool\""), text.find("\"a_f32\""));
  EXPECT_LT(text.find("\"a_f32\""), text.find("\"m_f64\""));
  EXPECT_LT(text.find("\"m_f64\""), text.find("\"b_i32\""));
  EXPECT_LT(text.find("\"b_i32\""), text.find("\"c_i64\""));
  // Data: 8-byte dtypes first (f64, i64), then 4-byte (f32, i32), then bool.
  auto off = [&](const char* k) { return h[k]["data_offsets"].get<std::vector<uint64_t>>(); };
  EXPECT_EQ(off("m_f64"), (std::vector<uint64_t>{0, 8}));
  EXPECT_EQ(off("c_i64"), (std::vector<uint64_t>{8, 24}));
  EXPECT_EQ(off("a_f32"), (std::vector<uint64_t>{24, 36}));
  EXPECT_EQ(off("b_i32"), (std::vector<uint64_t>{36, 40}));
  EXPECT_EQ(off("z_bool"), (std::vector<uint64_t>{40, 43}));
}

TEST(RoundTrip, OverwritingAnExistingFileReplacesIt) {
  ScratchDir dir;
  const std::string path = dir.file("ckpt.safetensors");
  StateDict big;
  big.insert("w", arange(1000, kFloat64));
  save(big, path);
  StateDict small;
  small.insert("v", tensor({7.0}));
  save(small, path);
  EXPECT_EQ(read_all(path), to_bytes(small));  // no tail of the bigger file left
  auto back = load(path);
  EXPECT_EQ(back.keys(), std::vector<std::string>{"v"});
  expect_tensor(back["v"], {1}, {7});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"ckpt.safetensors"});  // no temporary file
}

TEST(RoundTrip, SaveAcceptsARelativePath) {
  ScratchDir dir;
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  StateDict sd;
  sd.insert("x", tensor({1.0}));
  save(sd, "rel.safetensors");
  auto back = load("rel.safetensors");
  std::filesystem::current_path(cwd);
  expect_tensor(back["x"], {1}, {1});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"rel.safetensors"});
}

// ---- the 16-bit floats load as themselves; the dtypes graft does not have are converted ----

TEST(Conversions, HalfAndBfloat16LoadAsThemselves) {
  // F16: 1, -2, 65504 (max), 2^-24 (smallest subnormal), 0x03ff (largest subnormal), -0, inf,
  // -inf, NaN, 2^-14 (smallest normal).
  const std::vector<uint16_t> f16 = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x0400};
  // BF16: 1, 3.140625, -inf, the smallest subnormal 2^-133, -0.
  const std::vector<uint16_t> bf16 = {0x3f80, 0x4049, 0xff80, 0x0001, 0x8000};
  const std::string header = R"({"h":{"dtype":"F16","shape":[10],"data_offsets":[0,20]},)"
                             R"("bf":{"dtype":"BF16","shape":[5],"data_offsets":[20,30]}})";
  auto sd = from_bytes(st_file(header, le_bytes(f16) + le_bytes(bf16))).tensors;
  ASSERT_EQ(sd["h"].dtype(), kFloat16);
  ASSERT_EQ(sd["bf"].dtype(), kBFloat16);
  const auto h = sd["h"].to(kFloat32).to_vector<float>();
  EXPECT_EQ(h[0], 1.0f);
  EXPECT_EQ(h[1], -2.0f);
  EXPECT_EQ(h[2], 65504.0f);
  EXPECT_EQ(h[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(h[4], std::ldexp(1023.0f, -24));
  EXPECT_EQ(h[5], 0.0f);
  EXPECT_TRUE(std::signbit(h[5]));
  EXPECT_EQ(h[6], std::numeric_limits<float>::infinity());
  EXPECT_EQ(h[7], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(h[8]));
  EXPECT_EQ(h[9], std::ldexp(1.0f, -14));
  const auto b = sd["bf"].to(kFloat32).to_vector<float>();
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(b[1], 3.140625f);
  EXPECT_EQ(b[2], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(b[3], std::ldexp(1.0f, -133));
  EXPECT_TRUE(std::signbit(b[4]));
}

TEST(Conversions, SmallIntegersWidenToInt32AndU32ToInt64) {
  const std::string header = R"({"u8":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},)"
                             R"("i8":{"dtype":"I8","shape":[3],"data_offsets":[3,6]},)"
                             R"("i16":{"dtype":"I16","shape":[2],"data_offsets":[6,10]},)"
                             R"("u16":{"dtype":"U16","shape":[2],"data_offsets":[10,14]},)"
                             R"("u32":{"dtype":"U32","shape":[2],"data_offsets":[14,22]}})";
  const std::string data = le_bytes(std::vector<uint8_t>{0, 200, 255}) + le_bytes(std::vector<int8_t>{-128, -1, 127}) +
                           le_bytes(std::vector<int16_t>{-32768, 32767}) + le_bytes(std::vector<uint16_t>{0, 65535}) +
                           le_bytes(std::vector<uint32_t>{1, 4294967295u});
  auto sd = from_bytes(st_file(header, data)).tensors;
  EXPECT_EQ(sd["u8"].dtype(), kInt32);
  EXPECT_EQ(sd["u8"].to_vector<int32_t>(), (std::vector<int32_t>{0, 200, 255}));
  EXPECT_EQ(sd["i8"].to_vector<int32_t>(), (std::vector<int32_t>{-128, -1, 127}));
  EXPECT_EQ(sd["i16"].to_vector<int32_t>(), (std::vector<int32_t>{-32768, 32767}));
  EXPECT_EQ(sd["u16"].to_vector<int32_t>(), (std::vector<int32_t>{0, 65535}));
  EXPECT_EQ(sd["u32"].dtype(), kInt64);
  EXPECT_EQ(sd["u32"].to_vector<int64_t>(), (std::vector<int64_t>{1, 4294967295LL}));
}

TEST(Conversions, BoolBytesOtherThanZeroReadAsTrue) {
  const std::string header = R"({"m":{"dtype":"BOOL","shape":[2,2],"data_offsets":[0,4]}})";
  auto sd = from_bytes(st_file(header, std::string("\x00\x01\x02\xff", 4))).tensors;
  ASSERT_EQ(sd["m"].dtype(), kBool);
  EXPECT_EQ(tensor_bytes(sd["m"]), std::string("\x00\x01\x01\x01", 4));  // stored as proper bools
}

TEST(Conversions, DtypesGraftCannotHoldAreTypeErrors) {
  for (std::string d : {"U64", "F8_E4M3", "F8_E5M2", "F8_E8M0", "C64"}) {
    const uint64_t size = (d == "U64" || d == "C64") ? 8 : 1;
    const std::string header = R"({"ok":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"t":{"dtype":")" + d +
                               R"(","shape":[1],"data_offsets":[4,)" + std::to_string(4 + size) + "]}}";
    EXPECT_THROW_MSG(from_bytes(st_file(header, std::string(4 + size, '\0')), "x.safetensors"), TypeError,
                     "safetensors file 'x.safetensors': tensor 't' has dtype " + d +
                         ", which graft cannot load (graft loads BOOL, U8, I8, I16, U16, I32, U32, I64, F16, BF16, "
                         "F32, F64)");
  }
  // Sub-byte floats are sized in bits: 4 x F4 = 2 bytes.
  EXPECT_THROW_HAS(from_bytes(st_file(R"({"t":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", "ab")), TypeError,
                   "tensor 't' has dtype F4");
}

// ---- bad arguments to save / to_bytes ----

TEST(SaveErrors, BadNamesAndUndefinedTensorsAreRejectedBeforeAnyFileIsCreated) {
  ScratchDir dir;
  const std::string path = dir.file("bad.safetensors");
  {
    StateDict sd;
    sd.insert("ok", ones({1}));
    sd.insert("w", Tensor());
    EXPECT_THROW_MSG(save(sd, path), ValueError, "save: tensor 'w' is undefined");
    EXPECT_THROW_MSG(to_bytes(sd), ValueError, "to_bytes: tensor 'w' is undefined");
  }
  {
    StateDict sd;
    sd.insert("ok", ones({1}));
    sd.insert("", ones({1}));
    EXPECT_THROW_MSG(save(sd, path), ValueError, "save: tensor name at position 1 is empty");
  }
  {
    StateDict sd;
    sd.insert("__metadata__", ones({1}));
    EXPECT_THROW_MSG(save(sd, path), ValueError,
                     "save: tensor name '__metadata__' is reserved for the file's metadata");
  }
  {
    StateDict sd;
    sd.insert("bad\xff", ones({1}));
    EXPECT_THROW_MSG(save(sd, path), ValueError, "save: tensor name 'bad\xff' is not valid UTF-8");
  }
  {
    StateDict sd;
    sd.insert("w", ones({1}));
    EXPECT_THROW_MSG(save(sd, path, {{"k\xc0\xaf", "v"}}), ValueError,
                     "save: metadata key 'k\xc0\xaf' is not valid UTF-8");  // overlong '/'
    EXPECT_THROW_MSG(save(sd, path, {{"k", "\xed\xa0\x80"}}), ValueError,
                     "save: metadata value of key 'k' is not valid UTF-8");  // a surrogate
    EXPECT_THROW_MSG(save(sd, ""), ValueError, "save: the path is empty");
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(SaveErrors, AHeaderReadersWouldRefuseIsNotWritten) {
  StateDict sd;
  sd.insert("w", ones({1}));
  // The metadata alone is over the 100,000,000-byte header limit: refused before any JSON is made.
  const Metadata meta = {{"k", std::string(99'999'999, 'a')}, {"l", ""}};
  EXPECT_THROW_MSG(to_bytes(sd, meta), ValueError,
                   "to_bytes: the tensor names and metadata take 100000002 bytes, over the 100000000-byte header "
                   "limit safetensors readers accept");
}

TEST(SaveErrors, UnicodeNamesAreFine) {
  StateDict sd;
  sd.insert("p\xc3\xa4rameter.\xe2\x82\xac.\xf0\x9f\x98\x80", ones({1}));  // ä, €, 😀
  sd.insert("quote\"and\\backslash\x01", zeros({1}));
  auto back = from_bytes(to_bytes(sd)).tensors;
  EXPECT_EQ(back.keys(), sd.keys());
}

TEST(LoadErrors, OperatingSystemFailuresAreRuntimeErrors) {
  ScratchDir dir;
  const std::string missing = dir.file("missing.safetensors");
  EXPECT_THROW_MSG(load(missing), RuntimeError, "load: cannot open '" + missing + "': No such file or directory");
  EXPECT_THROW_MSG(load(dir.path().string()), RuntimeError,
                   "load: '" + dir.path().string() + "' is not a regular file");
  // An empty file is a format error, not an I/O one.
  const std::string empty = dir.file("empty.safetensors");
  write_all(empty, "");
  EXPECT_THROW_MSG(
      load(empty), ValueError,
      "invalid safetensors file '" + empty + "': the file is 0 bytes long, too short for the 8-byte header length");
}

}  // namespace
}  // namespace graft::testing

// Interoperability: files laid out byte for byte as the Python safetensors library writes them
// load with the right values, and graft's own files pass an independent reading of the spec
// (nlohmann::json, offsets, dtype names, padding, little-endian payload).
#include <nlohmann/json.hpp>

#include "st_test_util.h"

namespace graft::testing {
namespace {

using safetensors::from_bytes;
using safetensors::to_bytes;

// {"test": float32 [[1, 2], [3, 4]]}, as safetensors.torch.save_file writes it: u64 header
// length 64 (60 bytes of compact JSON padded with 4 spaces to a multiple of 8), then 16 bytes
// of little-endian float32.
const std::string kGoldenHeader = R"({"test":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
const std::string kGolden = std::string("\x40\x00\x00\x00\x00\x00\x00\x00", 8) + kGoldenHeader + "    " +
                            std::string(
                                "\x00\x00\x80\x3f"   // 1.0f
                                "\x00\x00\x00\x40"   // 2.0f
                                "\x00\x00\x40\x40"   // 3.0f
                                "\x00\x00\x80\x40",  // 4.0f
                                16);

TEST(Golden, PythonStyleFileLoads) {
  ASSERT_EQ(kGoldenHeader.size(), 60u);
  ASSERT_EQ(kGolden.size(), 8u + 64u + 16u);
  auto file = from_bytes(kGolden);
  ASSERT_EQ(file.tensors.keys(), std::vector<std::string>{"test"});
  EXPECT_EQ(file.tensors["test"].dtype(), kFloat32);
  expect_tensor(file.tensors["test"], {2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(file.metadata.empty());
}

TEST(Golden, GraftWritesThePythonBytesForTheSameDict) {
  StateDict sd;
  sd.insert("test", tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2}));
  EXPECT_EQ(to_bytes(sd), kGolden);
  ScratchDir dir;
  save(sd, dir.file("golden.safetensors"));
  EXPECT_EQ(read_all(dir.file("golden.safetensors")), kGolden);
}

TEST(Golden, MetadataGoesFirstAsInPython) {
  // save_file(tensors, path, metadata={"format": "pt"}): "__metadata__" leads the header;
  // 91 bytes of JSON padded with 5 spaces to 96 (0x60).
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"test":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  ASSERT_EQ(header.size(), 91u);
  const std::string golden = std::string("\x60\x00\x00\x00\x00\x00\x00\x00", 8) + header + "     " + kGolden.substr(72);
  StateDict sd;
  sd.insert("test", tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2}));
  EXPECT_EQ(to_bytes(sd, {{"format", "pt"}}), golden);
  auto file = from_bytes(golden);
  EXPECT_EQ(file.metadata, (safetensors::Metadata{{"format", "pt"}}));
  expect_tensor(file.tensors["test"], {2, 2}, {1, 2, 3, 4});
}

TEST(Golden, PythonMultiTensorLayoutLoads) {
  // Python sorts by dtype (widest alignment first), then name, and writes the header in that
  // order: I64 "a", F16 "h", BOOL "m". 168 bytes of JSON, already a multiple of 8.
  const std::string header = R"({"a":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
                             R"("h":{"dtype":"F16","shape":[1,2],"data_offsets":[16,20]},)"
                             R"("m":{"dtype":"BOOL","shape":[3],"data_offsets":[20,23]}})";
  ASSERT_EQ(header.size(), 168u);
  const std::string data = std::string(
      "\xff\xff\xff\xff\xff\xff\xff\xff"  // -1
      "\x00\x00\x00\x00\x01\x00\x00\x00"  // 2^32
      "\x00\x3c"                          // 1.0 (F16)
      "\x00\xb8"                          // -0.5 (F16)
      "\x01\x00\x01",
      23);
  auto sd = from_bytes(st_file(header, data)).tensors;
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"a", "h", "m"}));
  EXPECT_EQ(sd["a"].to_vector<int64_t>(), (std::vector<int64_t>{-1, 4294967296LL}));
  expect_tensor(sd["h"], {1, 2}, {1.0, -0.5});
  EXPECT_EQ(sd["h"].dtype(), kFloat16);
  EXPECT_EQ(sd["m"].dtype(), kBool);
  EXPECT_EQ(tensor_bytes(sd["m"]), std::string("\x01\x00\x01", 3));
}

// What a spec reader sees in graft's output, parsed without graft's reader.
TEST(Golden, GraftOutputPassesAnIndependentSpecReader) {
  StateDict sd;
  sd.insert("layer.0.weight", tensor(std::vector<float>{0.5f, -1.25f, 3.0f, 1e-3f, 7.0f, -8.0f}).reshape({2, 3}));
  sd.insert("layer.0.bias", tensor(std::vector<double>{1.0, -2.0}, kFloat64));
  sd.insert("steps", scalar_tensor(int64_t{-42}));
  sd.insert("ids", tensor(std::vector<int32_t>{1, -2, 300000}));
  sd.insert("mask", tensor({1, 0, 0, 1, 1}, kBool));
  sd.insert("none", zeros({0, 5}));
  const std::string bytes = to_bytes(sd, {{"epoch", "3"}});

  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  ASSERT_EQ(n % 8, 0u);  // data starts at a multiple of 8
  ASSERT_LE(8 + n, bytes.size());
  const std::string text = bytes.substr(8, n);
  const size_t json_end = text.rfind('}') + 1;
  EXPECT_EQ(text.substr(json_end), std::string(text.size() - json_end, ' '));  // spaces only
  EXPECT_LT(text.size() - json_end, 8u);
  const auto h = nlohmann::json::parse(text);
  ASSERT_TRUE(h.is_object());
  EXPECT_EQ(h["__metadata__"], (nlohmann::json{{"epoch", "3"}}));
  const uint64_t buffer = bytes.size() - 8 - n;

  struct Expected {
    std::string dtype;
    std::vector<uint64_t> shape;
    std::string payload;
    uint64_t element_size;
  };
  const std::map<std::string, Expected> expected = {
      {"layer.0.weight", {"F32", {2, 3}, le_bytes(std::vector<float>{0.5f, -1.25f, 3.0f, 1e-3f, 7.0f, -8.0f}), 4}},
      {"layer.0.bias", {"F64", {2}, le_bytes(std::vector<double>{1.0, -2.0}), 8}},
      {"steps", {"I64", {}, le_bytes(std::vector<int64_t>{-42}), 8}},
      {"ids", {"I32", {3}, le_bytes(std::vector<int32_t>{1, -2, 300000}), 4}},
      {"mask", {"BOOL", {5}, std::string("\x01\x00\x00\x01\x01", 5), 1}},
      {"none", {"F32", {0, 5}, "", 4}},
  };
  ASSERT_EQ(h.size(), expected.size() + 1);
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, e] : expected) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(h.contains(name));
    const auto& entry = h[name];
    EXPECT_EQ(entry["dtype"], e.dtype);
    EXPECT_EQ(entry["shape"].get<std::vector<uint64_t>>(), e.shape);
    const auto off = entry["data_offsets"].get<std::vector<uint64_t>>();
    ASSERT_EQ(off.size(), 2u);
    ASSERT_LE(off[0], off[1]);
    ASSERT_LE(off[1], buffer);
    EXPECT_EQ(off[0] % e.element_size, 0u);  // aligned
    EXPECT_EQ(bytes.substr(8 + n + off[0], off[1] - off[0]), e.payload);
    ranges.push_back({off[0], off[1]});
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (auto [b, e] : ranges) {
    EXPECT_EQ(b, at);
    at = e;
  }
  EXPECT_EQ(at, buffer);  // the ranges tile the buffer exactly
}

}  // namespace
}  // namespace graft::testing

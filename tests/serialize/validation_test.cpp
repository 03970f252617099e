// Every rule the reader enforces, each with its own crafted bad file and its exact message;
// truncations of a valid file at every length; what the reader accepts that a strict one might
// not (field order, offsets out of header order, unknown fields, whitespace).
#include "st_test_util.h"

namespace graft::testing {
namespace {

using safetensors::from_bytes;

const std::string kPrefix = "invalid safetensors file 'f.st': ";

// Expects from_bytes to reject `bytes` with ValueError(kPrefix + what).
void expect_invalid(const std::string& bytes, const std::string& what) {
  EXPECT_THROW_MSG(from_bytes(bytes, "f.st"), ValueError, kPrefix + what);
}
// A one-tensor header {"t": {dtype, shape, data_offsets}} from the three JSON values.
std::string one(const std::string& dtype, const std::string& shape, const std::string& offsets) {
  return R"({"t":{"dtype":)" + dtype + R"(,"shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}";
}
std::string zeros_bytes(size_t n) { return std::string(n, '\0'); }

TEST(Validation, TheEightByteLength) {
  expect_invalid("", "the file is 0 bytes long, too short for the 8-byte header length");
  expect_invalid("1234567", "the file is 7 bytes long, too short for the 8-byte header length");
  std::string f = st_file("{}");
  f[0] = '\x01';
  f[3] = '\x06';  // 100663297 > 100,000,000
  expect_invalid(f, "header length 100663297 exceeds the limit of 100000000 bytes");
  expect_invalid(std::string(8, '\xff') + "{}",
                 "header length 18446744073709551615 exceeds the limit of 100000000 bytes");
  // Exactly at the limit is allowed by the limit, then fails on the file size.
  std::string at_limit = st_file("{}");
  const uint64_t limit = 100'000'000;
  std::memcpy(at_limit.data(), &limit, 8);
  expect_invalid(at_limit, "header length 100000000 runs past the end of the file (10 bytes)");
  std::string f2 = st_file("{}");
  f2[0] = 3;
  expect_invalid(f2, "header length 3 runs past the end of the file (10 bytes)");
}

TEST(Validation, HeaderMustBeUtf8Json) {
  expect_invalid(st_file("{\"\xff\":1}"), "header is not valid UTF-8 (byte 2 of the header)");
  expect_invalid(st_file("{\"a\xc3\":1}"), "header is not valid UTF-8 (byte 3 of the header)");  // cut sequence
  expect_invalid(st_file(""),
                 "header is not valid JSON: parse error at line 1, column 1: syntax error while parsing value - "
                 "unexpected end of input; expected '[', '{', or a literal");
  expect_invalid(st_file("{\"a\":"),
                 "header is not valid JSON: parse error at line 1, column 6: syntax error while parsing value - "
                 "unexpected end of input; expected '[', '{', or a literal");
  expect_invalid(st_file("{} x"),
                 "header is not valid JSON: parse error at line 1, column 4: syntax error while parsing value - "
                 "invalid literal; last read: '{} x'; expected end of input");
  // A NUL would end the input for nlohmann's lexer, hiding what follows: refused outright.
  expect_invalid(st_file(std::string("{}  \0 x", 7)), "header is not valid JSON: NUL byte at byte 4 of the header");
  expect_invalid(st_file("[1, 2]"), "header is not a JSON object (found an array)");
  expect_invalid(st_file("  42  "), "header is not a JSON object (found 42)");
  expect_invalid(st_file("\"{}\""), "header is not a JSON object (found a string)");
}

TEST(Validation, Metadata) {
  expect_invalid(st_file(R"({"__metadata__":[1]})"),
                 "'__metadata__' must be an object mapping strings to strings (found an array)");
  expect_invalid(st_file(R"({"__metadata__":"x"})"),
                 "'__metadata__' must be an object mapping strings to strings (found a string)");
  expect_invalid(st_file(R"({"__metadata__":{"a":1}})"), "'__metadata__' value of key 'a' must be a string (found 1)");
  expect_invalid(st_file(R"({"__metadata__":{"a":{}}})"),
                 "'__metadata__' value of key 'a' must be a string (found an object)");
  expect_invalid(st_file(R"({"__metadata__":{"a":"x","a":"y"}})"), "'__metadata__' has duplicate key 'a'");
  expect_invalid(st_file(R"({"__metadata__":{},"__metadata__":{}})"), "duplicate '__metadata__'");
  // null is "no metadata", as for the reference reader's optional field.
  EXPECT_TRUE(from_bytes(st_file(R"({"__metadata__":null})")).metadata.empty());
}

TEST(Validation, TensorEntriesAndTheirFields) {
  expect_invalid(st_file(R"({"t":5})"),
                 "tensor 't': entry must be an object with dtype, shape and data_offsets (found 5)");
  expect_invalid(st_file(R"({"t":[]})"),
                 "tensor 't': entry must be an object with dtype, shape and data_offsets (found an array)");
  expect_invalid(st_file(R"({"":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})", zeros_bytes(4)),
                 "empty tensor name");
  expect_invalid(st_file(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},)"
                         R"("t":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}})"),
                 "duplicate tensor name 't'");
  // dtype
  expect_invalid(st_file(one("32", "[1]", "[0,4]"), zeros_bytes(4)), "tensor 't': 'dtype' must be a string (found 32)");
  expect_invalid(st_file(one("null", "[1]", "[0,4]"), zeros_bytes(4)),
                 "tensor 't': 'dtype' must be a string (found null)");
  expect_invalid(st_file(one("\"F17\"", "[1]", "[0,4]"), zeros_bytes(4)), "tensor 't': unknown dtype 'F17'");
  expect_invalid(st_file(one("\"f32\"", "[1]", "[0,4]"), zeros_bytes(4)), "tensor 't': unknown dtype 'f32'");
  // shape
  expect_invalid(st_file(one("\"F32\"", "2", "[0,8]"), zeros_bytes(8)),
                 "tensor 't': 'shape' must be an array of non-negative integers (found 2)");
  expect_invalid(st_file(one("\"F32\"", "[-1]", "[0,4]"), zeros_bytes(4)),
                 "tensor 't': 'shape' must be an array of non-negative integers (found -1)");
  expect_invalid(st_file(one("\"F32\"", "[2.0]", "[0,8]"), zeros_bytes(8)),
                 "tensor 't': 'shape' must be an array of non-negative integers (found 2.0)");
  expect_invalid(st_file(one("\"F32\"", "[\"2\"]", "[0,8]"), zeros_bytes(8)),
                 "tensor 't': 'shape' must be an array of non-negative integers (found a string)");
  expect_invalid(st_file(one("\"F32\"", "[[2]]", "[0,8]"), zeros_bytes(8)),
                 "tensor 't': 'shape' must be an array of non-negative integers (found an array)");
  expect_invalid(st_file(one("\"F32\"", "[true]", "[0,4]"), zeros_bytes(4)),
                 "tensor 't': 'shape' must be an array of non-negative integers (found true)");
  expect_invalid(st_file(one("\"F32\"", "[18446744073709551616]", "[0,0]")),
                 "tensor 't': 'shape' must be an array of non-negative integers (found 18446744073709551616)");
  // data_offsets
  expect_invalid(st_file(one("\"F32\"", "[1]", "{}"), zeros_bytes(4)),
                 "tensor 't': 'data_offsets' must be an array of two non-negative integers (found an object)");
  expect_invalid(st_file(one("\"F32\"", "[1]", "[0,-4]"), zeros_bytes(4)),
                 "tensor 't': 'data_offsets' must be an array of two non-negative integers (found -4)");
  expect_invalid(st_file(one("\"F32\"", "[1]", "[0]"), zeros_bytes(4)),
                 "tensor 't': 'data_offsets' must have exactly 2 entries, found 1");
  expect_invalid(st_file(one("\"F32\"", "[1]", "[]"), zeros_bytes(4)),
                 "tensor 't': 'data_offsets' must have exactly 2 entries, found 0");
  expect_invalid(st_file(one("\"F32\"", "[1]", "[0,4,4]"), zeros_bytes(4)),
                 "tensor 't': 'data_offsets' must have exactly 2 entries, found more");
  // missing and duplicate fields
  expect_invalid(st_file(R"({"t":{"shape":[1],"data_offsets":[0,4]}})", zeros_bytes(4)), "tensor 't': missing 'dtype'");
  expect_invalid(st_file(R"({"t":{"dtype":"F32","data_offsets":[0,4]}})", zeros_bytes(4)),
                 "tensor 't': missing 'shape'");
  expect_invalid(st_file(R"({"t":{"dtype":"F32","shape":[1]}})", zeros_bytes(4)), "tensor 't': missing 'data_offsets'");
  expect_invalid(st_file(R"({"t":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})", zeros_bytes(4)),
                 "tensor 't': duplicate field 'dtype'");
}

TEST(Validation, SizesAndOverflow) {
  expect_invalid(st_file(one("\"F32\"", "[4294967296,4294967296]", "[0,0]")),
                 "tensor 't': the size of shape [4294967296, 4294967296] with dtype F32 overflows 64 bits");
  expect_invalid(st_file(one("\"BOOL\"", "[18446744073709551615]", "[0,0]")),
                 "tensor 't': the size of shape [18446744073709551615] with dtype BOOL overflows 64 bits");
  expect_invalid(st_file(one("\"F4\"", "[3]", "[0,1]"), zeros_bytes(1)),
                 "tensor 't': shape [3] with dtype F4 is not a whole number of bytes");
  expect_invalid(st_file(one("\"F32\"", "[1]", "[8,4]"), zeros_bytes(8)),
                 "tensor 't': data_offsets [8, 4] have begin > end");
  expect_invalid(st_file(one("\"F32\"", "[2,2]", "[0,12]"), zeros_bytes(12)),
                 "tensor 't': data_offsets [0, 12] hold 12 bytes, but shape [2, 2] with dtype F32 needs 16");
  expect_invalid(st_file(one("\"F64\"", "[]", "[0,4]"), zeros_bytes(4)),
                 "tensor 't': data_offsets [0, 4] hold 4 bytes, but shape [] with dtype F64 needs 8");
  expect_invalid(st_file(one("\"F32\"", "[2,2]", "[0,16]"), zeros_bytes(12)),
                 "tensor 't': data_offsets [0, 16] run past the end of the data buffer (12 bytes)");
  // A hostile size claim fails on the file size, before anything is allocated.
  expect_invalid(st_file(one("\"F64\"", "[1000000000000]", "[0,8000000000000]"), zeros_bytes(8)),
                 "tensor 't': data_offsets [0, 8000000000000] run past the end of the data buffer (8 bytes)");
  // Shapes with a 0 take no bytes but must still fit graft's int64 sizes and strides.
  expect_invalid(st_file(one("\"BOOL\"", "[0,9223372036854775808]", "[0,0]")),
                 "tensor 't': shape [0, 9223372036854775808] is too large for a graft tensor");
  expect_invalid(st_file(one("\"BOOL\"", "[0,4294967296,4294967296]", "[0,0]")),
                 "tensor 't': shape [0, 4294967296, 4294967296] is too large for a graft tensor");
  // ... and one that fits is fine.
  auto sd = from_bytes(st_file(one("\"BOOL\"", "[0,4294967296]", "[0,0]"))).tensors;
  EXPECT_EQ(sd["t"].sizes().vec(), (std::vector<int64_t>{0, 4294967296LL}));
}

TEST(Validation, OffsetsMustTileTheBuffer) {
  const std::string a = R"("a":{"dtype":"F32","shape":[1],"data_offsets":)";
  const std::string b = R"("b":{"dtype":"F32","shape":[1],"data_offsets":)";
  expect_invalid(st_file("{" + a + "[0,4]}," + b + "[8,12]}}", zeros_bytes(12)),
                 "tensor 'b': data_offsets [8, 12] leave bytes [4, 8) of the data buffer unused (tensors must cover "
                 "it from 0 with no gap)");
  expect_invalid(st_file("{" + a + "[4,8]}}", zeros_bytes(8)),
                 "tensor 'a': data_offsets [4, 8] leave bytes [0, 4) of the data buffer unused (tensors must cover "
                 "it from 0 with no gap)");
  const std::string a2 = R"("a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
  expect_invalid(st_file("{" + a2 + "," + R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", zeros_bytes(12)),
                 "tensor 'b': data_offsets [4, 12] overlap tensor 'a' at [0, 8]");
  expect_invalid(st_file("{" + a + "[0,4]}," + b + "[0,4]}}", zeros_bytes(4)),
                 "tensor 'b': data_offsets [0, 4] overlap tensor 'a' at [0, 4]");
  expect_invalid(st_file("{" + a + "[0,4]}}", zeros_bytes(6)),
                 "the tensors cover 4 bytes but the data buffer has 6 (trailing bytes belong to no tensor)");
  expect_invalid(st_file("{}", zeros_bytes(1)),
                 "the tensors cover 0 bytes but the data buffer has 1 (trailing bytes belong to no tensor)");
}

TEST(Validation, WhatAValidFileMayLookLike) {
  // Header order need not be offset order; the result keeps header order.
  const std::string header =
      R"( {"b":{"data_offsets":[4,8],"shape":[1],"dtype":"F32","extra":{"x":[1,{"y":[]}]}},)"
      "\n\t"
      R"("__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"z":null},)"
      R"("e1":{"dtype":"I64","shape":[0,3],"data_offsets":[8,8]},)"
      R"("e0":{"dtype":"I64","shape":[-0],"data_offsets":[0,0]}}    )";
  const std::string data = le_bytes(std::vector<float>{1.0f, 2.0f});
  auto file = from_bytes(st_file(header, data));
  EXPECT_EQ(file.tensors.keys(), (std::vector<std::string>{"b", "a", "e1", "e0"}));
  expect_tensor(file.tensors["a"], {1}, {1});
  expect_tensor(file.tensors["b"], {1}, {2});
  EXPECT_EQ(file.tensors["e1"].sizes().vec(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(file.tensors["e0"].sizes().vec(), (std::vector<int64_t>{0}));
  EXPECT_EQ(file.metadata, (safetensors::Metadata{{"k", "v"}}));
}

TEST(Validation, MessagesNameTheFileThatLoadRead) {
  ScratchDir dir;
  const std::string path = dir.file("bad.safetensors");
  write_all(path, st_file(one("\"F32\"", "[2]", "[0,8]"), zeros_bytes(4)));
  EXPECT_THROW_MSG(load(path), ValueError,
                   "invalid safetensors file '" + path +
                       "': tensor 't': data_offsets [0, 8] run past the end of the data buffer (4 bytes)");
}

// Every proper prefix of a valid file is rejected with the message its length calls for, through
// the file path (mmap) and from bytes.
TEST(Validation, TruncatedAtEveryLength) {
  ScratchDir dir;
  StateDict sd;
  sd.insert("w", arange(6, kFloat32).reshape({2, 3}));  // bytes [8, 32)
  sd.insert("step", scalar_tensor(int64_t{3}));         // bytes [0, 8)
  sd.insert("mask", tensor({1, 0, 1}, kBool));          // bytes [32, 35)
  const std::string full = safetensors::to_bytes(sd, {{"format", "pt"}});
  uint64_t n = 0;
  std::memcpy(&n, full.data(), 8);
  ASSERT_EQ(n % 8, 0u);
  ASSERT_EQ(full.size(), 8 + n + 35);
  const std::string path = dir.file("t.safetensors");
  for (size_t len = 0; len < full.size(); ++len) {
    const std::string cut = full.substr(0, len);
    std::string what;
    if (len < 8) {
      what = "the file is " + std::to_string(len) + " bytes long, too short for the 8-byte header length";
    } else if (len < 8 + n) {
      what =
          "header length " + std::to_string(n) + " runs past the end of the file (" + std::to_string(len) + " bytes)";
    } else {
      // Header order is w, step, mask: the first one that no longer fits is named.
      const uint64_t d = len - 8 - n;
      if (d < 32)
        what = "tensor 'w': data_offsets [8, 32] run past the end of the data buffer (" + std::to_string(d) + " bytes)";
      else
        what = "tensor 'mask': data_offsets [32, 35] run past the end of the data buffer (" + std::to_string(d) +
               " bytes)";
    }
    write_all(path, cut);
    SCOPED_TRACE("length " + std::to_string(len));
    EXPECT_THROW_MSG(load(path), ValueError, "invalid safetensors file '" + path + "': " + what);
    EXPECT_THROW_MSG(from_bytes(cut, "f.st"), ValueError, kPrefix + what);
  }
  // The whole file loads; one byte more does not.
  write_all(path, full);
  expect_same_state(sd, load(path));
  expect_invalid(full + "x",
                 "the tensors cover 35 bytes but the data buffer has 36 (trailing bytes belong to no tensor)");
}

}  // namespace
}  // namespace graft::testing

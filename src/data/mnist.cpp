// libtorch's MNIST dataset: the idx files read whole (big-endian headers, one byte per pixel and
// per label), as libtorch reads them.
#include "graft/data/datasets/mnist.h"

#include <cstdint>
#include <fstream>
#include <vector>

#include "graft/core/error.h"
#include "graft/ops/ops.h"

namespace graft::data::datasets {

namespace {

constexpr int32_t kImageMagic = 2051, kTargetMagic = 2049, kRows = 28, kColumns = 28;
constexpr int32_t kTrainSize = 60000, kTestSize = 10000;

int32_t read_int32(std::ifstream& stream) {
  unsigned char bytes[4] = {};
  stream.read(reinterpret_cast<char*>(bytes), 4);
  GRAFT_CHECK(stream.good(), RuntimeError, "MNIST: unexpected end of file while reading a header");
  return static_cast<int32_t>((uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
                              uint32_t{bytes[3]});
}
void expect_int32(std::ifstream& stream, int32_t expected) {
  const int32_t value = read_int32(stream);
  GRAFT_CHECK(value == expected, RuntimeError, "Expected to read number ", expected, " but found ", value, " instead");
}
std::ifstream open(const std::string& path, const char* what) {
  std::ifstream stream(path, std::ios::binary);
  GRAFT_CHECK(stream, RuntimeError, "Error opening ", what, " file at ", path);
  return stream;
}
// The next `count` bytes of the file (after its header).
std::vector<unsigned char> read_bytes(std::ifstream& stream, int64_t count) {
  std::vector<unsigned char> raw(static_cast<size_t>(count));
  stream.read(reinterpret_cast<char*>(raw.data()), count);
  GRAFT_CHECK(stream.gcount() == count, RuntimeError, "MNIST: the file holds ", stream.gcount(), " bytes of data, ",
              count, " expected");
  return raw;
}
// The bytes as a tensor of `sizes` and `dtype`, each divided by `scale` in that dtype (libtorch's
// byte tensor .to(kFloat32).div_(255)).
Tensor from_bytes(const std::vector<unsigned char>& raw, IntArrayRef sizes, DType dtype, double scale) {
  Tensor out = empty(sizes, dtype);
  GRAFT_DISPATCH_ALL(dtype, "MNIST", [&] {
    auto* p = static_cast<scalar_t*>(out.data_ptr());
    for (size_t i = 0; i < raw.size(); ++i) p[i] = static_cast<scalar_t>(raw[i]) / static_cast<scalar_t>(scale);
  });
  return out;
}
std::string join(const std::string& root, const char* name) {
  return root.empty() || root.back() == '/' ? root + name : root + "/" + name;
}

Tensor read_images(const std::string& root, bool train) {
  const std::string path = join(root, train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte");
  std::ifstream images = open(path, "images");
  const int32_t count = train ? kTrainSize : kTestSize;
  expect_int32(images, kImageMagic);
  expect_int32(images, count);
  expect_int32(images, kRows);
  expect_int32(images, kColumns);
  return from_bytes(read_bytes(images, int64_t{count} * kRows * kColumns), {count, 1, kRows, kColumns}, kFloat32,
                    255.0);
}
Tensor read_targets(const std::string& root, bool train) {
  const std::string path = join(root, train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte");
  std::ifstream targets = open(path, "targets");
  const int32_t count = train ? kTrainSize : kTestSize;
  expect_int32(targets, kTargetMagic);
  expect_int32(targets, count);
  return from_bytes(read_bytes(targets, count), {count}, kInt64, 1.0);
}

}  // namespace

MNIST::MNIST(const std::string& root, Mode mode)
    : images_(read_images(root, mode == Mode::kTrain)),
      targets_(read_targets(root, mode == Mode::kTrain)),
      is_train_(mode == Mode::kTrain) {}

Example<> MNIST::get(size_t index) {
  return {images_[static_cast<int64_t>(index)], targets_[static_cast<int64_t>(index)]};
}
std::optional<size_t> MNIST::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace graft::data::datasets

// Serializing a state dict: validation, the header (compact JSON as the reference writer emits
// it, padded with spaces to a multiple of 8), and the data, streamed into a ByteSink.
#include "writer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "graft/core/error.h"
#include "graft/core/grad_mode.h"
#include "header.h"
#include "utf8.h"

namespace graft::safetensors::detail {
namespace {

using ordered_json = nlohmann::ordered_json;

bool valid_utf8(const std::string& s) { return invalid_utf8_offset(s) == std::string_view::npos; }

void validate(const StateDict& tensors, const Metadata& metadata, const char* fn) {
  const std::string f = fn;
  // The names and metadata alone bound the header from below: refuse a header readers would
  // reject before escaping megabytes of text (the exact size is checked after the dump).
  uint64_t text_bytes = 0;
  for (const auto& item : tensors) text_bytes += item.key().size();
  for (const auto& [key, value] : metadata) text_bytes += key.size() + value.size();
  GRAFT_CHECK(text_bytes <= kMaxHeaderSize, ValueError, f, ": the tensor names and metadata take ", text_bytes,
              " bytes, over the ", kMaxHeaderSize, "-byte header limit safetensors readers accept");
  size_t position = 0;
  for (const auto& item : tensors) {
    const std::string& name = item.key();
    GRAFT_CHECK(!name.empty(), ValueError, f, ": tensor name at position ", position, " is empty");
    GRAFT_CHECK(name != "__metadata__", ValueError, f,
                ": tensor name '__metadata__' is reserved for the file's metadata");
    GRAFT_CHECK(valid_utf8(name), ValueError, f, ": tensor name '", name, "' is not valid UTF-8");
    const Tensor& t = item.value();
    GRAFT_CHECK(t.defined(), ValueError, f, ": tensor '", name, "' is undefined");
    GRAFT_CHECK(t.device().is_cpu(), ValueError, f, ": tensor '", name, "' is on ", t.device(),
                "; only CPU tensors can be saved");
    ++position;
  }
  for (const auto& [key, value] : metadata) {
    GRAFT_CHECK(valid_utf8(key), ValueError, f, ": metadata key '", key, "' is not valid UTF-8");
    GRAFT_CHECK(valid_utf8(value), ValueError, f, ": metadata value of key '", key, "' is not valid UTF-8");
  }
}

void put_le64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

WritePlan plan_write(const StateDict& tensors, const Metadata& metadata, const char* fn) {
  validate(tensors, metadata, fn);

  // Data order: widest element first (insertion order within a width), so that with the header
  // padded to 8 every tensor starts at a multiple of its element size.
  const auto& items = tensors.items();
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return items[a].value().element_size() > items[b].value().element_size();
  });
  std::vector<uint64_t> begin(items.size()), end(items.size());
  WritePlan plan;
  uint64_t offset = 0;
  for (size_t i : order) {
    begin[i] = offset;
    offset += items[i].value().nbytes();
    end[i] = offset;
    plan.data_order.push_back(&items[i].value());
  }

  // Header: "__metadata__" first (when there is any), then the tensors in insertion order. The
  // object is assembled entry by entry (an ordered_json object looks keys up linearly, which
  // would make a large state dict quadratic).
  std::string text = "{";
  auto add_entry = [&text](const std::string& key, const ordered_json& value) {
    if (text.size() > 1) text += ',';
    text += ordered_json(key).dump();
    text += ':';
    text += value.dump();
  };
  if (!metadata.empty()) add_entry("__metadata__", ordered_json(metadata));
  for (size_t i = 0; i < items.size(); ++i) {
    const Tensor& t = items[i].value();
    ordered_json shape = ordered_json::array();
    for (int64_t s : t.sizes()) shape.push_back(static_cast<uint64_t>(s));
    ordered_json entry = ordered_json::object();
    entry["dtype"] = st_dtype_name(st_dtype_for(t.dtype()));
    entry["shape"] = std::move(shape);
    entry["data_offsets"] = ordered_json::array({begin[i], end[i]});
    add_entry(items[i].key(), entry);
  }
  text += '}';
  text.append((8 - text.size() % 8) % 8, ' ');
  GRAFT_CHECK(text.size() <= kMaxHeaderSize, ValueError, fn, ": the header would be ", text.size(), " bytes, over the ",
              kMaxHeaderSize, "-byte limit safetensors readers accept");

  plan.prefix.reserve(8 + text.size());
  put_le64(plan.prefix, text.size());
  plan.prefix += text;
  plan.total_size = plan.prefix.size() + offset;
  return plan;
}

void write_file_bytes(const WritePlan& plan, ByteSink& sink) {
  sink.write(plan.prefix.data(), plan.prefix.size());
  for (const Tensor* p : plan.data_order) {
    const Tensor& t = *p;
    if (t.numel() == 0) continue;
    if (t.is_contiguous()) {
      sink.write(static_cast<const char*>(t.data_ptr()), t.nbytes());
    } else {
      NoGradGuard no_grad;
      const Tensor c = t.detach().contiguous();
      sink.write(static_cast<const char*>(c.data_ptr()), c.nbytes());
    }
  }
}

}  // namespace graft::safetensors::detail

namespace graft::safetensors {

namespace {
class StringSink final : public detail::ByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void write(const char* data, size_t n) override { out_.append(data, n); }

 private:
  std::string& out_;
};
}  // namespace

std::string to_bytes(const StateDict& tensors, const Metadata& metadata) {
  const detail::WritePlan plan = detail::plan_write(tensors, metadata, "to_bytes");
  std::string out;
  out.reserve(plan.total_size);
  StringSink sink(out);
  detail::write_file_bytes(plan, sink);
  return out;
}

}  // namespace graft::safetensors

// The header JSON -> RawHeader, through nlohmann's SAX interface: the header is checked against
// the schema while it streams, so no JSON document is built (memory stays proportional to the
// number of tensors, whatever the nesting of a hostile header) and the first violation stops
// the parse with a message naming the tensor and the field.
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include "graft/core/error.h"
#include "header.h"

namespace graft::safetensors::detail {

std::string invalid_file_prefix(const std::string& source) { return "invalid safetensors file '" + source + "': "; }

void fail_invalid(const std::string& source, const std::string& what) {
  throw ValueError(invalid_file_prefix(source) + what);
}

namespace {

using json = nlohmann::json;

/// Builds the RawHeader; on the first violation records `error` and returns false (which stops
/// nlohmann's parser).
class HeaderSax {
 public:
  RawHeader header;
  std::string error;

  bool null() { return value(Kind::Null, "null"); }
  bool boolean(bool b) { return value(Kind::Other, b ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) {
    // nlohmann reports non-negative integers as unsigned; a signed one is negative or "-0".
    if (v >= 0) return number_unsigned(static_cast<uint64_t>(v));
    return value(Kind::Other, std::to_string(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    unsigned_value_ = v;
    return value(Kind::Unsigned, std::to_string(v));
  }
  bool number_float(json::number_float_t, const json::string_t& text) { return value(Kind::Other, text); }
  bool string(json::string_t& s) {
    string_value_ = &s;
    return value(Kind::String, "a string");
  }
  bool binary(json::binary_t&) { return value(Kind::Other, "binary data"); }
  bool start_object(std::size_t) { return value(Kind::Object, "an object"); }
  bool start_array(std::size_t) { return value(Kind::Array, "an array"); }

  bool key(json::string_t& k) {
    switch (state_) {
      case State::TopKey:
        if (k == "__metadata__") {
          if (seen_metadata_) return fail("duplicate '__metadata__'");
          seen_metadata_ = true;
          return move_to(State::MetaValue);
        }
        if (k.empty()) return fail("empty tensor name");
        if (!names_.insert(k).second) return fail("duplicate tensor name '" + k + "'");
        entry_ = RawEntry{};
        entry_.name = k;
        have_dtype_ = have_shape_ = have_offsets_ = false;
        return move_to(State::EntryValue);
      case State::MetaKey:
        if (header.metadata.count(k)) return fail("'__metadata__' has duplicate key '" + k + "'");
        meta_key_ = k;
        return move_to(State::MetaString);
      case State::EntryKey: {
        bool* seen = nullptr;
        if (k == "dtype") {
          field_ = Field::Dtype;
          seen = &have_dtype_;
        } else if (k == "shape") {
          field_ = Field::Shape;
          seen = &have_shape_;
        } else if (k == "data_offsets") {
          field_ = Field::Offsets;
          seen = &have_offsets_;
        } else {
          field_ = Field::Unknown;
        }
        if (seen) {
          if (*seen) return fail(tensor_prefix() + "duplicate field '" + k + "'");
          *seen = true;
        }
        return move_to(State::FieldValue);
      }
      case State::Skip:
        return true;
      default:
        return fail("malformed header");  // the JSON grammar puts keys only in the states above
    }
  }

  bool end_object() {
    switch (state_) {
      case State::TopKey:
        return move_to(State::Done);
      case State::MetaKey:
        return move_to(State::TopKey);
      case State::EntryKey:
        if (!have_dtype_) return fail(tensor_prefix() + "missing 'dtype'");
        if (!have_shape_) return fail(tensor_prefix() + "missing 'shape'");
        if (!have_offsets_) return fail(tensor_prefix() + "missing 'data_offsets'");
        header.entries.push_back(std::move(entry_));
        return move_to(State::TopKey);
      case State::Skip:
        return end_skipped();
      default:
        return fail("malformed header");
    }
  }

  bool end_array() {
    switch (state_) {
      case State::ShapeItem:
        return move_to(State::EntryKey);
      case State::OffsetItem:
        if (offsets_seen_ != 2)
          return fail(tensor_prefix() + "'data_offsets' must have exactly 2 entries, found " +
                      std::to_string(offsets_seen_));
        return move_to(State::EntryKey);
      case State::Skip:
        return end_skipped();
      default:
        return fail("malformed header");
    }
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep the position and reason.
    if (auto p = what.find("] "); what.rfind("[json.exception.", 0) == 0 && p != std::string::npos)
      what = what.substr(p + 2);
    return fail("header is not valid JSON: " + what);
  }

 private:
  enum class State {
    Start,       // before the top-level value
    TopKey,      // in the top-level object: a key or its end
    MetaValue,   // after "__metadata__": an object or null
    MetaKey,     // in "__metadata__": a key or its end
    MetaString,  // after a metadata key: a string
    EntryValue,  // after a tensor name: an object
    EntryKey,    // in a tensor entry: a field name or its end
    FieldValue,  // after a field name: its value
    ShapeItem,   // in "shape": integers or the end
    OffsetItem,  // in "data_offsets": integers or the end
    Skip,        // inside the value of a field graft does not know
    Done,
  };
  enum class Kind { Null, Unsigned, String, Object, Array, Other };
  enum class Field { Dtype, Shape, Offsets, Unknown };

  static constexpr const char* kShapeMust = "'shape' must be an array of non-negative integers";
  static constexpr const char* kOffsetsMust = "'data_offsets' must be an array of two non-negative integers";

  std::string tensor_prefix() const { return "tensor '" + entry_.name + "': "; }
  /// Accepts the event: the parse goes on in state `next`.
  bool move_to(State next) {
    state_ = next;
    return true;
  }
  bool fail(std::string what) {
    if (error.empty()) error = std::move(what);
    return false;
  }
  /// A value that must be of kind `expected`: moves to `next`, or fails with `what`.
  bool expect(Kind kind, Kind expected, std::string what, State next) {
    if (kind != expected) return fail(std::move(what));
    return move_to(next);
  }
  bool end_skipped() { return move_to(--skip_depth_ == 0 ? State::EntryKey : State::Skip); }

  // Every value event (scalars and the start of objects and arrays) goes through here.
  bool value(Kind kind, const std::string& found) {
    const std::string found_part = " (found " + found + ")";
    switch (state_) {
      case State::Start:
        return expect(kind, Kind::Object, "header is not a JSON object" + found_part, State::TopKey);
      case State::MetaValue:
        if (kind == Kind::Null) return move_to(State::TopKey);
        return expect(kind, Kind::Object, "'__metadata__' must be an object mapping strings to strings" + found_part,
                      State::MetaKey);
      case State::MetaString:
        if (kind != Kind::String)
          return fail("'__metadata__' value of key '" + meta_key_ + "' must be a string" + found_part);
        header.metadata.emplace(std::move(meta_key_), std::move(*string_value_));
        return move_to(State::MetaKey);
      case State::EntryValue:
        return expect(kind, Kind::Object,
                      tensor_prefix() + "entry must be an object with dtype, shape and data_offsets" + found_part,
                      State::EntryKey);
      case State::FieldValue:
        return field_value(kind, found_part);
      case State::ShapeItem:
        if (kind != Kind::Unsigned) return fail(tensor_prefix() + kShapeMust + found_part);
        entry_.shape.push_back(unsigned_value_);
        return true;
      case State::OffsetItem:
        if (kind != Kind::Unsigned) return fail(tensor_prefix() + kOffsetsMust + found_part);
        if (offsets_seen_ == 2) return fail(tensor_prefix() + "'data_offsets' must have exactly 2 entries, found more");
        (offsets_seen_++ == 0 ? entry_.begin : entry_.end) = unsigned_value_;
        return true;
      case State::Skip:
        if (kind == Kind::Object || kind == Kind::Array) ++skip_depth_;
        return true;
      default:
        return fail("malformed header");  // keys precede values in objects; one top value
    }
  }

  bool field_value(Kind kind, const std::string& found_part) {
    switch (field_) {
      case Field::Dtype:
        if (kind != Kind::String) return fail(tensor_prefix() + "'dtype' must be a string" + found_part);
        entry_.dtype = std::move(*string_value_);
        return move_to(State::EntryKey);
      case Field::Shape:
        return expect(kind, Kind::Array, tensor_prefix() + kShapeMust + found_part, State::ShapeItem);
      case Field::Offsets:
        offsets_seen_ = 0;
        return expect(kind, Kind::Array, tensor_prefix() + kOffsetsMust + found_part, State::OffsetItem);
      case Field::Unknown: {
        // Fields graft does not know are ignored, as the reference readers do.
        const bool nested = kind == Kind::Object || kind == Kind::Array;
        if (nested) skip_depth_ = 1;
        return move_to(nested ? State::Skip : State::EntryKey);
      }
    }
    return fail("malformed header");
  }

  State state_ = State::Start;
  Field field_ = Field::Unknown;
  RawEntry entry_;
  bool have_dtype_ = false, have_shape_ = false, have_offsets_ = false;
  int offsets_seen_ = 0;
  size_t skip_depth_ = 0;
  bool seen_metadata_ = false;
  std::string meta_key_;
  std::unordered_set<std::string> names_;
  uint64_t unsigned_value_ = 0;
  json::string_t* string_value_ = nullptr;
};

}  // namespace

RawHeader parse_header_json(std::string_view header, const std::string& source) {
  HeaderSax sax;
  bool ok = false;
  try {
    ok = json::sax_parse(header.data(), header.data() + header.size(), &sax, nlohmann::json::input_format_t::json,
                         /*strict=*/true, /*ignore_comments=*/false);
  } catch (const json::exception& e) {
    fail_invalid(source, std::string("header is not valid JSON: ") + e.what());
  }
  if (!ok) fail_invalid(source, sax.error.empty() ? "header is not valid JSON" : sax.error);
  return std::move(sax.header);
}

std::string shape_str(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace graft::safetensors::detail

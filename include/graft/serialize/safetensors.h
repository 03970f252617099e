#pragma once
/// Checkpoints in Hugging Face's safetensors format (docs/checkpoints.md): files that PyTorch
/// (`safetensors.torch.load_file`) and the Hugging Face tools read, and that graft reads back.
///
/// Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor name to
/// {"dtype", "shape", "data_offsets"} (plus an optional "__metadata__" string map), then the
/// tensors' bytes, little-endian and row-major, back to back.
///
/// Errors:
///  * a file that breaks the format (bad header length, header that is not a UTF-8 JSON object,
///    missing or ill-typed fields, unknown dtype, offsets that do not tile the data buffer, sizes
///    that disagree with shape and dtype, ...) raises graft::ValueError naming the file, the
///    tensor and what is wrong;
///  * a valid file holding a dtype graft cannot represent (U64, F8_*, C64, F4, F6_*) raises
///    graft::TypeError naming the tensor and the dtype;
///  * an operating-system failure (open, read, write, fsync, rename) raises graft::RuntimeError
///    with the path and the system's message;
///  * bad arguments to save (undefined tensor, empty name, ...) raise graft::ValueError.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "graft/core/ordered_dict.h"

namespace graft {
namespace safetensors {

/// The file's "__metadata__": free-form string -> string (e.g. {"format": "pt"}).
using Metadata = std::map<std::string, std::string>;

/// A loaded file: its tensors in header order and its metadata (empty when the file has none).
struct SafetensorsFile {
  StateDict tensors;
  Metadata metadata;
};

/// Serializes `tensors` (and `metadata`, written when non-empty) to the bytes of a safetensors
/// file. Bool, Int32, Int64, Float32 and Float64 are stored as BOOL, I32, I64, F32, F64;
/// non-contiguous tensors are written contiguously. The header lists tensors in insertion order;
/// the data is laid out widest dtype first (insertion order within a width) so every tensor is
/// aligned to its element size, and the header is padded with spaces to a multiple of 8.
std::string to_bytes(const StateDict& tensors, const Metadata& metadata = {});

/// Parses and validates the bytes of a safetensors file; `source` names it in error messages.
/// Every tensor is copied into memory graft owns (nothing refers to `bytes` afterwards) and does
/// not require grad. F16 and BF16 are converted exactly to float32 (graft has no half types);
/// U8, I8, I16, U16 to int32; U32 to int64; BOOL bytes other than 0 read as true.
SafetensorsFile from_bytes(std::string_view bytes, const std::string& source = "<bytes>");

/// Writes `tensors` to `path` atomically: the bytes go to a temporary file in the same directory,
/// which is fsync'd and renamed over `path`, then the directory is fsync'd. On any failure
/// (including an exception while writing) the temporary file is removed and a previous file at
/// `path` is left untouched. A symlink at `path` is followed (its target is replaced); an
/// existing file's permission bits are kept.
void save(const StateDict& tensors, const std::string& path, const Metadata& metadata = {});

/// Reads the file at `path` (memory-mapped) with from_bytes' validation and conversions.
/// The file must not be truncated by another process while it is being read.
SafetensorsFile load_file(const std::string& path);

/// load_file(path).tensors.
StateDict load(const std::string& path);

namespace detail {
/// Test-only fault injection for save(). See set_save_fault_for_testing.
enum class SaveFault : uint8_t {
  None,         ///< no fault
  WriteError,   ///< the nth write(2) of the temporary file fails with EIO
  WriteThrows,  ///< the nth write of the temporary file throws std::runtime_error
  FsyncError,   ///< fsync of the temporary file fails with EIO
  RenameError,  ///< renaming the temporary file over the target fails with EIO
};
/// Arms `fault` for the next save() calls: WriteError/WriteThrows fire on the `nth` (1-based)
/// write of one save; the fault fires once and then disarms itself. SaveFault::None disarms.
/// Not thread-safe: for tests that prove a failed save leaves the previous file intact.
void set_save_fault_for_testing(SaveFault fault, int nth = 1);
/// How many write(2) calls the most recent save() made to its temporary file.
int last_save_write_count_for_testing();
}  // namespace detail

}  // namespace safetensors

/// graft::save / graft::load: the safetensors checkpoint functions above.
using safetensors::load;
using safetensors::save;

}  // namespace graft

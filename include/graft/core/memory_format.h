#pragma once
/// MemoryFormat: the order in memory that clone, contiguous and is_contiguous are asked for
/// (PyTorch's torch.contiguous_format, torch.preserve_format, torch.channels_last and
/// torch.channels_last_3d), and the stride rules behind it.
#include <ostream>

#include "graft/core/int_array.h"

namespace graft {

/// Row-major (Contiguous); the input's own order (Preserve: clone's default, as PyTorch's);
/// channels innermost for rank-4 NCHW (ChannelsLast, memory order N, H, W, C) and rank-5 NCDHW
/// (ChannelsLast3d) tensors.
enum class MemoryFormat { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

/// Python's name of a format: "contiguous_format", "preserve_format", "channels_last",
/// "channels_last_3d".
const char* memory_format_name(MemoryFormat f);
std::ostream& operator<<(std::ostream& os, MemoryFormat f);

/// The strides of a fresh tensor of `sizes` laid out as `f` (Contiguous or a channels-last
/// format); a channels-last format of the wrong rank is refused with PyTorch's RuntimeError
/// ("required rank 4 tensor to use channels_last format"). Preserve has no strides of its own.
Shape strides_for_memory_format(IntArrayRef sizes, MemoryFormat f);

/// Whether `sizes`/`strides` are laid out as `f`, size-1 dims' strides ignored (PyTorch's
/// is_contiguous(memory_format): Preserve asks for row-major).
bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat f);

/// PyTorch's is_non_overlapping_and_dense: the elements fill one block of memory exactly once,
/// in some order of the dims (dims of size 0 or 1 ignored).
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);

/// Dense strides that keep the order of `strides` (PyTorch's infer_dense_strides, the layout
/// preserve_format gives a tensor with gaps or overlap): dims sorted from the smallest stride
/// out, a stride-0 dim keeping its row-major place, equal strides putting the smaller size first.
Shape infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);

}  // namespace graft

// The memory API of graft/memory.h for graft.cpu and graft.cuda: statistics, the cache, the
// per-process cap, snapshots and the history ring, per device. The Python modules
// (graft/cpu/memory.py, graft/cuda/memory.py) give them PyTorch's names and argument checks;
// these private functions take a device and do the work.
#include "python_common.h"

#include "graft/memory.h"

namespace graft::python {
namespace {

/// PyTorch's frame record ({"name", "filename", "line"}) for one symbolized C++ frame; graft
/// has the symbol and offset but no source position.
py::list frames_list(const std::shared_ptr<const alloc::AllocContext>& ctx) {
  py::list frames;
  if (!ctx) return frames;
  for (const std::string& f : ctx->symbolized_frames())
    frames.append(py::dict(py::arg("name") = f, py::arg("filename") = "", py::arg("line") = 0));
  return frames;
}

py::object op_of(const std::shared_ptr<const alloc::AllocContext>& ctx) {
  if (!ctx || ctx->op.empty()) return py::none();
  return py::str(ctx->op);
}

/// One segment as torch.cuda.memory_snapshot() shapes it, plus graft's "category" and "op"
/// per block.
py::dict segment_dict(const alloc::SegmentInfo& s, Device device) {
  py::list blocks;
  for (const alloc::BlockInfo& b : s.blocks) {
    const bool inactive = std::string(b.state) == "inactive";
    py::dict d;
    d["address"] = b.address;
    d["size"] = b.size;
    d["requested_size"] = b.requested_size;
    d["state"] = b.state;
    d["frames"] = frames_list(b.context);
    d["category"] = inactive ? py::object(py::none()) : py::object(py::str(memory_category_name(b.category)));
    d["op"] = op_of(b.context);
    blocks.append(std::move(d));
  }
  py::dict seg;
  seg["device"] = device.is_cpu() ? 0 : int(device.index());
  seg["address"] = s.address;
  seg["total_size"] = s.total_size;
  seg["allocated_size"] = s.allocated_size;
  seg["active_size"] = s.active_size;
  seg["requested_size"] = s.requested_size;
  seg["stream"] = 0;
  seg["segment_type"] = s.segment_type;
  seg["segment_pool_id"] = py::make_tuple(0, 0);
  seg["is_expandable"] = false;
  seg["frames"] = py::list();
  seg["blocks"] = std::move(blocks);
  return seg;
}

}  // namespace

void init_memory(py::module_& m) {
  // Every function takes the device first, as a graft.device, a string or an int (CUDA index).
  m.def("_memory_stats", [](py::handle d) { return memory_stats(to_device(d)); });
  m.def("_memory_allocated", [](py::handle d) { return memory_allocated(to_device(d)); });
  m.def("_max_memory_allocated", [](py::handle d) { return max_memory_allocated(to_device(d)); });
  m.def("_memory_reserved", [](py::handle d) { return memory_reserved(to_device(d)); });
  m.def("_max_memory_reserved", [](py::handle d) { return max_memory_reserved(to_device(d)); });
  m.def("_reset_peak_memory_stats", [](py::handle d) { reset_peak_memory_stats(to_device(d)); });
  m.def("_reset_accumulated_memory_stats", [](py::handle d) { reset_accumulated_memory_stats(to_device(d)); });
  m.def(
      "_estimate_memory",
      [](py::function step, int steps) {
        MemoryEstimate e;
        {
          // estimates run one at a time: wait for another thread's without holding the GIL
          py::gil_scoped_release unlocked;
          e = estimate_memory(
              [&] {
                py::gil_scoped_acquire gil;
                step();
              },
              steps);
        }
        py::dict d;
        d["peak_allocated"] = e.peak_allocated;
        d["peak_reserved"] = e.peak_reserved;
        d["allocated_before"] = e.allocated_before;
        d["allocated_after"] = e.allocated_after;
        d["by_category"] = e.by_category;
        d["steps"] = e.steps;
        return d;
      },
      py::arg("step"), py::arg("steps"));
  m.def("_empty_cache", [](py::handle d) { empty_cache(to_device(d)); });
  m.def(
      "_memory_summary", [](py::handle d, bool abbreviated) { return memory_summary(to_device(d), abbreviated); },
      py::arg("device"), py::arg("abbreviated"));
  m.def("_memory_snapshot", [](py::handle d) {
    const Device device = to_device(d);
    py::list out;
    for (const alloc::SegmentInfo& s : memory_snapshot(device)) out.append(segment_dict(s, device));
    return out;
  });
  m.def("_memory_by_category", [](py::handle d) { return memory_by_category(to_device(d)); });
  m.def("_set_per_process_memory_fraction",
        [](double fraction, py::handle d) { set_per_process_memory_fraction(fraction, to_device(d)); });
  m.def("_set_per_process_memory_limit",
        [](std::optional<int64_t> bytes, py::handle d) { set_per_process_memory_limit(bytes, to_device(d)); });
  m.def("_mem_get_info", [](py::handle d) { return mem_get_info(to_device(d)); });
  m.def(
      "_record_memory_history",
      [](bool enabled, size_t max_entries, bool cpp_stacks, py::handle d) {
        record_memory_history(enabled, max_entries, cpp_stacks, to_device(d));
      },
      py::arg("enabled"), py::arg("max_entries"), py::arg("cpp_stacks"), py::arg("device"));
  m.def("_memory_snapshot_json", [](py::handle d) { return memory_snapshot_json(to_device(d)); });
  m.def(
      "_dump_snapshot", [](py::handle path, py::handle d) { dump_snapshot(path_arg(path), to_device(d)); },
      py::arg("path"), py::arg("device"));
  m.def("_set_allocator_settings",
        [](const std::string& settings, py::handle d) { set_allocator_settings(settings, to_device(d)); });
  m.def("_allocator_backend", [](py::handle d) { return allocator_backend(to_device(d)); });
}

}  // namespace graft::python

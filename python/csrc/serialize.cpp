// graft._C._serialize: the safetensors reader and writer (include/graft/serialize/safetensors.h)
// for graft.save / graft.load. Tensors cross as ordered (name, tensor) lists so that the header
// keeps the caller's order; the metadata is the file's "__metadata__" string map. File and
// parsing work runs with the GIL released; writes to a path are atomic.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "python_common.h"

namespace graft::python {
namespace {

using Items = std::vector<std::pair<std::string, Tensor>>;

StateDict to_state_dict(const Items& items) {
  StateDict sd("Tensor name");
  for (const auto& [name, t] : items) sd.insert(name, t);
  return sd;
}

py::tuple to_python(const safetensors::SafetensorsFile& file) {
  py::list items;
  for (const auto& item : file.tensors) items.append(py::make_tuple(item.key(), item.value()));
  py::dict metadata;
  for (const auto& [k, v] : file.metadata) metadata[py::str(k)] = py::str(v);
  return py::make_tuple(items, metadata);
}

}  // namespace

void init_serialize(py::module_& m) {
  auto s = m.def_submodule("_serialize", "safetensors files for graft.save / graft.load");
  s.def(
      "save_file",
      [](const Items& items, py::handle path_obj, const safetensors::Metadata& metadata) {
        const std::string path = path_arg(path_obj);
        const StateDict sd = to_state_dict(items);
        ReleaseGil nogil;
        safetensors::save(sd, path, metadata);
      },
      py::arg("items"), py::arg("path"), py::arg("metadata"),
      "Writes [(name, tensor)] and the metadata to `path` atomically (temporary file, fsync, rename).");
  s.def(
      "to_bytes",
      [](const Items& items, const safetensors::Metadata& metadata) {
        const StateDict sd = to_state_dict(items);
        std::string bytes;
        {
          ReleaseGil nogil;
          bytes = safetensors::to_bytes(sd, metadata);
        }
        return py::bytes(bytes);
      },
      py::arg("items"), py::arg("metadata"), "The bytes of a safetensors file holding [(name, tensor)].");
  s.def(
      "load_file",
      [](py::handle path_obj) {
        const std::string path = path_arg(path_obj);
        safetensors::SafetensorsFile file;
        {
          ReleaseGil nogil;
          file = safetensors::load_file(path);
        }
        return to_python(file);
      },
      py::arg("path"), "Reads and validates `path`: ([(name, tensor)], metadata).");
  s.def(
      "from_bytes",
      [](const py::buffer& data, const std::string& source) {
        const py::buffer_info info = data.request();
        GRAFT_CHECK(info.ndim <= 1 && info.itemsize == 1 && (info.ndim == 0 || info.size <= 1 || info.strides[0] == 1),
                    TypeError, "graft.load: expected contiguous bytes from the file");
        const std::string_view bytes(static_cast<const char*>(info.ptr), static_cast<size_t>(info.size));
        safetensors::SafetensorsFile file;
        {
          ReleaseGil nogil;
          file = safetensors::from_bytes(bytes, source);
        }
        return to_python(file);
      },
      py::arg("data"), py::arg("source"), "Parses and validates the bytes of a safetensors file.");
}

}  // namespace graft::python

// graft.dtype (singletons graft.float32, graft.int64, ...) and graft.device.
#include "python_common.h"

namespace graft::python {
namespace {

/// The Python-side object behind graft.float32 etc.; one instance per DType.
struct DTypeObject {
  DType dtype;
};

constexpr DType kAllDTypes[] = {kBool, kInt32, kInt64, kFloat32, kFloat64, kFloat16, kBFloat16};
py::handle g_dtype_objects[kNumDTypes];
py::handle g_dtype_class;

/// The Python-side object behind graft.contiguous_format etc.; one instance per MemoryFormat.
struct MemoryFormatObject {
  MemoryFormat format;
};
constexpr MemoryFormat kAllMemoryFormats[] = {MemoryFormat::Contiguous, MemoryFormat::Preserve,
                                              MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d};
py::handle g_memory_format_objects[4];
py::handle g_memory_format_class;

}  // namespace

/// graft.memory_format and its four singletons (PyTorch's torch.contiguous_format, ...).
static void init_memory_formats(py::module_& m) {
  py::class_<MemoryFormatObject> mf(m, "memory_format");
  mf.def("__repr__", [](const MemoryFormatObject& f) {
      return std::string("graft.") + memory_format_name(f.format);
    }).def("__reduce__", [](const MemoryFormatObject& f) { return std::string(memory_format_name(f.format)); });
  mf.attr("__module__") = "graft";
  g_memory_format_class = mf;
  for (MemoryFormat f : kAllMemoryFormats) {
    py::object o = py::cast(MemoryFormatObject{f});
    g_memory_format_objects[static_cast<int>(f)] = o.release();  // immortal singletons
    m.attr(memory_format_name(f)) = py::handle(g_memory_format_objects[static_cast<int>(f)]);
  }
}

static const char* device_type_name(const Device& d) { return d.is_cpu() ? "cpu" : d.is_meta() ? "meta" : "cuda"; }

void init_dtype_device(py::module_& m) {
  py::class_<DTypeObject> dt(m, "dtype");
  dt.def_property_readonly("is_floating_point", [](const DTypeObject& d) { return is_floating_point(d.dtype); })
      .def_property_readonly("itemsize", [](const DTypeObject& d) { return element_size(d.dtype); })
      .def_property_readonly("is_signed", [](const DTypeObject& d) { return d.dtype != kBool; })
      .def("__repr__", [](const DTypeObject& d) { return std::string("graft.") + dtype_name(d.dtype); })
      .def("__reduce__", [](const DTypeObject& d) { return std::string(dtype_name(d.dtype)); });
  dt.attr("__module__") = "graft";
  g_dtype_class = dt;
  for (DType d : kAllDTypes) {
    py::object o = py::cast(DTypeObject{d});
    g_dtype_objects[static_cast<int>(d)] = o.release();  // immortal singletons
    m.attr(dtype_name(d)) = py::handle(g_dtype_objects[static_cast<int>(d)]);
  }
  // PyTorch's aliases
  m.attr("float") = m.attr("float32");
  m.attr("double") = m.attr("float64");
  m.attr("long") = m.attr("int64");
  m.attr("int") = m.attr("int32");
  m.attr("half") = m.attr("float16");

  init_memory_formats(m);

  py::class_<Device> dev(m, "device");
  dev.def(py::init([](py::handle spec) { return to_device(spec); }), py::arg("type"))
      .def(py::init([](const std::string& type, int index) {
             GRAFT_CHECK(type.find(':') == std::string::npos, RuntimeError,
                         "type (string) must not include an index because index was passed explicitly: ", type);
             GRAFT_CHECK(index >= 0, RuntimeError, "Device index must not be negative");
             Device d(type);
             d.set_index(static_cast<int8_t>(index));
             return d;
           }),
           py::arg("type"), py::arg("index"))
      .def_property_readonly("type", [](const Device& d) { return device_type_name(d); })
      .def_property_readonly("index",
                             [](const Device& d) -> py::object {
                               if (d.index() < 0) return py::none();
                               return py::int_(d.index());
                             })
      .def("__str__", [](const Device& d) { return d.str(); })
      .def("__repr__",
           [](const Device& d) {
             std::string s = std::string("device(type='") + device_type_name(d) + "'";
             if (d.index() >= 0) s += ", index=" + std::to_string(d.index());
             return s + ")";
           })
      .def("__eq__",
           [](const Device& a, py::handle b) {
             if (!py::isinstance<Device>(b) && !py::isinstance<py::str>(b)) return false;
             Device o = to_device(b);
             return a.type() == o.type() && a.index() == o.index();
           })
      .def("__hash__", [](const Device& d) { return static_cast<int>(d.type()) * 1000 + d.index(); });
  dev.attr("__module__") = "graft";
  m.def("_get_default_device", [] { return default_device(); });
  m.def("_set_default_device", [](py::handle d) { set_default_device(to_device(d)); });
}

Device to_device(py::handle o) {
  if (py::isinstance<Device>(o)) return o.cast<Device>();
  if (py::isinstance<py::str>(o)) return Device(o.cast<std::string>());
  if (PyLong_Check(o.ptr()) && !PyBool_Check(o.ptr())) return Device(DeviceType::CUDA, o.cast<int8_t>());
  throw TypeError(detail::str("expected a device (graft.device, str or int), got ",
                              std::string(py::str(o.get_type().attr("__name__")))));
}

}  // namespace graft::python

namespace pybind11::detail {

bool type_caster<graft::DType>::load(handle src, bool) {
  using graft::python::g_dtype_class;
  if (!src || Py_TYPE(src.ptr()) != reinterpret_cast<PyTypeObject*>(g_dtype_class.ptr())) return false;
  value = src.cast<graft::python::DTypeObject&>().dtype;
  return true;
}

handle type_caster<graft::DType>::cast(graft::DType d, return_value_policy, handle) {
  return graft::python::g_dtype_objects[static_cast<int>(d)].inc_ref();
}

bool type_caster<graft::MemoryFormat>::load(handle src, bool) {
  using graft::python::g_memory_format_class;
  if (!src || Py_TYPE(src.ptr()) != reinterpret_cast<PyTypeObject*>(g_memory_format_class.ptr())) return false;
  value = src.cast<graft::python::MemoryFormatObject&>().format;
  return true;
}

handle type_caster<graft::MemoryFormat>::cast(graft::MemoryFormat f, return_value_policy, handle) {
  return graft::python::g_memory_format_objects[static_cast<int>(f)].inc_ref();
}

}  // namespace pybind11::detail

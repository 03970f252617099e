// graft._C._data: the C++ pieces graft.utils.data uses. A context manager that tags the
// allocations of the current thread with an allocator category (batches are "data_batch"), and
// graft's RandomSampler (include/graft/data/sampler.h), whose epochs the Python samplers and
// random_split draw their permutations from.
#include <optional>
#include <string>
#include <vector>

#include "python_common.h"

namespace graft::python {
namespace {

MemoryCategory category_from_name(const std::string& name) {
  for (int i = 0; i < kNumMemoryCategories; ++i) {
    const auto c = static_cast<MemoryCategory>(i);
    if (name == memory_category_name(c)) return c;
  }
  throw ValueError(detail::str("unknown memory category '", name, "'"));
}

/// `with memory_category("data_batch"):` - a MemoryCategoryGuard for the with-block (on the
/// thread that entered it, which is the thread that leaves it).
class CategoryScope {
 public:
  explicit CategoryScope(const std::string& name) : category_(category_from_name(name)) {}
  void enter() {
    GRAFT_CHECK(!guard_, RuntimeError, "memory_category: this scope is already entered");
    guard_.emplace(category_);
  }
  void exit() { guard_.reset(); }

 private:
  MemoryCategory category_;
  std::optional<MemoryCategoryGuard> guard_;
};

}  // namespace

void init_data(py::module_& m) {
  auto d = m.def_submodule("_data", "C++ helpers of graft.utils.data");
  py::class_<CategoryScope>(d, "memory_category",
                            "Tags the allocations this thread makes inside the with-block with an allocator category "
                            "(\"data_batch\", \"optimizer_state\", ...).")
      .def(py::init<const std::string&>(), py::arg("name"))
      .def("__enter__",
           [](py::object self) {
             self.cast<CategoryScope&>().enter();
             return self;
           })
      .def("__exit__", [](CategoryScope& s, py::args) { s.exit(); });
  py::class_<data::RandomSampler>(d, "RandomSampler",
                                  "graft's random sampler: one permutation (or draws with replacement) per epoch. "
                                  "With a seed its epochs follow from it; without, each epoch draws its seed from "
                                  "graft's default generator (graft.manual_seed).")
      .def(py::init<int64_t, bool, std::optional<int64_t>, std::optional<uint64_t>>(), py::arg("data_size"),
           py::arg("replacement") = false, py::arg("num_samples") = py::none(), py::arg("seed") = py::none())
      .def("next_epoch", &data::RandomSampler::next_epoch, "The indices of the next epoch (a list of ints).")
      .def("__len__", &data::RandomSampler::size);
}

}  // namespace graft::python

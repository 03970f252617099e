#pragma once
/// PyTorch's Python argument parser, for the generated bindings (python/op_bindings.inc): an op
/// is bound once with the signatures of its overloads, written as PyTorch's schema
/// ("sum(Tensor input, *, ScalarType? dtype=None)"); a call takes the first overload that its
/// positional and keyword arguments fit, or raises PyTorch's TypeError: the one wrong argument
/// when there is one overload ("mm(): argument 'mat2' (position 2) must be Tensor, not int"),
/// the list of signatures when there are several ("sum() received an invalid combination of
/// arguments - got (Tensor, foo=int), but expected one of: ..."). See docs/notes/ops.md.
#include <optional>
#include <string>
#include <vector>

#include "python_common.h"

namespace graft::python {

/// The argument types a signature may name (PyTorch's schema types), and None where `?` follows.
enum class ArgType {
  Tensor,
  Scalar,
  Int,
  Float,
  Bool,
  IntList,
  DType,
  String,
  TensorList,
  IndexList,
  MemoryFormat,
  Generator
};

/// One parameter of a signature.
struct ArgParam {
  ArgType type = ArgType::Tensor;
  std::string name;
  py::str key;                ///< the name as a Python string, to look keywords up with
  bool optional = false;      ///< `Type?`: None is taken
  bool keyword_only = false;  ///< after `*`
  int list_size = 0;          ///< `int[N]`: a single int is taken as N copies (PyTorch's int[1] dim)
  py::object default_value;   ///< null when the parameter is required
};

/// One overload: the op's name and its parameters (a method's without self).
struct ArgSignature {
  std::string name;
  std::vector<ArgParam> params;
  size_t max_positional = 0;      ///< the parameters before `*`
  bool varargs_int_list = false;  ///< one positional int list: view(2, 3) as view((2, 3))
  int index = 0;                  ///< its place in the op's list (a method lacks the Number-self ones)
  bool hidden = false;            ///< "[hidden] ..." : tried, but never named in a TypeError (PyTorch's
                                  ///< add(Tensor, Number): its errors name the Tensor overload only)
  /// "(Tensor input, *, graft.dtype dtype)", as PyTorch lists it in its TypeError.
  std::string describe() const;
};

/// The arguments of a call, matched to one overload's parameters (defaults filled in).
class ParsedArgs {
 public:
  ParsedArgs(int overload, std::vector<py::object> values) : overload_(overload), values_(std::move(values)) {}
  /// Which signature matched (its position in the parser's list).
  int overload() const { return overload_; }
  bool is_none(size_t i) const { return values_[i].is_none(); }
  Tensor tensor(size_t i) const;
  /// An undefined Tensor for None.
  Tensor optional_tensor(size_t i) const;
  Scalar scalar(size_t i) const;
  std::optional<Scalar> optional_scalar(size_t i) const;
  int64_t int64(size_t i) const;
  std::optional<int64_t> optional_int64(size_t i) const;
  double float64(size_t i) const;
  std::optional<double> optional_float64(size_t i) const;
  bool boolean(size_t i) const;
  /// Empty for None (an `int[]?`: sum's dim=None, every dim).
  std::vector<int64_t> int_list(size_t i) const;
  DType dtype(size_t i) const;
  std::optional<DType> optional_dtype(size_t i) const;
  MemoryFormat memory_format(size_t i) const;
  std::optional<MemoryFormat> optional_memory_format(size_t i) const;
  std::string string(size_t i) const;
  std::optional<std::string> optional_string(size_t i) const;
  std::vector<Tensor> tensor_list(size_t i) const;
  std::vector<std::optional<Tensor>> index_list(size_t i) const;
  /// A graft.Generator, or nullopt for None.
  std::optional<graft::Generator> optional_generator(size_t i) const;

 private:
  int overload_;
  std::vector<py::object> values_;
};

/// The parser of one op: its overloads' signatures, read once.
class ArgParser {
 public:
  /// `signatures`: "name(Type name[=default], ..., *, Type name=default)", one per overload,
  /// tried in order ("[hidden] " before one keeps it out of the TypeError); `method`: the first
  /// parameter is self and is not in the Python call (overloads whose first is not a Tensor are
  /// the function's only).
  ArgParser(const std::vector<std::string>& signatures, bool method);
  /// The arguments of a call (`self` already taken off for a method), or PyTorch's TypeError.
  ParsedArgs parse(const py::args& args, const py::kwargs& kwargs) const;

 private:
  std::vector<ArgSignature> signatures_;
};

/// What a generated binding runs once the parser has picked an overload: the op called with the
/// parsed arguments; `self` is the method's tensor, null for the function form (whose first
/// argument is then parsed too).
using ParsedCall = py::object (*)(const ParsedArgs& parsed, const Tensor* self);

/// Binds an op through the parser: graft.<name>(...) when `function`, Tensor.<name>(...) when
/// `cls` is given, both from the same `signatures`.
void bind_parsed(py::module_& m, py::class_<TensorImpl, intrusive_ptr<TensorImpl>>* cls, bool function,
                 const char* name, const std::vector<std::string>& signatures, ParsedCall call);

/// One op of the generated bindings (python/op_bindings.inc, from src/ops/ops.yaml).
struct GeneratedBinding {
  const char* name;
  const char* where;  ///< "both" (graft.name and Tensor.name), "torch", "method" or "nn" (_C._nn.name)
  std::vector<std::string> signatures;  ///< the overloads', in the order the parser tries them
  ParsedCall call;                      ///< runs the overload the parser picked
};

}  // namespace graft::python

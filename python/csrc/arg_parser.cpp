// PyTorch's Python argument parser for the generated bindings (arg_parser.h): signatures read
// once, calls matched against them, PyTorch's TypeErrors when none fits.
#include "arg_parser.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace graft::python {
namespace {

// ---- reading a signature ----

const std::map<std::string, ArgType>& type_names() {
  static const std::map<std::string, ArgType> names{{"Tensor", ArgType::Tensor},
                                                    {"Scalar", ArgType::Scalar},
                                                    {"int", ArgType::Int},
                                                    {"float", ArgType::Float},
                                                    {"bool", ArgType::Bool},
                                                    {"int[]", ArgType::IntList},
                                                    {"ScalarType", ArgType::DType},
                                                    {"str", ArgType::String},
                                                    {"Tensor[]", ArgType::TensorList},
                                                    {"Tensor?[]", ArgType::IndexList},
                                                    {"MemoryFormat", ArgType::MemoryFormat},
                                                    {"Generator", ArgType::Generator}};
  return names;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// A default as the Python object it stands for: None, True, False, an int, a float, a quoted
// string, a bracketed list of ints ([0, 1]), or a memory format's name (contiguous_format).
py::object default_of(const std::string& text) {
  if (text == "None") return py::none();
  for (MemoryFormat f :
       {MemoryFormat::Contiguous, MemoryFormat::Preserve, MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d})
    if (text == memory_format_name(f)) return py::cast(f);
  if (text == "True" || text == "False") return py::bool_(text == "True");
  if (text.size() >= 2 && (text.front() == '\'' || text.front() == '"'))
    return py::str(text.substr(1, text.size() - 2));
  if (text.front() == '[') {
    py::list items;
    std::stringstream in(text.substr(1, text.size() - 2));
    for (std::string item; std::getline(in, item, ',');)
      if (!trim(item).empty()) items.append(py::int_(std::stoll(trim(item))));
    return py::tuple(items);
  }
  if (text.find_first_of(".e") != std::string::npos) return py::float_(std::stod(text));
  return py::int_(std::stoll(text));
}

// "int[2]? name=None" -> the parameter.
ArgParam param_of(const std::string& text, bool keyword_only) {
  ArgParam p;
  p.keyword_only = keyword_only;
  const size_t eq = text.find('=');
  const std::string decl = trim(text.substr(0, eq));
  if (eq != std::string::npos) p.default_value = default_of(trim(text.substr(eq + 1)));
  const size_t space = decl.rfind(' ');
  std::string type = decl.substr(0, space);
  p.name = decl.substr(space + 1);
  p.key = py::str(p.name);
  if (type.back() == '?') {
    p.optional = true;
    type.pop_back();
  }
  const size_t bracket = type.find('[');
  if (bracket != std::string::npos && type.substr(0, bracket) == "int" && type[bracket + 1] != ']') {
    p.list_size = std::stoi(type.substr(bracket + 1));
    type = "int[]";
  }
  const auto it = type_names().find(type);
  GRAFT_CHECK(it != type_names().end(), RuntimeError, "graft's argument parser: unknown type '", type, "' in '", text,
              "'");
  p.type = it->second;
  // PyTorch's parser takes None for an int list defaulting to [] (amax's dim, max_pool2d's stride)
  if (p.type == ArgType::IntList && p.default_value && py::isinstance<py::tuple>(p.default_value) &&
      py::len(p.default_value) == 0)
    p.optional = true;
  return p;
}

// "name(Type a, *, Type b=default)" -> the signature; for a method, without its self, or none
// when the first parameter is not a tensor (that overload is the function's only).
std::optional<ArgSignature> signature_of(const std::string& text, bool method) {
  ArgSignature s;
  const size_t open = text.find('('), close = text.rfind(')');
  s.name = text.substr(0, open);
  std::stringstream in(text.substr(open + 1, close - open - 1));
  bool keyword_only = false;
  for (std::string item; std::getline(in, item, ',');) {
    item = trim(item);
    if (item.empty()) continue;
    if (item == "*") {
      keyword_only = true;
      continue;
    }
    s.params.push_back(param_of(item, keyword_only));
  }
  if (method) {  // a method's overloads have a tensor self, `input` (sub(Number self, Tensor other) is
                 // graft.sub's only); where(Tensor condition, Tensor input, ...) is x.where(condition, ...)
    auto self = std::find_if(s.params.begin(), s.params.end(),
                             [](const ArgParam& p) { return p.type == ArgType::Tensor && p.name == "input"; });
    if (self == s.params.end()) return std::nullopt;
    s.params.erase(self);
  }
  for (const ArgParam& p : s.params) s.max_positional += p.keyword_only ? 0 : 1;
  s.varargs_int_list = s.max_positional == 1 && s.params[0].type == ArgType::IntList;
  return s;
}

// ---- matching an argument ----

// A type as PyTorch's messages name it: its tp_name ("int", "numpy.bool_"), graft's own types
// by their public names ("Tensor", "graft.dtype").
std::string python_type_name(py::handle o) {
  if (is_tensor(o)) return "Tensor";
  const std::string name = Py_TYPE(o.ptr())->tp_name;
  return name.rfind("graft._C.", 0) == 0 ? "graft." + name.substr(9) : name;
}

std::string described_type(const ArgParam& p) {
  switch (p.type) {
    case ArgType::Tensor:
      return "Tensor";
    case ArgType::Scalar:
      return "Number";
    case ArgType::Int:
      return "int";
    case ArgType::Float:
      return "float";
    case ArgType::Bool:
      return "bool";
    case ArgType::IntList:
      return "tuple of ints";
    case ArgType::DType:
      return "graft.dtype";
    case ArgType::MemoryFormat:
      return "graft.memory_format";
    case ArgType::Generator:
      return "graft.Generator";
    case ArgType::String:
      return "str";
    case ArgType::TensorList:
    case ArgType::IndexList:
      return "tuple of Tensors";
  }
  return "?";
}

bool is_number_tensor(py::handle o, bool integral) {
  if (!is_tensor(o)) return false;
  const Tensor t = as_tensor_unchecked(o);
  return t.dim() == 0 && !t.requires_grad() && (!integral || (!is_floating_point(t.dtype()) && t.dtype() != kBool));
}
bool is_numpy_bool(py::handle o) { return std::string(Py_TYPE(o.ptr())->tp_name) == "numpy.bool_"; }
// An int as PyTorch's parser takes one: a Python or NumPy integer (not a bool), or a 0-d integer
// tensor that does not require grad.
bool is_int(py::handle o) {
  if (PyBool_Check(o.ptr()) || is_numpy_bool(o)) return false;
  if (PyLong_Check(o.ptr())) return true;
  if (is_number(o)) return PyIndex_Check(o.ptr());
  return is_number_tensor(o, true);
}
bool is_sequence(py::handle o) { return PyTuple_Check(o.ptr()) || PyList_Check(o.ptr()); }

// An int's value (NumPy integers by __index__); `overflow` is set for one beyond int64.
int64_t index_value(py::handle o, int& overflow) {
  py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr()));
  if (!index) throw py::error_already_set();
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}
// An int's value, or PyTorch's RuntimeError for one beyond int64.
int64_t int64_of(py::handle o) {
  int overflow = 0;
  const int64_t v = index_value(o, overflow);
  GRAFT_CHECK(overflow == 0, RuntimeError, "Overflow when unpacking long");
  return v;
}
// An element of an int list that fits int64 (PyTorch refuses a larger one as of the wrong type).
bool is_int64_element(py::handle o) {
  if (!is_int(o)) return false;
  if (is_tensor(o)) return true;
  int overflow = 0;
  index_value(o, overflow);
  return overflow == 0;
}
// The parameter of `s` named `key`, or null.
const ArgParam* param_named(const ArgSignature& s, const std::string& key) {
  for (const ArgParam& p : s.params)
    if (p.name == key) return &p;
  return nullptr;
}

bool matches(const ArgParam& p, py::handle o) {
  if (o.is_none()) return p.optional;
  switch (p.type) {
    case ArgType::Tensor:
      return is_tensor(o);
    case ArgType::Scalar:
      return is_number(o) || is_number_tensor(o, false);
    case ArgType::Int:
      return is_int(o);
    case ArgType::Float:
      return (is_number(o) && !is_numpy_bool(o)) || PyLong_Check(o.ptr()) || is_number_tensor(o, false);
    case ArgType::Bool:
      return PyBool_Check(o.ptr()) || is_numpy_bool(o);
    case ArgType::IntList:  // PyTorch looks at the first element only; the rest when converting
      if (p.list_size > 0 && is_int(o)) return true;
      return is_sequence(o) && (py::len(o) == 0 || is_int(py::reinterpret_borrow<py::sequence>(o)[0]));
    case ArgType::DType:
      return py::detail::make_caster<DType>().load(o, false);
    case ArgType::MemoryFormat:
      return py::detail::make_caster<MemoryFormat>().load(o, false);
    case ArgType::Generator:
      return py::isinstance<Generator>(o);
    case ArgType::String:
      return PyUnicode_Check(o.ptr());
    case ArgType::TensorList:  // the elements are checked by check_list_elements, as PyTorch's
      return is_sequence(o);
    case ArgType::IndexList:
      if (!is_sequence(o)) return false;
      for (py::handle item : o)
        if (!item.is_none() && !is_tensor(item)) return false;
      return true;
  }
  return false;
}

// A list whose first element fits but a later one does not (any element, for a tensor list):
// PyTorch's TypeError, whichever overload is being tried (it is raised while converting).
void check_list_elements(const ArgSignature& s, const ArgParam& p, py::handle o) {
  if (p.type == ArgType::TensorList && is_sequence(o)) {
    size_t index = 0;
    for (py::handle item : o) {
      GRAFT_CHECK(is_tensor(item), TypeError, "expected Tensor as element ", index, " in argument ", &p - &s.params[0],
                  ", but got ", python_type_name(item));
      ++index;
    }
  }
  if (p.type != ArgType::IntList || !is_sequence(o)) return;
  size_t pos = 0;
  for (py::handle item : o) {
    ++pos;
    GRAFT_CHECK(is_int64_element(item), TypeError, s.name, "(): argument '", p.name, "' must be ", described_type(p),
                ", but found element of type ", python_type_name(item), " at pos ", pos);
  }
}

// ---- one signature against a call ----

/// Why a call does not fit a signature, as PyTorch says it when that is the only candidate.
std::string missing_message(const ArgSignature& s, const std::vector<std::string>& missing) {
  std::ostringstream out;
  out << s.name << "() missing " << missing.size() << " required positional argument"
      << (missing.size() == 1 ? "s" : "") << ": ";  // sic: PyTorch's plural is reversed
  for (size_t i = 0; i < missing.size(); ++i) out << (i ? ", " : "") << '"' << missing[i] << '"';
  return out.str();
}

// The parameters' values for a call, or false; with `raise`, PyTorch's TypeError instead of false.
bool fit(const ArgSignature& s, const py::args& args, const py::kwargs& kwargs, std::vector<py::object>& values,
         bool raise) {
  const size_t nargs = args.size();
  // PyTorch's view(2, 3): the positional ints are the list when the first one is an int. Not when
  // a bool follows: PyTorch's int[1] dims take the first int alone, and a bool after it is an
  // overload's (var(0, False) is var(dim=0, unbiased=False), not var((0, False)))
  bool varargs = s.varargs_int_list && nargs >= 1 && is_int(args[0]);
  for (size_t i = 1; varargs && i < nargs; ++i) varargs = !PyBool_Check(args[i].ptr()) && !is_numpy_bool(args[i]);
  if (nargs > s.max_positional && !varargs) {
    GRAFT_CHECK(!raise, TypeError, s.name, "() takes ", s.max_positional, " positional argument",
                s.max_positional == 1 ? "" : "s", " but ", nargs, " ", nargs == 1 ? "was" : "were", " given");
    return false;
  }
  values.assign(s.params.size(), py::object());
  size_t used_keywords = 0;
  std::vector<std::string> missing;
  for (size_t i = 0; i < s.params.size(); ++i) {
    const ArgParam& p = s.params[i];
    const bool by_keyword = kwargs.size() > 0 && kwargs.contains(p.key);
    py::object o;
    if ((i == 0 && varargs) || (i < nargs && !varargs)) {
      o = varargs ? py::reinterpret_borrow<py::object>(args) : py::reinterpret_borrow<py::object>(args[i]);
      GRAFT_CHECK(!(raise && by_keyword), TypeError, s.name, "() got multiple values for argument '", p.name, "'");
      if (by_keyword) return false;
    } else if (by_keyword) {
      o = kwargs[p.key];
      ++used_keywords;
    }
    if (!o) {
      if (!p.default_value) missing.push_back(p.name);
      values[i] = p.default_value;
      continue;
    }
    if (!matches(p, o)) {
      GRAFT_CHECK(!raise, TypeError, s.name, "(): argument '", p.name, "'",
                  by_keyword ? "" : detail::str(" (position ", i + 1, ")"), " must be ", described_type(p), ", not ",
                  python_type_name(o));
      return false;
    }
    check_list_elements(s, p, o);
    values[i] = o;
  }
  if (!missing.empty()) {
    GRAFT_CHECK(!raise, TypeError, missing_message(s, missing));
    return false;
  }
  if (used_keywords < kwargs.size()) {
    for (auto item : kwargs) {
      const std::string key = py::str(item.first);
      GRAFT_CHECK(!raise || param_named(s, key), TypeError, s.name, "() got an unexpected keyword argument '", key,
                  "'");
    }
    return false;
  }
  return true;
}

// ---- the TypeError when no overload fits ----

// "(Tensor, foo=int)": what the call gave, as PyTorch shows it.
std::string given_types(const py::args& args, const py::kwargs& kwargs) {
  std::ostringstream out;
  out << "(";
  for (size_t i = 0; i < args.size(); ++i) out << (i ? ", " : "") << python_type_name(args[i]);
  size_t k = 0;
  for (auto item : kwargs)
    out << (args.size() + k++ ? ", " : "") << std::string(py::str(item.first)) << "=" << python_type_name(item.second);
  if (args.size() == 0 && kwargs.size() > 0) out << ", ";  // sic: PyTorch's text
  out << ")";
  return out.str();
}

// Why `s` did not take the call, given only when the call has as many arguments as the
// signature has entries, its `*` counted (PyTorch's rule: conv2d(x, w, stride='a') lists its
// overloads without reasons): keywords it does not have; or the arguments with the ones of the
// wrong type between !marks! (keywords as name=type; a positional argument past the `*` is wrong).
std::string mismatch_reason(const ArgSignature& s, const py::args& args, const py::kwargs& kwargs) {
  const size_t entries = s.params.size() + (s.max_positional < s.params.size() ? 1 : 0);  // the `*` is one
  const size_t given = args.size() + kwargs.size();
  if (given != entries && !(s.varargs_int_list && given > entries)) return "";
  std::string unknown, types;
  bool wrong = false;
  auto show = [&](const ArgParam* p, py::handle o, const std::string& label) {
    const bool fits = p && matches(*p, o);
    wrong = wrong || !fits;
    types += (types.empty() ? "" : ", ") + (fits ? label : "!" + label + "!");
  };
  for (size_t i = 0; i < args.size(); ++i)
    show(i < s.max_positional ? &s.params[i] : nullptr, args[i], python_type_name(args[i]));
  for (auto item : kwargs) {
    const std::string key = py::str(item.first);
    const ArgParam* param = param_named(s, key);
    if (!param) unknown += (unknown.empty() ? "" : ", ") + key;
    show(param, item.second, key + "=" + python_type_name(item.second));
  }
  if (!unknown.empty()) return "      didn't match because some of the keywords were incorrect: " + unknown + "\n";
  if (!wrong) return "";
  return "      didn't match because some of the arguments have invalid types: (" + types + ")\n";
}

}  // namespace

std::string ArgSignature::describe() const {
  std::ostringstream out;
  out << "(";
  bool star = false;
  for (size_t i = 0; i < params.size(); ++i) {
    out << (i ? ", " : "");
    if (params[i].keyword_only && !star) {
      out << "*, ";
      star = true;
    }
    out << described_type(params[i]) << " " << params[i].name;
  }
  out << ")";
  return out.str();
}

ArgParser::ArgParser(const std::vector<std::string>& signatures, bool method) {
  const std::string hidden_mark = "[hidden] ";
  for (size_t i = 0; i < signatures.size(); ++i) {
    const bool hidden = signatures[i].rfind(hidden_mark, 0) == 0;
    std::optional<ArgSignature> s = signature_of(signatures[i].substr(hidden ? hidden_mark.size() : 0), method);
    if (!s) continue;  // not the method's
    s->index = static_cast<int>(i);
    s->hidden = hidden;
    signatures_.push_back(std::move(*s));
  }
}

ParsedArgs ArgParser::parse(const py::args& args, const py::kwargs& kwargs) const {
  std::vector<py::object> values;
  for (size_t i = 0; i < signatures_.size(); ++i)
    if (fit(signatures_[i], args, kwargs, values, false)) return ParsedArgs(signatures_[i].index, std::move(values));
  // PyTorch's rule: when only one overload takes as many arguments as were given, its own
  // error; otherwise the list of them all (hidden overloads are neither)
  std::vector<const ArgSignature*> shown, plausible;
  for (const ArgSignature& s : signatures_)
    if (!s.hidden) shown.push_back(&s);
  const size_t given = args.size() + kwargs.size();
  for (const ArgSignature* s : shown) {
    size_t required = 0;
    for (const ArgParam& p : s->params) required += p.default_value ? 0 : 1;
    if (given >= required && given <= s->params.size()) plausible.push_back(s);
  }
  if (shown.size() == 1 || plausible.size() == 1)
    fit(shown.size() == 1 ? *shown[0] : *plausible[0], args, kwargs, values, true);
  std::ostringstream out;
  out << signatures_[0].name << "() received an invalid combination of arguments - got " << given_types(args, kwargs)
      << ", but expected one of:\n";
  for (const ArgSignature* s : shown) out << " * " << s->describe() << "\n" << mismatch_reason(*s, args, kwargs);
  throw TypeError(out.str());
}

// ---- converting the matched values ----

Tensor ParsedArgs::tensor(size_t i) const { return as_tensor_unchecked(values_[i]); }
Tensor ParsedArgs::optional_tensor(size_t i) const { return is_none(i) ? Tensor() : tensor(i); }
Scalar ParsedArgs::scalar(size_t i) const { return to_scalar(values_[i]); }
std::optional<Scalar> ParsedArgs::optional_scalar(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<Scalar>(scalar(i));
}
int64_t ParsedArgs::int64(size_t i) const {
  if (is_tensor(values_[i])) return tensor(i).item<int64_t>();
  return int64_of(values_[i]);
}
std::optional<int64_t> ParsedArgs::optional_int64(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<int64_t>(int64(i));
}
double ParsedArgs::float64(size_t i) const {
  if (is_tensor(values_[i])) return to_scalar(values_[i]).to_double();
  const double v = PyFloat_AsDouble(values_[i].ptr());  // an int beyond int64 too, as PyTorch's parser
  if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  return v;
}
std::optional<double> ParsedArgs::optional_float64(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<double>(float64(i));
}
bool ParsedArgs::boolean(size_t i) const { return PyObject_IsTrue(values_[i].ptr()) == 1; }
std::vector<int64_t> ParsedArgs::int_list(size_t i) const {
  if (is_none(i)) return {};  // int[1]? dim=None: every dim
  if (!is_sequence(values_[i])) return {int64(i)};
  std::vector<int64_t> out;
  for (py::handle item : values_[i])
    out.push_back(is_tensor(item) ? as_tensor_unchecked(item).item<int64_t>() : int64_of(item));
  return out;
}
DType ParsedArgs::dtype(size_t i) const { return values_[i].cast<DType>(); }
MemoryFormat ParsedArgs::memory_format(size_t i) const { return values_[i].cast<MemoryFormat>(); }
std::optional<MemoryFormat> ParsedArgs::optional_memory_format(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<MemoryFormat>(memory_format(i));
}
std::optional<DType> ParsedArgs::optional_dtype(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<DType>(dtype(i));
}
std::optional<Generator> ParsedArgs::optional_generator(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<Generator>(values_[i].cast<Generator>());
}
std::string ParsedArgs::string(size_t i) const { return values_[i].cast<std::string>(); }
std::optional<std::string> ParsedArgs::optional_string(size_t i) const {
  return is_none(i) ? std::nullopt : std::optional<std::string>(string(i));
}
std::vector<Tensor> ParsedArgs::tensor_list(size_t i) const {
  std::vector<Tensor> out;
  for (py::handle item : values_[i]) out.push_back(as_tensor_unchecked(item));
  return out;
}
std::vector<std::optional<Tensor>> ParsedArgs::index_list(size_t i) const {
  std::vector<std::optional<Tensor>> out;
  for (py::handle item : values_[i])
    out.push_back(item.is_none() ? std::nullopt : std::optional<Tensor>(as_tensor_unchecked(item)));
  return out;
}

void bind_parsed(py::module_& m, py::class_<TensorImpl, intrusive_ptr<TensorImpl>>* cls, bool function,
                 const char* name, const std::vector<std::string>& signatures, ParsedCall call) {
  // the parsers live as long as the functions holding them (freed with the module, GIL held)
  if (function) {
    auto parser = std::make_shared<const ArgParser>(signatures, false);
    m.def(name, [parser, call](const py::args& args, const py::kwargs& kwargs) {
      SiteCallScope one_site;
      return call(parser->parse(args, kwargs), nullptr);
    });
  }
  if (cls) {
    auto parser = std::make_shared<const ArgParser>(signatures, true);
    cls->def(name, [parser, call, method = std::string(name)](py::handle self, const py::args& args,
                                                              const py::kwargs& kwargs) {
      check_self(self, method.c_str());
      SiteCallScope one_site;
      const Tensor t = as_tensor_unchecked(self);
      return call(parser->parse(args, kwargs), &t);
    });
  }
}

}  // namespace graft::python

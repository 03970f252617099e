// Tensor methods: metadata helpers and forwarding to the functional ops.
#include "graft/ops/ops.h"
#include "op_util.h"

namespace graft {

int64_t Tensor::size(int64_t d) const {
  GRAFT_CHECK(defined(), ValueError, "size: undefined tensor");
  GRAFT_CHECK(dim() > 0, IndexError, "dimension specified as ", d, " but tensor has no dimensions");
  return sizes()[detail::wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  GRAFT_CHECK(defined(), ValueError, "stride: undefined tensor");
  GRAFT_CHECK(dim() > 0, IndexError, "dimension specified as ", d, " but tensor has no dimensions");
  return strides()[detail::wrap_dim(d, dim(), "stride")];
}

template <class T>
T* Tensor::data_ptr() const {
  GRAFT_CHECK(defined(), ValueError, "data_ptr: undefined tensor");
  GRAFT_CHECK(dtype() == dtype_of<T>::value, TypeError, "expected scalar type ", dtype_name(dtype_of<T>::value),
              " but found ", dtype_name(dtype()));
  // typed access means reading or writing values, which a meta tensor does not have
  GRAFT_CHECK(!device().is_meta(), NotImplementedError, "Cannot copy out of meta tensor; no data!");
  return static_cast<T*>(impl_->data());
}
template float* Tensor::data_ptr<float>() const;
template double* Tensor::data_ptr<double>() const;
template int64_t* Tensor::data_ptr<int64_t>() const;
template int32_t* Tensor::data_ptr<int32_t>() const;
template bool* Tensor::data_ptr<bool>() const;
template Half* Tensor::data_ptr<Half>() const;
template BFloat16* Tensor::data_ptr<BFloat16>() const;

Scalar Tensor::item() const {
  GRAFT_CHECK(defined(), ValueError, "item: undefined tensor");
  GRAFT_CHECK(numel() == 1, RuntimeError, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  if (device().is_meta()) kernel::not_implemented_for("aten::_local_scalar_dense", device());
  return GRAFT_DISPATCH_ALL_AND_REDUCED(dtype(), "item",
                                        [&]() -> Scalar { return *static_cast<const scalar_t*>(impl_->data()); });
}
template <class T>
T Tensor::item() const {
  return item().to<T>();
}
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template int32_t Tensor::item<int32_t>() const;
template bool Tensor::item<bool>() const;
template Half Tensor::item<Half>() const;
template BFloat16 Tensor::item<BFloat16>() const;

template <class T>
std::vector<T> Tensor::to_vector() const {
  GRAFT_CHECK(defined(), ValueError, "to_vector: undefined tensor");
  GRAFT_CHECK(!device().is_meta(), NotImplementedError, "Cannot copy out of meta tensor; no data!");
  Tensor c = detail::new_empty(sizes(), dtype_of<T>::value, kCPU);
  kernel::copy(c, *this);
  const T* p = static_cast<const T*>(c.data_ptr());
  return std::vector<T>(p, p + numel());
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<int32_t> Tensor::to_vector<int32_t>() const;
template std::vector<Half> Tensor::to_vector<Half>() const;
template std::vector<BFloat16> Tensor::to_vector<BFloat16>() const;

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedType";
  static const char* names[] = {"BoolType",   "IntType",  "LongType",    "FloatType",
                                "DoubleType", "HalfType", "BFloat16Type"};
  return std::string(device().is_meta() ? "Meta" : "CPU") + names[static_cast<int>(dtype())];
}

Tensor Tensor::sum(std::optional<DType> dt) const { return graft::sum(*this, dt); }
Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<DType> dt) const {
  GRAFT_CHECK(!dims.empty(), ValueError, "sum: dims must not be empty (use sum() for a full reduction)");
  return graft::sum(*this, dims, keepdim, dt);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return mul(pow(b, -1.0), a); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
bool Tensor::equal(const Tensor& other) const { return graft::equal(*this, other); }
Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }

void Tensor::set_data(const Tensor& new_data) {
  GRAFT_CHECK(defined() && new_data.defined(), RuntimeError, "set_data: both tensors must be defined");
  GRAFT_CHECK(!is_view(), RuntimeError, "set_data: cannot replace the data of a view");
  impl_->set_data(*new_data.impl());
}

}  // namespace graft

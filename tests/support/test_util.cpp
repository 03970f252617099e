#include "test_util.h"

namespace graft::testing {

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

void expect_tensor(const Tensor& t, std::vector<int64_t> sizes, std::vector<double> vals, double tol) {
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(t.sizes().vec(), sizes);
  auto v = values(t);
  ASSERT_EQ(v.size(), vals.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], vals[i], tol) << "at flat index " << i;
}

WarningCapture::WarningCapture() : msgs_(std::make_shared<std::vector<std::string>>()) {
  auto m = msgs_;
  autograd::set_warning_handler([m](const std::string& s) { m->push_back(s); });
}
WarningCapture::~WarningCapture() { autograd::set_warning_handler(nullptr); }

}  // namespace graft::testing

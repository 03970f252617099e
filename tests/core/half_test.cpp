// The 16-bit floats: their bits, their rounding, their limits, and PyTorch's promotion.
#include <cmath>

#include "graft/core/half.h"
#include "support/test_util.h"

using namespace graft;

TEST(Half, BitsAndRoundingToNearestEven) {
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.0f).bits, 0xc000);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);             // halfway to the next binade: rounds to inf
  EXPECT_EQ(Half(65519.0f).bits, 0x7bff);             // below halfway: the largest finite
  EXPECT_EQ(Half(1.0f + 0x1p-11f).bits, 0x3c00);      // a tie: to even (down)
  EXPECT_EQ(Half(1.0f + 3 * 0x1p-11f).bits, 0x3c02);  // a tie: to even (up)
  EXPECT_EQ(Half(0x1p-24f).bits, 0x0001);             // the smallest subnormal
  EXPECT_EQ(Half(0x1p-25f).bits, 0x0000);             // a tie with zero: to even
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  for (uint32_t b = 0; b < 0x10000; ++b) {  // every half is exact in float, and comes back
    const Half h = Half::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (!std::isnan(f)) {
      EXPECT_EQ(Half(f).bits, b);
    }
  }
}

TEST(BFloat16, BitsAndRoundingToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16(3.140625f).bits, 0x4049);
  EXPECT_EQ(BFloat16(1.0f + 0x1p-8f).bits, 0x3f80);      // a tie: to even (down)
  EXPECT_EQ(BFloat16(1.0f + 3 * 0x1p-8f).bits, 0x3f82);  // a tie: to even (up)
  EXPECT_EQ(BFloat16(1.0f + 0x1p-8f + 0x1p-20f).bits, 0x3f81);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).bits, 0x7f80);  // rounds up to inf
  EXPECT_EQ(BFloat16(NAN).bits, 0x7fc0);
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0x0001)), 0x1p-133f);
  EXPECT_EQ(BFloat16(70000.0f).bits, BFloat16(70144.0f).bits);  // PyTorch's fill_(70000) gives 70144
}

TEST(ReducedFloat, Limits) {
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Half>::max()), 65504.0f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Half>::lowest()), -65504.0f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Half>::epsilon()), 0x1p-10f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Half>::min()), 0x1p-14f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<BFloat16>::epsilon()), 0x1p-7f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<BFloat16>::min()), 0x1p-126f);
  EXPECT_TRUE(std::isinf(static_cast<float>(std::numeric_limits<BFloat16>::infinity())));
}

TEST(ReducedFloat, PromotionAsPyTorch) {
  EXPECT_EQ(promote_types(kFloat16, kBFloat16), kFloat32);
  EXPECT_EQ(promote_types(kBFloat16, kFloat16), kFloat32);
  EXPECT_EQ(promote_types(kFloat16, kFloat32), kFloat32);
  EXPECT_EQ(promote_types(kBFloat16, kFloat64), kFloat64);
  EXPECT_EQ(promote_types(kInt64, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kBool, kBFloat16), kBFloat16);
  EXPECT_EQ(promote_types(kFloat16, kFloat16), kFloat16);
  EXPECT_EQ(promote_types(kInt32, kInt64), kInt64);
  EXPECT_TRUE(is_floating_point(kFloat16) && is_floating_point(kBFloat16));
  EXPECT_EQ(element_size(kFloat16), 2u);
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_STREQ(scalar_type_name(kFloat16), "Half");
}

TEST(ReducedFloat, ScalarChecksAsC10) {
  EXPECT_THROW_MSG(Scalar(70000).checked_to<Half>(), RuntimeError,
                   "value cannot be converted to type c10::Half without overflow");
  EXPECT_THROW_MSG(Scalar(65520.0).checked_to<Half>(), RuntimeError,
                   "value cannot be converted to type c10::Half without overflow");
  EXPECT_EQ(Scalar(65504.0).checked_to<Half>().bits, 0x7bff);
  EXPECT_EQ(Scalar(70000).checked_to<BFloat16>().bits, BFloat16(70144.0f).bits);
  EXPECT_THROW_MSG(Scalar(1e39).checked_to<BFloat16>(), RuntimeError,
                   "value cannot be converted to type c10::BFloat16 without overflow");
  EXPECT_TRUE(std::isinf(static_cast<float>(Scalar(INFINITY).checked_to<Half>())));
}

TEST(DefaultDtype, SetAndRefused) {
  EXPECT_EQ(default_dtype(), kFloat32);
  set_default_dtype(kFloat64);
  EXPECT_EQ(default_dtype(), kFloat64);
  EXPECT_EQ(Scalar(1.5).natural_dtype(), kFloat64);
  EXPECT_THROW_MSG(set_default_dtype(kInt64), TypeError, "only floating-point types are supported as the default type");
  EXPECT_EQ(default_dtype(), kFloat64);  // unchanged by the refused call
  set_default_dtype(kFloat32);
}

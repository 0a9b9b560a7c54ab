#include "base/nano_amount.h"

#include <gtest/gtest.h>

#include <limits>

namespace adapt {
namespace {

TEST(NanoAmount, FormatsWithAtLeastTwoDecimalsAndNoFloatingPoint) {
  EXPECT_EQ(FormatNanoAmount(0), "0.00");
  EXPECT_EQ(FormatNanoAmount(12'500'000'000), "12.50");
  EXPECT_EQ(FormatNanoAmount(1), "0.000000001");
  EXPECT_EQ(FormatNanoAmount(-1'250'000'000), "-1.25");
  EXPECT_EQ(FormatNanoAmount(std::numeric_limits<int64_t>::min()), "-9223372036.854775808");
}

TEST(NanoAmount, ParsesDecimalsExactlyAndRefusesWhatIsNotOne) {
  EXPECT_EQ(*ParseNanoAmount("10", "amount"), 10'000'000'000);
  EXPECT_EQ(*ParseNanoAmount("12.5", "amount"), 12'500'000'000);
  EXPECT_EQ(*ParseNanoAmount("0.000000001", "amount"), 1);
  EXPECT_EQ(*ParseNanoAmount("-2", "amount", true), -2'000'000'000);
  EXPECT_EQ(*ParseNanoAmount("9223372036.854775807", "amount"),
            std::numeric_limits<int64_t>::max());
  for (const char* bad : {"", "-2", "1.0000000001", "1e3", "1.", ".5", "12a", "1,5",
                          "9223372036.854775808", "99999999999"}) {
    auto r = ParseNanoAmount(bad, "amount");
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().field(), "amount") << bad;
  }
}

}  // namespace
}  // namespace adapt

#include "base/fault_point.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace adapt {
namespace {

// ADAPT_FAULT is read once per process, so each case runs in a child (death tests fork).
TEST(FaultPointTest, UnarmedPointDoesNothing) {
  ::unsetenv("ADAPT_FAULT");
  ADAPT_FAULT_POINT("test.unarmed");
  SUCCEED();
}

TEST(FaultPointDeathTest, ArmedPointExitsWithItsStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::setenv("ADAPT_FAULT", "test.other,test.armed", 1);
        ADAPT_FAULT_POINT("test.not_named");
        ADAPT_FAULT_POINT("test.armed");
      },
      ::testing::ExitedWithCode(kFaultExitCode), "fault point test.armed reached");
}

}  // namespace
}  // namespace adapt

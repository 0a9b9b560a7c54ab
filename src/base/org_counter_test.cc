#include "base/org_counter.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace adapt {
namespace {

TEST(OrgCounterTest, AnOrganizationHoldsAtMostItsCapAndAPlaceComesBackWithItsLastCopy) {
  OrgCounter counter(2);
  auto a = counter.TryTake("org_a");
  auto b = counter.TryTake("org_a");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(counter.TryTake("org_a"), nullptr);
  EXPECT_NE(counter.TryTake("org_b"), nullptr) << "another organization has a cap of its own";
  auto copy = a;
  a.reset();
  EXPECT_EQ(counter.TryTake("org_a"), nullptr) << "a copy still holds the place";
  copy.reset();
  EXPECT_NE(counter.TryTake("org_a"), nullptr);
}

TEST(OrgCounterTest, OrganizationsWithinTheirOwnCapsTogetherHoldAtMostTheTotal) {
  OrgCounter counter(3, 5);
  std::vector<std::shared_ptr<void>> held;
  for (const char* org : {"org_a", "org_a", "org_a", "org_b", "org_b"})
    held.push_back(counter.TryTake(org));
  for (const auto& place : held) ASSERT_NE(place, nullptr);
  EXPECT_EQ(counter.TryTake("org_b"), nullptr);
  EXPECT_EQ(counter.TryTake("org_c"), nullptr);
  // A refusal for the total leaves nothing counted for the refused organization.
  EXPECT_EQ(counter.Held("org_c"), 0u);
  held.front().reset();
  EXPECT_NE(counter.TryTake("org_c"), nullptr);
}

TEST(OrgCounterTest, ARefusalSaysWhichCapRefusedIt) {
  OrgCounter counter(2, 3);
  OrgCounter::Refusal refusal;
  auto a1 = counter.TryTake("org_a", &refusal);
  EXPECT_EQ(refusal, OrgCounter::Refusal::kNone);
  auto a2 = counter.TryTake("org_a");
  EXPECT_EQ(counter.TryTake("org_a", &refusal), nullptr);
  EXPECT_EQ(refusal, OrgCounter::Refusal::kOrganization);
  auto b1 = counter.TryTake("org_b");
  ASSERT_TRUE(a1 && a2 && b1);
  EXPECT_EQ(counter.TryTake("org_b", &refusal), nullptr);
  EXPECT_EQ(refusal, OrgCounter::Refusal::kTotal);
  // An organization at its own cap is told so even when all places are taken.
  EXPECT_EQ(counter.TryTake("org_a", &refusal), nullptr);
  EXPECT_EQ(refusal, OrgCounter::Refusal::kOrganization);
}

}  // namespace
}  // namespace adapt

// FinishedCommands: a kept record is found only by its own organization and sandbox, only
// while it is fresh, and the oldest go once the kept output passes its bound.
#include "core/finished_commands.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace adapt::core {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const store::CommandRecord> Finished(const std::string& id, size_t output_bytes,
                                                     const std::string& sandbox_id = "sbx_a") {
  auto r = std::make_shared<store::CommandRecord>();
  r->id = id;
  r->org_id = "org_a";
  r->sandbox_id = sandbox_id;
  r->status = "exited";
  r->stdout_text.assign(output_bytes, 'x');
  return r;
}

const FinishedCommands::Clock::time_point kT0{};

TEST(FinishedCommands, AKeptRecordIsFoundOnlyByItsOwnOrganizationAndSandbox) {
  FinishedCommands kept;
  auto record = Finished("cmd_1", 10);
  kept.Keep(record, kT0);
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_1", kT0), record);
  EXPECT_EQ(kept.Find("org_b", "sbx_a", "cmd_1", kT0), nullptr);
  EXPECT_EQ(kept.Find("org_a", "sbx_b", "cmd_1", kT0), nullptr);
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_2", kT0), nullptr);
}

TEST(FinishedCommands, ARecordIsServedOnlyWhileItIsFresh) {
  FinishedCommands kept;
  kept.Keep(Finished("cmd_1", 10), kT0);
  EXPECT_NE(kept.Find("org_a", "sbx_a", "cmd_1", kT0 + FinishedCommands::kKeptFor), nullptr);
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_1", kT0 + FinishedCommands::kKeptFor + 1ms), nullptr);
  // A later keep lets the stale ones go (asked as of their own time, they would be fresh).
  kept.Keep(Finished("cmd_2", 10), kT0 + FinishedCommands::kKeptFor + 1ms);
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_1", kT0), nullptr);
}

TEST(FinishedCommands, TheOldestGoOnceTheKeptOutputPassesItsBound) {
  FinishedCommands kept;
  const size_t quarter = FinishedCommands::kKeptOutputBytes / 4;
  for (int i = 0; i < 5; ++i) kept.Keep(Finished("cmd_" + std::to_string(i), quarter), kT0);
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_0", kT0), nullptr);
  for (int i = 1; i < 5; ++i)
    EXPECT_NE(kept.Find("org_a", "sbx_a", "cmd_" + std::to_string(i), kT0), nullptr) << i;
  // The newest stays, however large.
  kept.Keep(Finished("cmd_big", 2 * FinishedCommands::kKeptOutputBytes), kT0);
  EXPECT_NE(kept.Find("org_a", "sbx_a", "cmd_big", kT0), nullptr);
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_4", kT0), nullptr);
}

TEST(FinishedCommands, ForgettingASandboxDropsOnlyItsCommands) {
  FinishedCommands kept;
  kept.Keep(Finished("cmd_a", 10, "sbx_a"), kT0);
  kept.Keep(Finished("cmd_b", 10, "sbx_b"), kT0);
  kept.Forget("sbx_a");
  EXPECT_EQ(kept.Find("org_a", "sbx_a", "cmd_a", kT0), nullptr);
  EXPECT_NE(kept.Find("org_a", "sbx_b", "cmd_b", kT0), nullptr);
}

}  // namespace
}  // namespace adapt::core

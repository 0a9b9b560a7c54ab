#include "cli/sandbox_watch.h"

#include <gtest/gtest.h>

namespace adapt::cli {
namespace {

TEST(SandboxEventLine, AStatusEventIsTimeIdAndStatus) {
  EXPECT_EQ(SandboxEventLine(
                "status", R"({"sandboxId":"sb_1","status":"running","at":"2026-01-02T03:04:05Z"})",
                false),
            "2026-01-02T03:04:05Z  sb_1  running");
}

TEST(SandboxEventLine, JsonKeepsTheEventAndNamesItsKind) {
  nlohmann::json line = nlohmann::json::parse(
      SandboxEventLine("status", R"({"sandboxId":"sb_1","status":"deleted"})", true));
  EXPECT_EQ(line["sandboxId"], "sb_1");
  EXPECT_EQ(line["status"], "deleted");
  EXPECT_EQ(line["event"], "status");
}

TEST(SandboxEventLine, AResetSaysEventsWereMissed) {
  EXPECT_EQ(SandboxEventLine("reset", R"({"reason":"too old","lastEventId":9})", false),
            "events were missed: too old");
}

TEST(SandboxEventLine, WhatIsNotAnEventPrintsNothing) {
  EXPECT_EQ(SandboxEventLine("status", "not json", false), "");
  EXPECT_EQ(SandboxEventLine("other", R"({"a":1})", false), "");
}

}  // namespace
}  // namespace adapt::cli

#include "core/sandbox_hibernation.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

store::SandboxRecord Record(const std::string& status, const std::string& startup_class) {
  store::SandboxRecord r;
  r.id = "sbx_abcdefghijklmnopqrst";
  r.status = status;
  r.config.startup_class = startup_class;
  r.result.started_at = "2026-01-01T00:00:00Z";
  return r;
}

TEST(Hibernation, OnlyDurableKeepsItsWorkspace) {
  EXPECT_TRUE(KeepsWorkspace(Record("running", "durable")));
  EXPECT_FALSE(KeepsWorkspace(Record("running", "instant")));
}

TEST(Hibernation, RoundTripsThroughTheRecordAndKeepsOtherResultFields) {
  store::SandboxRecord r = Record("hibernated", "durable");
  EXPECT_EQ(ReadHibernation(r).phase, HibernationPhase::kNone);
  Hibernation h;
  h.phase = HibernationPhase::kStopped;
  h.workspace_kept = true;
  h.processes_saved = true;
  h.stopped_at = 1700000000000;
  WriteHibernation(r, h);
  Hibernation back = ReadHibernation(r);
  EXPECT_EQ(back.phase, HibernationPhase::kStopped);
  EXPECT_TRUE(back.workspace_kept);
  EXPECT_TRUE(back.processes_saved);
  EXPECT_EQ(back.stopped_at, 1700000000000);
  EXPECT_EQ(r.result.started_at, "2026-01-01T00:00:00Z");
  WriteHibernation(r, Hibernation{});
  EXPECT_FALSE(r.result.hibernation.has_value());
  EXPECT_EQ(r.result.started_at, "2026-01-01T00:00:00Z");
}

TEST(Hibernation, AnUnknownPhaseReadsAsNone) {
  store::SandboxRecord r = Record("hibernated", "durable");
  r.result.hibernation = store::HibernationState{};
  r.result.hibernation->phase = "asleep";
  EXPECT_EQ(ReadHibernation(r).phase, HibernationPhase::kNone);
}

TEST(Hibernation, OnlyARunningSandboxStops) {
  EXPECT_TRUE(CheckStoppable(Record("running", "instant")).ok());
  for (const char* status :
       {"provisioning", "hibernated", "completed", "failed", "deleting", "deleted"}) {
    Status st = CheckStoppable(Record(status, "instant"));
    EXPECT_EQ(st.code(), Code::kConflict) << status;
    EXPECT_NE(st.message().find(std::string(status) == "hibernated" ? "already stopped" : status),
              std::string::npos)
        << st.message();
  }
}

TEST(Hibernation, OnlyAStoppedSandboxStarts) {
  store::SandboxRecord r = Record("hibernated", "durable");
  Hibernation h;
  h.phase = HibernationPhase::kStopping;
  WriteHibernation(r, h);
  Status st = CheckStartable(r);
  EXPECT_EQ(st.code(), Code::kConflict);
  EXPECT_NE(st.message().find("still stopping"), std::string::npos);
  h.phase = HibernationPhase::kStopped;
  WriteHibernation(r, h);
  EXPECT_TRUE(CheckStartable(r).ok());
  for (const char* status : {"running", "provisioning", "completed", "failed", "deleted"}) {
    Status refused = CheckStartable(Record(status, "durable"));
    EXPECT_EQ(refused.code(), Code::kConflict) << status;
    EXPECT_NE(refused.message().find(status), std::string::npos) << refused.message();
  }
}

TEST(Hibernation, ViewSaysWhatWasKept) {
  store::SandboxRecord r = Record("running", "durable");
  EXPECT_FALSE(HibernationOf(r).has_value());
  Hibernation h;
  h.phase = HibernationPhase::kStopped;
  h.workspace_kept = true;
  h.processes_saved = true;
  h.stopped_at = 1700000000000;
  WriteHibernation(r, h);
  auto v = HibernationOf(r);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->workspace, "kept");
  EXPECT_EQ(v->processes, "saved");
  EXPECT_EQ(v->stopped_at, 1700000000000);
  EXPECT_FALSE(v->note.has_value());
  h.processes_saved = false;
  h.note = "the processes could not be saved";
  WriteHibernation(r, h);
  EXPECT_EQ(HibernationOf(r)->processes, "lost");
  EXPECT_EQ(HibernationOf(r)->note, "the processes could not be saved");
  h.phase = HibernationPhase::kStopping;
  WriteHibernation(r, h);
  EXPECT_EQ(HibernationOf(r)->processes, "saving");
  h = Hibernation{};
  h.phase = HibernationPhase::kStopped;
  WriteHibernation(r, h);
  EXPECT_EQ(HibernationOf(r)->workspace, "discarded");
  EXPECT_EQ(HibernationOf(r)->processes, "discarded");
}

}  // namespace
}  // namespace adapt::core

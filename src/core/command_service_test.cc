// CommandService's start-up reconciliation over a MemoryStore and a FakeRuntime: the commands
// a previous adaptd left running are lost with it (their runsc exec process was its child).
#include "core/command_service.h"

#include <gtest/gtest.h>

#include "core/core_test_fixture.h"

namespace adapt::core {
namespace {

class CommandServiceTest : public testing_support::CoreTest {
 protected:
  // A command as the service records it while it runs, served by `served_by`.
  store::CommandRecord RunningCommand(const std::string& sandbox_id,
                                      const std::string& served_by = "runsc-exec") {
    store::CommandRecord c;
    c.id = NewId("cmd");
    c.org_id = org_;
    c.sandbox_id = sandbox_id;
    c.status = "running";
    c.data = {{"id", c.id}, {"status", "running"}, {"servedBy", served_by}};
    c.created_at = NowMillis();
    EXPECT_TRUE(store_.PutCommand(c).ok());
    return c;
  }

  store::CommandRecord StoredCommand(const store::CommandRecord& c) {
    auto got = store_.GetCommand(c.org_id, c.sandbox_id, c.id);
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : store::CommandRecord{};
  }
};

TEST_F(CommandServiceTest, ReconcileMarksCommandsLeftRunningLost) {
  auto sandbox = Insert(NewSandbox("running"));
  auto c = RunningCommand(sandbox.id);
  CommandService service(store_, runtime_, *images_);
  service.Reconcile();
  auto stored = StoredCommand(c);
  EXPECT_EQ(stored.status, "lost");
  EXPECT_EQ(stored.data.value("error", ""),
            "adaptd restarted while the command ran; its outcome is unknown");
  auto running = store_.ListCommandsWithStatus("running");
  ASSERT_TRUE(running.ok());
  EXPECT_TRUE(running->empty());
}

TEST_F(CommandServiceTest, ALostCommandOfASandboxThatFailedSaysWhyTheSandboxEnded) {
  auto r = NewSandbox("provisioning");
  r = Insert(r);
  r.status = "failed";
  r.error = "the sandbox ran out of memory";
  ASSERT_TRUE(store_.UpdateSandbox(r, {"provisioning"}).ok());
  auto c = RunningCommand(r.id);
  CommandService service(store_, runtime_, *images_);
  service.Reconcile();
  EXPECT_EQ(StoredCommand(c).status, "lost");
  EXPECT_EQ(StoredCommand(c).data.value("error", ""), "the sandbox ran out of memory");
}

TEST_F(CommandServiceTest, ReconcileLeavesEndedCommandsAlone) {
  auto sandbox = Insert(NewSandbox("running"));
  auto c = RunningCommand(sandbox.id);
  c.status = "finished";
  c.data["status"] = "finished";
  ASSERT_TRUE(store_.PutCommand(c).ok());
  CommandService service(store_, runtime_, *images_);
  service.Reconcile();
  EXPECT_EQ(StoredCommand(c).status, "finished");
}

}  // namespace
}  // namespace adapt::core

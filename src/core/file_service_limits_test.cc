// FileService against a sandbox whose file tool stalls (its root can stop it): an operation
// gives up once the tool has taken or sent nothing for the silence limit, and one organization
// has at most its cap of operations in flight, while another's still run; and against one whose
// workload ends during an operation. The tool is a stand-in process served through the
// FakeRuntime's exec.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "core/core_test_fixture.h"
#include "core/file_service.h"
#include "core/operation.h"
#include "core/sandbox_operations.h"
#include "os/files.h"

namespace adapt::core {
namespace {

using namespace std::chrono_literals;

class FileServiceLimitsTest : public testing_support::CoreTest {
 protected:
  Principal Of(const std::string& org) { return Principal{org, "key_" + org, false}; }
  // Running in the store and in the runtime (a sandbox with no runtime state is gone).
  std::string RunningSandbox(const std::string& org) {
    store::SandboxRecord r = NewSandbox("running");
    r.org_id = org;
    std::string id = Insert(r).id;
    runtime_.AddRunning(id);
    return id;
  }
  // Waits until the runtime was asked for `n` execs (the operation started: 10 s at most).
  void AwaitExecs(size_t n) {
    for (int i = 0;
         i < 1000 && runtime_.CountCalls(runtime::FakeRuntime::Op::kExec) < static_cast<int>(n);
         ++i)
      std::this_thread::sleep_for(10ms);
    ASSERT_GE(runtime_.CountCalls(runtime::FakeRuntime::Op::kExec), static_cast<int>(n));
  }

  FileService files_{store_, runtime_};
};

TEST_F(FileServiceLimitsTest, AToolThatSendsNothingFailsTheOperationAtTheSilenceLimit) {
  files_.set_tool_silence_limit(300ms);
  std::string sbx = RunningSandbox(org_);
  runtime_.ServeNextExec({"/bin/sh", "-c", "exec sleep 600"});
  auto listed = files_.List(Of(org_), sbx, "/");
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.status().code(), Code::kUnavailable);
  EXPECT_NE(listed.status().message().find("took or sent nothing for 300 ms"), std::string::npos)
      << listed.status().message();
  // Its place is given back: the next operation runs.
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '[]'"});
  auto next = files_.List(Of(org_), sbx, "/");
  ASSERT_TRUE(next.ok()) << next.status().message();
  EXPECT_TRUE(next->items.empty());
}

TEST_F(FileServiceLimitsTest, AnUploadToAToolThatTakesNothingFailsAtTheSilenceLimit) {
  files_.set_tool_silence_limit(300ms);
  std::string sbx = RunningSandbox(org_);
  runtime_.ServeNextExec({"/bin/sh", "-c", "exec sleep 600"});  // never reads its stdin
  size_t sent = 0;
  ByteSource body = [&](char* buf, size_t n) -> long {
    if (sent >= (16u << 20)) return 0;  // more than a pipe holds
    std::memset(buf, 'x', n);
    sent += n;
    return static_cast<long>(n);
  };
  Status st = files_.Upload(Of(org_), sbx, "/big", "", body);
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.message();
  EXPECT_NE(st.message().find("took or sent nothing for 300 ms"), std::string::npos)
      << st.message();
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '[]'"});
  EXPECT_TRUE(files_.List(Of(org_), sbx, "/").ok());
}

TEST_F(FileServiceLimitsTest, AnOrganizationPastItsCapIsRefusedWhileAnotherRuns) {
  files_.set_max_in_flight_per_org(1);
  std::string sbx = RunningSandbox(org_);
  const std::string go = dir_ + "/go";
  // A tool that answers only once the test says so.
  runtime_.ServeNextExec(
      {"/bin/sh", "-c", "while [ ! -e " + go + " ]; do sleep 0.02; done; printf '[]'"});
  Result<FileListing> first = Status(Code::kInternal, "not run");
  std::thread held([&] { first = files_.List(Of(org_), sbx, "/"); });
  AwaitExecs(1);
  auto refused = files_.List(Of(org_), sbx, "/");
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status().message();
  EXPECT_NE(refused.status().message().find("already has 1 file operations running"),
            std::string::npos)
      << refused.status().message();
  // Another organization is not counted with it.
  auto other = store_.CreateOrg({NewId("org"), "other", false, NowMillis()});
  ASSERT_TRUE(other.ok());
  std::string theirs = RunningSandbox(other->id);
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '[]'"});
  auto served = files_.List(Of(other->id), theirs, "/");
  EXPECT_TRUE(served.ok()) << served.status().message();
  ASSERT_TRUE(os::WriteFileAtomic(go, "", 0600).ok());
  held.join();
  EXPECT_TRUE(first.ok()) << first.status().message();
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '[]'"});
  EXPECT_TRUE(files_.List(Of(org_), sbx, "/").ok());
}

TEST_F(FileServiceLimitsTest, ADownloadsReaderHoldsItsPlaceUntilAStreamTakesItOver) {
  // Read whole on a worker (an artifact's copy), a download must stay within the cap until
  // its end; streamed, its stream's own thread reads it and the place is given back.
  files_.set_max_in_flight_per_org(1);
  std::string sbx = RunningSandbox(org_);
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '5\\nhello'; exec sleep 600"});
  auto reader = files_.Download(Of(org_), sbx, "/f");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  auto refused = files_.List(Of(org_), sbx, "/");
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status().message();
  (*reader)->MovedOffWorker();
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '[]'"});
  auto served = files_.List(Of(org_), sbx, "/");
  EXPECT_TRUE(served.ok()) << served.status().message();
}

// What `runsc exec` says, and how it exits, once the sandbox's startup command has ended.
const std::vector<std::string> kStoppedContainerExec = {
    "/bin/sh", "-c",
    "sleep 0.3; echo 'executing processes for container: cannot execute in container in state "
    "stopped' >&2; exit 128"};

TEST_F(FileServiceLimitsTest, AnOperationWhoseSandboxStoppedRunningMeanwhileIsAConflict) {
  // A startup command that ends during an upload: the stress run's one 500 (2026-12-06).
  std::string sbx = RunningSandbox(org_);
  runtime_.ServeNextExec(kStoppedContainerExec);
  std::thread ended([&] {
    AwaitExecs(1);
    store::SandboxRecord r = Stored(sbx);
    r.status = "completed";
    EXPECT_TRUE(store_.UpdateSandbox(r, {"running"}).ok());
  });
  std::string body = "data";
  ByteSource source = [&](char* buf, size_t n) -> long {
    size_t take = std::min(n, body.size());
    std::memcpy(buf, body.data(), take);
    body.erase(0, take);
    return static_cast<long>(take);
  };
  Status st = files_.Upload(Of(org_), sbx, "/tmp/f", "", source);
  ended.join();
  EXPECT_EQ(st.code(), Code::kConflict) << st.message();
  EXPECT_NE(st.message().find("stopped running during the file operation (it is completed now)"),
            std::string::npos)
      << st.message();
}

TEST_F(FileServiceLimitsTest, TheSameFailureInASandboxThatStillRunsIsAdaptdsOwn) {
  files_.set_end_settle(200ms);
  std::string sbx = RunningSandbox(org_);
  runtime_.ServeNextExec(kStoppedContainerExec);
  auto listed = files_.List(Of(org_), sbx, "/");
  EXPECT_EQ(listed.status().code(), Code::kInternal) << listed.status().message();
  // A download's failure before its first byte is judged the same way.
  runtime_.ServeNextExec(kStoppedContainerExec);
  std::thread ended([&] {
    AwaitExecs(2);
    store::SandboxRecord r = Stored(sbx);
    r.status = "completed";
    EXPECT_TRUE(store_.UpdateSandbox(r, {"running"}).ok());
  });
  files_.set_end_settle(5000ms);
  auto reader = files_.Download(Of(org_), sbx, "/f");
  ended.join();
  EXPECT_EQ(reader.status().code(), Code::kConflict) << reader.status().message();
}

TEST_F(FileServiceLimitsTest, NoOperationStartsWhileACheckpointOrRollBackIsUnderWay) {
  std::string sbx = RunningSandbox(org_);
  FileTransfers transfers;
  files_.set_transfers(&transfers);
  auto op = BeginSandboxOperation(store_, org_, sbx, kCheckpointOperation, "Running");
  ASSERT_TRUE(op.ok());
  auto listed = files_.List(Of(org_), sbx, "/");
  EXPECT_EQ(listed.status().code(), Code::kConflict) << listed.status().message();
  EXPECT_NE(listed.status().message().find("busy with its checkpoint operation " + *op),
            std::string::npos)
      << listed.status().message();
  EXPECT_EQ(runtime_.CountCalls(runtime::FakeRuntime::Op::kExec), 0);
  EXPECT_EQ(transfers.InFlight(sbx), 0);  // the refused one does not stay counted
  FinishSandboxOperation(store_, org_, *op, "", 0);
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '[]'"});
  EXPECT_TRUE(files_.List(Of(org_), sbx, "/").ok());
}

TEST_F(FileServiceLimitsTest, AnOperationInFlightIsCountedForTheCheckpointsUntilItEnds) {
  std::string sbx = RunningSandbox(org_);
  FileTransfers transfers;
  files_.set_transfers(&transfers);
  runtime_.ServeNextExec({"/bin/sh", "-c", "printf '5\\nhello'; exec sleep 600"});
  auto reader = files_.Download(Of(org_), sbx, "/f");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_EQ(transfers.InFlight(sbx), 1);
  EXPECT_FALSE(transfers.AwaitNone(sbx, 10ms));
  reader->reset();
  EXPECT_TRUE(transfers.AwaitNone(sbx, 10ms));
}

}  // namespace
}  // namespace adapt::core

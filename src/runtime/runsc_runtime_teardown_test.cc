// RunscRuntime against the real runsc: Destroy, and what runsc and the shim leave behind when
// a sandbox ends (lock files, a second delete, a dead shim). Slow: ctest label "runtime".
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "runtime/runsc_runtime_fixture.h"

namespace adapt::runtime {
namespace {

using namespace std::chrono_literals;
using testing_support::RunscRuntimeTest;

// A startup command that ends before its agent has started: the agent's `runsc exec` is
// stopped before the shim's `runsc delete`, or it would take runsc's lock on the container once
// the delete had removed it and leave the lock file behind (a wrapper holds each exec for 1 s).
TEST_F(RunscRuntimeTest, AnAgentExecStillStartingWhenTheWorkloadEndsIsStoppedBeforeTheDelete) {
  options_.agents = &hub_;
  std::filesystem::copy_file(ADAPT_PAUSE_PATH, helpers_dir_ + "/adapt-agent");
  const std::string log = base_ + "/runsc-calls";
  // The exec ends the workload itself (a loaded machine may reap a short workload before the
  // exec has even begun), then holds on for a second as a slow start would.
  UseRunscWrapper("case \"$sub\" in exec) echo exec >>" + log +
                  "\n  c=; n=0; for a in \"$@\"; do case \"$a\" in --*) ;; *) n=$((n+1));"
                  " [ $n = 2 ] && c=\"$a\";; esac; done\n"
                  "  runsc --root=" +
                  state_dir_ +
                  "/runsc kill \"$c\" KILL\n"
                  "  sleep 1; echo exec-late >>" +
                  log +
                  ";;\n"
                  "delete) echo delete >>" +
                  log + ";; esac");
  if (HasFatalFailure()) return;
  const std::string id = LaunchUntilEnded({"/bin/sleep", "60"});
  if (HasFailure()) return;
  ASSERT_TRUE(runtime_->Destroy(id, false).ok());
  // Longer than the wrapper holds an exec: one left running would have gone on by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto calls = os::ReadFile(log);
  ASSERT_TRUE(calls.ok());
  EXPECT_NE(calls->find("exec\n"), std::string::npos) << "the agent's exec never started";
  size_t deleted = calls->find("delete");
  ASSERT_NE(deleted, std::string::npos) << *calls;
  EXPECT_EQ(calls->find("exec-late", deleted), std::string::npos) << *calls;
  for (const auto& file : os::ListDir(state_dir_ + "/runsc"))
    EXPECT_EQ(file.find(id), std::string::npos) << "runsc's " << file << " outlived the sandbox";
}

// A sandbox whose workload ended is deleted by its shim, after it reported the end; a Destroy
// asked for meanwhile (a client deleting a completed sandbox at once) ran a second `runsc
// delete` beside the shim's, which took runsc's lock after the first had removed the container
// and left the lock file behind for good. It waits for the shim's delete instead.
TEST_F(RunscRuntimeTest, ADestroyWhileTheShimDeletesTheEndedSandboxRunsNoSecondDelete) {
  const std::string log = base_ + "/runsc-calls";
  UseRunscWrapper("case \"$sub\" in delete) echo delete >>" + log + "; sleep 1;; esac");
  if (HasFatalFailure()) return;
  const std::string id = LaunchUntilEnded({"/bin/true"});
  if (HasFailure()) return;
  ASSERT_TRUE(runtime_->Destroy(id, false).ok());
  auto calls = os::ReadFile(log);
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ(*calls, "delete\n") << "one delete, the shim's";
  for (const auto& file : os::ListDir(state_dir_ + "/runsc"))
    EXPECT_EQ(file.find(id), std::string::npos) << "runsc's " << file << " outlived the sandbox";
}

// A lock file a racing runsc call left without its state file goes with the sandbox.
TEST_F(RunscRuntimeTest, DestroyRemovesALockFileRunscLeftWithoutItsState) {
  const std::string id = LaunchUntilEnded({"/bin/true"});
  if (HasFailure()) return;
  ASSERT_TRUE(runtime_->Destroy(id, false).ok());
  const std::string lock = state_dir_ + "/runsc/" + id + "_sandbox:" + id + ".lock";
  ASSERT_TRUE(os::WriteFileAtomic(lock, "", 0640).ok());
  const std::string other = state_dir_ + "/runsc/sbx_other_sandbox:sbx_other.lock";
  ASSERT_TRUE(os::WriteFileAtomic(other, "", 0640).ok());
  ASSERT_TRUE(runtime_->Destroy(id, false).ok());
  EXPECT_FALSE(os::Exists(lock));
  EXPECT_TRUE(os::Exists(other)) << "another sandbox's file is not this Destroy's";
}

TEST_F(RunscRuntimeTest, DestroyKeepingTheDiskUnmountsButKeepsTheImage) {
  LaunchRequest req = Request({"/bin/sh", "-c", "echo kept > /data.txt"});
  const std::string id = req.spec.id;
  ASSERT_TRUE(runtime_->Launch(req).ok());
  Observation obs =
      WaitFor(id, [](const Observation& o) { return o.state.phase == ShimPhase::kExited; });
  ASSERT_EQ(obs.state.phase, ShimPhase::kExited);
  EXPECT_EQ(obs.state.exit_code, 0);

  const std::string dir = runtime_->SandboxDir(id);
  ASSERT_TRUE(runtime_->Destroy(id, true).ok());
  EXPECT_TRUE(os::MountsUnder(dir).empty());
  EXPECT_TRUE(os::Exists(dir + "/disk.img"));
  EXPECT_FALSE(os::SandboxCgroupExists(id));

  // The write landed on the sandbox's own disk, not in the shared image.
  EXPECT_FALSE(os::Exists(rootfs_ + "/data.txt"));
  ASSERT_TRUE(os::MakeDirs(base_ + "/inspect").ok());
  ASSERT_TRUE(os::MountLoopExt4(dir + "/disk.img", base_ + "/inspect").ok());
  auto text = os::ReadFile(base_ + "/inspect/upper/data.txt");
  EXPECT_TRUE(os::Unmount(base_ + "/inspect").ok());
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "kept\n");

  ASSERT_TRUE(runtime_->Destroy(id, false).ok());
  EXPECT_FALSE(os::Exists(dir));
}

TEST_F(RunscRuntimeTest, ListNamesOnlySandboxIds) {
  // runsc's own files ("<id>_sandbox:<id>.state", ".lock") must come back as the id, once.
  LaunchRequest req = Request({"/.adapt/adapt-pause"});
  ASSERT_TRUE(runtime_->Launch(req).ok());
  EXPECT_EQ(runtime_->List(), std::vector<std::string>{req.spec.id});
  ASSERT_TRUE(runtime_->Destroy(req.spec.id, false).ok());
  EXPECT_TRUE(runtime_->List().empty());
}

TEST_F(RunscRuntimeTest, DestroyAfterTheShimDiedStillStopsTheSandbox) {
  LaunchRequest req = Request({"/.adapt/adapt-pause"});
  const std::string id = req.spec.id;
  ASSERT_TRUE(runtime_->Launch(req).ok());
  auto obs = runtime_->Observe(id);
  ASSERT_TRUE(obs.ok());
  ASSERT_EQ(obs->state.phase, ShimPhase::kRunning);
  const pid_t sandbox_pid = static_cast<pid_t>(obs->state.sandbox_pid);
  ASSERT_GT(sandbox_pid, 0);

  // The monitor dies (OOM killer, an operator's kill -9); the sandbox itself lives on.
  ASSERT_TRUE(os::Signal(static_cast<pid_t>(obs->state.shim_pid), SIGKILL).ok());
  WaitFor(
      id, [](const Observation& o) { return !o.monitor_alive; }, 10s);

  ASSERT_TRUE(runtime_->Destroy(id, false).ok());
  EXPECT_FALSE(RunscKnows(id));
  EXPECT_FALSE(os::SandboxCgroupExists(id));
  EXPECT_TRUE(os::MountsUnder(state_dir_).empty());
  bool sandbox_gone = false;
  for (int i = 0; i < 100 && !sandbox_gone; ++i) {
    sandbox_gone = !os::ProcessMatches(sandbox_pid, id);
    if (!sandbox_gone) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(sandbox_gone) << "the runsc sandbox process " << sandbox_pid << " still runs";
}

}  // namespace
}  // namespace adapt::runtime

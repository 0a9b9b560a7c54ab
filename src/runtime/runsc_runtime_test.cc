// RunscRuntime against the real runsc (fixture: runsc_runtime_fixture.h): runs, networks, limits,
// image copies and checkpoints; Destroy and what ends leave are in runsc_runtime_teardown_test.cc.
// Slow (each case boots a gVisor sandbox): ctest label "runtime".
#include "runtime/runsc_runtime.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>

#include "base/ids.h"
#include "os/cgroup.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/process.h"
#include "os/temp_dir.h"
#include "runtime/agent_hub.h"
#include "runtime/checkpoint_store.h"
#include "runtime/runsc_runtime_fixture.h"

namespace adapt::runtime {
namespace {

using namespace std::chrono_literals;
using testing_support::RunscRuntimeTest;

TEST_F(RunscRuntimeTest, CommandExitCodeAndOutputAreCaptured) {
  LaunchRequest req = Request({"/bin/sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"});
  const std::string id = req.spec.id;
  Status st = runtime_->Launch(req);
  ASSERT_TRUE(st.ok()) << st.message();

  Observation obs =
      WaitFor(id, [](const Observation& o) { return o.state.phase == ShimPhase::kExited; });
  ASSERT_EQ(obs.state.phase, ShimPhase::kExited) << obs.state.error;
  ASSERT_TRUE(obs.state.exit_code.has_value());
  EXPECT_EQ(*obs.state.exit_code, 3);
  EXPECT_FALSE(obs.state.signal.has_value());
  EXPECT_EQ(obs.output.Text(Stream::kStdout), "to-stdout\n");
  EXPECT_EQ(obs.output.Text(Stream::kStderr), "to-stderr\n");
  EXPECT_FALSE(obs.output.truncated());
  EXPECT_GT(obs.state.started_at, 0);
  EXPECT_GE(obs.state.finished_at, obs.state.started_at);
  EXPECT_TRUE(obs.state.error.empty()) << obs.state.error;

  EXPECT_TRUE(runtime_->Destroy(id, false).ok());
  EXPECT_FALSE(os::Exists(runtime_->SandboxDir(id)));
  EXPECT_TRUE(os::MountsUnder(state_dir_).empty());
}

// A sandbox with a network (runsc --network=sandbox) starts on this kernel only through
// the /proc/sys/net shim when runsc is as old as Debian's 20221219; a newer runsc needs none.
TEST_F(RunscRuntimeTest, NetworkedSandboxStartsInItsOwnNamespace) {
  LaunchRequest req = Request({"/bin/sh", "-c", "cat /proc/net/dev"});
  req.network_none = false;
  const std::string id = req.spec.id;
  Status st = runtime_->Launch(req);
  ASSERT_TRUE(st.ok()) << st.message();
  Observation obs =
      WaitFor(id, [](const Observation& o) { return o.state.phase == ShimPhase::kExited; });
  ASSERT_EQ(obs.state.phase, ShimPhase::kExited) << obs.state.error;
  EXPECT_EQ(*obs.state.exit_code, 0) << obs.output.Text(Stream::kStderr);
  std::string devices = obs.output.Text(Stream::kStdout);
  // Its namespace is its own: none of the host's interfaces shows up inside.
  EXPECT_NE(devices.find("Receive"), std::string::npos) << devices;
  EXPECT_EQ(devices.find("eth0"), std::string::npos) << devices;
  EXPECT_TRUE(runtime_->Destroy(id, false).ok());
}

// With a namespace path in the spec, runsc --network=sandbox adopts that namespace's
// interface and addresses (what net/ prepares), and the resolv.conf given is the sandbox's.
TEST_F(RunscRuntimeTest, SandboxJoinsTheGivenNetworkNamespaceAndResolvConf) {
  LaunchRequest req = Request({"/bin/sh", "-c", "cat /proc/net/dev; cat /etc/resolv.conf"});
  req.network_none = false;
  const std::string id = req.spec.id;
  const std::string ns = "adapt-rt-" + id;
  const std::string host_if = "adrt" + std::to_string(::getpid() % 100000);
  ASSERT_TRUE(os::RunChecked({"ip", "netns", "add", ns}).ok());
  auto cleanup = [&] {
    (void)os::RunCommand({"ip", "link", "del", host_if});  // best effort: cleanup
    (void)os::RunCommand({"ip", "netns", "del", ns});
  };
  for (auto argv : std::vector<std::vector<std::string>>{
           {"ip", "link", "add", host_if, "type", "veth", "peer", "name", host_if + "p"},
           {"ip", "link", "set", host_if + "p", "netns", ns},
           {"ip", "-n", ns, "link", "set", host_if + "p", "name", "eth0"},
           {"ip", "-n", ns, "addr", "add", "10.250.0.2/30", "dev", "eth0"},
           {"ip", "-n", ns, "link", "set", "eth0", "up"},
           {"ip", "-n", ns, "link", "set", "lo", "up"}}) {
    Status st = os::RunChecked(argv);
    if (!st.ok()) cleanup();
    ASSERT_TRUE(st.ok()) << st.message();
  }
  ASSERT_TRUE(os::WriteFileAtomic(base_ + "/resolv.conf", "nameserver 198.51.100.53\n").ok());
  req.spec.netns_path = "/run/netns/" + ns;
  req.spec.resolv_conf = base_ + "/resolv.conf";
  Status st = runtime_->Launch(req);
  if (!st.ok()) cleanup();
  ASSERT_TRUE(st.ok()) << st.message();
  Observation obs =
      WaitFor(id, [](const Observation& o) { return o.state.phase == ShimPhase::kExited; });
  std::string out = obs.output.Text(Stream::kStdout);
  EXPECT_TRUE(runtime_->Destroy(id, false).ok());
  cleanup();
  ASSERT_EQ(obs.state.phase, ShimPhase::kExited) << obs.state.error;
  EXPECT_EQ(*obs.state.exit_code, 0) << obs.output.Text(Stream::kStderr);
  EXPECT_NE(out.find("eth0"), std::string::npos) << out;
  EXPECT_NE(out.find("nameserver 198.51.100.53"), std::string::npos) << out;
}

TEST_F(RunscRuntimeTest, LaunchFailureIsReportedWithItsCause) {
  LaunchRequest req = Request({"/nonexistent"});
  const std::string id = req.spec.id;
  Status st = runtime_->Launch(req);
  ASSERT_TRUE(st.ok()) << "a launch failure is reported through Observe: " << st.message();

  Observation obs =
      WaitFor(id, [](const Observation& o) { return o.state.phase == ShimPhase::kLaunchFailed; });
  ASSERT_EQ(obs.state.phase, ShimPhase::kLaunchFailed);
  EXPECT_NE(obs.state.error.find("/nonexistent"), std::string::npos) << obs.state.error;
  EXPECT_FALSE(obs.state.exit_code.has_value());
  EXPECT_GT(obs.state.finished_at, 0);

  EXPECT_TRUE(runtime_->Destroy(id, false).ok());
  EXPECT_FALSE(os::Exists(runtime_->SandboxDir(id)));
  EXPECT_FALSE(RunscKnows(id));
  EXPECT_FALSE(os::SandboxCgroupExists(id));
}

TEST_F(RunscRuntimeTest, InteractiveSandboxRunsUntilDestroyThenLeavesNothing) {
  LaunchRequest req = Request({"/.adapt/adapt-pause"});
  const std::string id = req.spec.id;
  const std::string dir = runtime_->SandboxDir(id);
  Status st = runtime_->Launch(req);
  ASSERT_TRUE(st.ok()) << st.message();

  auto first = runtime_->Observe(id);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->state.phase, ShimPhase::kRunning) << first->state.error;
  EXPECT_TRUE(first->monitor_alive);
  // Still running a while later: adapt-pause does not exit by itself.
  std::this_thread::sleep_for(1500ms);
  auto later = runtime_->Observe(id);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->state.phase, ShimPhase::kRunning) << later->state.error;
  EXPECT_TRUE(later->monitor_alive);
  const pid_t shim_pid = static_cast<pid_t>(later->state.shim_pid);
  EXPECT_GT(shim_pid, 0);

  // While it runs it has mounts, runsc state and a cgroup, and List knows it.
  EXPECT_FALSE(os::MountsUnder(dir).empty());
  EXPECT_TRUE(RunscKnows(id));
  EXPECT_TRUE(os::SandboxCgroupExists(id));
  auto listed = runtime_->List();
  EXPECT_NE(std::find(listed.begin(), listed.end(), id), listed.end());

  st = runtime_->Destroy(id, false);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(os::MountsUnder(state_dir_).empty());
  EXPECT_FALSE(RunscKnows(id));
  EXPECT_FALSE(os::SandboxCgroupExists(id));
  EXPECT_FALSE(os::Exists(dir));
  EXPECT_FALSE(os::ProcessMatches(shim_pid, dir)) << "the shim outlived Destroy";
  auto gone = runtime_->Observe(id);
  EXPECT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kNotFound);
  listed = runtime_->List();
  EXPECT_EQ(std::find(listed.begin(), listed.end(), id), listed.end());

  EXPECT_TRUE(runtime_->Destroy(id, false).ok()) << "Destroy is idempotent";
}

// The sandbox's CPU quota as the host's cgroup holds it ("max" or -1: none).
std::string HostCpuQuota(const std::string& id) {
  auto v1 = os::ReadFile("/sys/fs/cgroup/cpu/adapt/" + id + "/cpu.cfs_quota_us");
  if (v1.ok()) return v1->substr(0, v1->find('\n'));
  auto v2 = os::ReadFile("/sys/fs/cgroup/adapt/" + id + "/cpu.max");
  return v2.ok() ? v2->substr(0, v2->find(' ')) : "no cgroup";
}

// gVisor boots faster without the sandbox's CPU limit, so the shim sets it after the boot, but
// never once any of the tenant's workload has run: a wrapper around runsc logs each call, and
// the quota in force when `runsc start` is called.
TEST_F(RunscRuntimeTest, TheCpuLimitIsInForceBeforeTheWorkloadRuns) {
  const std::string log = base_ + "/runsc-calls";
  UseRunscWrapper(
      "if [ \"$sub\" = start ]; then\n"
      "  q=$(cat /sys/fs/cgroup/cpu/adapt/$id/cpu.cfs_quota_us "
      "/sys/fs/cgroup/adapt/$id/cpu.max 2>/dev/null | head -n1)\n"
      "  echo \"start quota=$q\" >>" +
      log + "\nelif [ -n \"$sub\" ]; then echo \"$sub\" >>" + log + "; fi");
  if (HasFatalFailure()) return;

  // A startup command: created, limited, then started.
  LaunchRequest command = Request({"/bin/sh", "-c", "sleep 60"});
  command.spec.cpu = 2;
  ASSERT_TRUE(runtime_->Launch(command).ok());
  auto calls = os::ReadFile(log);
  ASSERT_TRUE(calls.ok());
  size_t created = calls->find("create");
  ASSERT_NE(created, std::string::npos) << *calls;
  EXPECT_EQ(calls->substr(created), "create\nstart quota=200000\n") << *calls;
  EXPECT_EQ(HostCpuQuota(command.spec.id), "200000");
  auto spec = os::ReadFile(runtime_->SandboxDir(command.spec.id) + "/config.json");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->find("\"quota\""), std::string::npos) << "the limit is the shim's to set";

  // An interactive sandbox runs nothing of the tenant's until a command: one `runsc run`,
  // and the limit in force once it is running.
  ASSERT_TRUE(os::WriteFileAtomic(log, "").ok());
  LaunchRequest idle = Request({"/.adapt/adapt-pause"});
  idle.spec.process.idle = true;
  idle.spec.cpu = 3;
  ASSERT_TRUE(runtime_->Launch(idle).ok());
  EXPECT_EQ(HostCpuQuota(idle.spec.id), "300000");
  calls = os::ReadFile(log);
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ(calls->substr(0, calls->find('\n')), "run") << *calls;
  EXPECT_EQ(calls->find("start"), std::string::npos) << *calls;

  EXPECT_TRUE(runtime_->Destroy(command.spec.id, false).ok());
  EXPECT_TRUE(runtime_->Destroy(idle.spec.id, false).ok());
}

// The sandbox's status as runsc reports it ("running", "paused", ...).
std::string RunscStatus(const std::string& state_dir, const std::string& id) {
  auto r = os::RunCommand({"runsc", "--root=" + state_dir + "/runsc", "state", id});
  if (!r.ok()) return "unknown";
  auto at = r->output.find("\"status\": \"");
  if (at == std::string::npos) return "unknown";
  at += 11;
  return r->output.substr(at, r->output.find('"', at) - at);
}

// Saving a running sandbox's image copies its writable layer by path, which the sandbox's root
// changes through the gofer (a directory swapped for a symlink mid-copy would copy host files):
// the sandbox is paused for the copy. A wrapper around runsc logs each pause and resume and
// whether the copy exists then; a crash between the two is undone at the next start.
TEST_F(RunscRuntimeTest, TheWritableLayerIsCopiedWithTheSandboxPaused) {
  const std::string log = base_ + "/runsc-calls";
  const std::string dest = base_ + "/layer";
  UseRunscWrapper(
      "case \"$sub\" in pause|resume)\n"
      "  if [ -d " +
      dest +
      " ]; then c=yes; else c=no; fi\n"
      "  echo \"$sub copied=$c\" >>" +
      log + " ;;\nesac");
  if (HasFatalFailure()) return;
  LaunchRequest idle = Request({"/.adapt/adapt-pause"});
  idle.spec.process.idle = true;
  ASSERT_TRUE(runtime_->Launch(idle).ok());
  const std::string id = idle.spec.id;
  Status exported = runtime_->ExportWritableLayer(id, dest);
  ASSERT_TRUE(exported.ok()) << exported.message();
  auto calls = os::ReadFile(log);
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ(*calls, "pause copied=no\nresume copied=yes\n");
  EXPECT_TRUE(os::Exists(dest));
  EXPECT_EQ(RunscStatus(state_dir_, id), "running");
  const std::string marker = runtime_->SandboxDir(id) + "/paused-for-export";
  EXPECT_FALSE(os::Exists(marker));

  // adaptd stopped between the pause and the resume: its next start resumes the sandbox.
  ASSERT_TRUE(os::WriteFileAtomic(marker, "", 0600).ok());
  ASSERT_TRUE(os::RunChecked({"runsc", "--root=" + state_dir_ + "/runsc", "pause", id}).ok());
  EXPECT_EQ(RunscStatus(state_dir_, id), "paused");
  StartRuntime();
  EXPECT_EQ(RunscStatus(state_dir_, id), "running");
  EXPECT_FALSE(os::Exists(marker));
  EXPECT_TRUE(runtime_->Destroy(id, false).ok());
}

// A `runsc checkpoint` that hangs is killed at its time limit: the checkpoint fails saying so
// and leaves no image, rather than hold its thread and the sandbox's lock for good.
TEST_F(RunscRuntimeTest, ACheckpointPastItsTimeLimitIsKilledAndLeavesNoImage) {
  options_.checkpoint_key = StoreKey();
  options_.checkpoint_time_limit = 2s;
  const std::string hung = base_ + "/hung.pid";
  UseRunscWrapper("[ \"$sub\" = checkpoint ] && { echo $$ > " + hung + "; exec sleep 600; }");
  if (HasFatalFailure()) return;
  ASSERT_TRUE(runtime_->CheckpointStoreReady().ok());
  LaunchRequest req = Request({"/.adapt/adapt-pause"});
  const std::string id = req.spec.id;
  ASSERT_TRUE(runtime_->Launch(req).ok());
  Status saved = runtime_->Checkpoint(id);
  EXPECT_EQ(saved.code(), Code::kUnavailable) << saved.message();
  EXPECT_NE(saved.message().find("did not finish within 2 s"), std::string::npos)
      << saved.message();
  EXPECT_FALSE(runtime_->HasCheckpoint(id));
  EXPECT_EQ(runtime_->CheckpointBytes(id), 0u) << "a partial image was left";
  auto pid = os::ReadFile(hung);
  ASSERT_TRUE(pid.ok()) << "the wrapper never stood in for runsc checkpoint";
  EXPECT_NE(::kill(static_cast<pid_t>(std::stol(*pid)), 0), 0) << "the hung runsc outlived it";
  EXPECT_TRUE(runtime_->Destroy(id, false).ok());
}

// What a kill of adaptd midway through a checkpoint's copies leaves is removed at the next
// start-up; what is whole (the disk, the key, a kept checkpoint) stays.
TEST_F(RunscRuntimeTest, StartUpRemovesTheCopiesAnInterruptedCheckpointLeft) {
  options_.checkpoint_key = StoreKey();
  StartRuntime();
  ASSERT_TRUE(runtime_->CheckpointStoreReady().ok());
  const std::string id = NewId("sbx");
  const std::string dir = runtime_->SandboxDir(id), home = runtime_->CheckpointHome(id);
  const std::vector<std::string> leftovers = {
      dir + "/disk.img.reinstating",
      dir + "/disk.img.seeding",
      dir + "/agent.key.reinstating",
      dir + "/agent.key.seeding",
      home + "/checkpoint.partial/x.img",
      home + "/checkpoints/big.partial/disk.img",
      home + "/checkpoints/big.partial/image/checkpoint.img"};
  const std::vector<std::string> whole = {dir + "/disk.img", dir + "/agent.key",
                                          home + "/checkpoints/kept/image/checkpoint.img",
                                          home + "/checkpoints/kept/disk.img"};
  for (const auto& files : {leftovers, whole})
    for (const auto& f : files) {
      ASSERT_TRUE(os::MakeDirs(f.substr(0, f.rfind('/')), 0700).ok());
      ASSERT_TRUE(os::WriteFileAtomic(f, "x", 0600).ok());
    }
  StartRuntime();  // the next adaptd's
  for (const auto& f : leftovers) EXPECT_FALSE(os::Exists(f)) << f;
  EXPECT_FALSE(os::Exists(home + "/checkpoint.partial"));
  EXPECT_FALSE(os::Exists(home + "/checkpoints/big.partial"));
  for (const auto& f : whole) EXPECT_TRUE(os::Exists(f)) << f;
  EXPECT_EQ(runtime_->ListNamedCheckpoints(id).size(), 1u);
}

}  // namespace
}  // namespace adapt::runtime
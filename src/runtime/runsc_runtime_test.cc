// RunscRuntime against the real runsc: needs root, runsc, and the Debian 12 image that
// scripts/build-image.sh builds. Slow (each case boots a gVisor sandbox): ctest label "runtime".
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

#ifndef ADAPT_SHIM_PATH
#error "ADAPT_SHIM_PATH must name the adapt-shim binary"
#endif
#ifndef ADAPT_PAUSE_PATH
#error "ADAPT_PAUSE_PATH must name the adapt-pause binary"
#endif
#ifndef ADAPT_DEFAULT_IMAGES_DIR
#error "ADAPT_DEFAULT_IMAGES_DIR must name the directory scripts/build-image.sh fills"
#endif

namespace adapt::runtime {
namespace {

using namespace std::chrono_literals;

std::string ImageRootfs() {
  const char* env = std::getenv("ADAPT_IMAGES_DIR");
  std::string images = env && *env ? env : ADAPT_DEFAULT_IMAGES_DIR;
  return images + "/debian_12/rootfs";
}

class RunscRuntimeTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "runsc_runtime_test runs real sandboxes and must run as root";
    rootfs_ = ImageRootfs();
    ASSERT_TRUE(os::Exists(rootfs_ + "/bin/sh"))
        << "no Debian 12 image at " << rootfs_
        << ": run scripts/build-image.sh build/images (or set ADAPT_IMAGES_DIR)";

    state_dir_ = base_ + "/state";
    helpers_dir_ = base_ + "/helpers";
    ASSERT_TRUE(os::MakeDirs(helpers_dir_, 0755).ok());
    std::filesystem::copy_file(ADAPT_PAUSE_PATH, helpers_dir_ + "/adapt-pause");
    std::filesystem::permissions(helpers_dir_ + "/adapt-pause", std::filesystem::perms(0755));

    options_.state_dir = state_dir_;
    options_.shim_binary = ADAPT_SHIM_PATH;
    options_.helpers_dir = helpers_dir_;
    StartRuntime();
  }

  void StartRuntime() {
    runtime_ = std::make_unique<RunscRuntime>(options_);
    Status st = runtime_->Init();
    ASSERT_TRUE(st.ok()) << st.message();
  }

  void TearDown() override {
    // Whatever a failed case left behind: the runsc sandbox, mounts, cgroups, files. Best
    // effort: most of it is already gone after a passing case.
    for (const auto& id : launched_) {
      if (runtime_) (void)runtime_->Destroy(id, false);
      (void)os::RunCommand({"runsc", "--root=" + state_dir_ + "/runsc", "delete", "--force", id});
      (void)os::RemoveSandboxCgroup(id);
    }
    if (!state_dir_.empty()) {
      for (const auto& m : os::MountsUnder(state_dir_)) (void)os::Unmount(m);
    }
  }

  // Launches `argv` and waits until its shim reported the workload's end; its id.
  std::string LaunchUntilEnded(std::vector<std::string> argv) {
    LaunchRequest req = Request(std::move(argv));
    EXPECT_TRUE(runtime_->Launch(req).ok());
    WaitFor(req.spec.id, [](const Observation& o) { return o.state.phase == ShimPhase::kExited; });
    return req.spec.id;
  }

  LaunchRequest Request(std::vector<std::string> argv) {
    LaunchRequest req;
    req.spec.id = NewId("sbx");
    launched_.push_back(req.spec.id);
    req.spec.hostname = req.spec.id;
    req.spec.process.argv = std::move(argv);
    req.spec.process.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                            "HOME=/root"};
    req.spec.memory_mib = 256;
    req.image_rootfs = rootfs_;
    req.disk_mib = 64;
    req.network_none = true;
    return req;
  }

  // Observes `id` until `done` holds or `timeout` passes; returns the last observation.
  Observation WaitFor(const std::string& id, const std::function<bool(const Observation&)>& done,
                      std::chrono::seconds timeout = 60s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    Observation last;
    while (std::chrono::steady_clock::now() < deadline) {
      auto obs = runtime_->Observe(id);
      if (obs.ok()) {
        last = std::move(*obs);
        if (done(last)) return last;
      }
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "timed out waiting for sandbox " << id;
    return last;
  }

  // Runs sandboxes through a wrapper around runsc: a shell script that sets $sub (runsc's
  // subcommand) and $id (its last argument), runs `on_call`, then runsc itself.
  void UseRunscWrapper(const std::string& on_call) {
    options_.runsc = base_ + "/runsc-wrapper";
    ASSERT_TRUE(
        os::WriteFileAtomic(options_.runsc,
                            "#!/bin/sh\n"
                            "sub=\n"
                            "for a in \"$@\"; do\n"
                            "  case \"$a\" in --*) ;; *) [ -n \"$sub\" ] || sub=\"$a\" ;; esac\n"
                            "  id=\"$a\"\n"
                            "done\n" +
                                on_call + "\nexec runsc \"$@\"\n",
                            0755)
            .ok());
    StartRuntime();
  }

  // A key for the encrypted checkpoint store, so that checkpoints can be taken.
  static std::string StoreKey() {
    auto key = DeriveCheckpointStoreKey(std::string(32, 'm'));
    EXPECT_TRUE(key.ok()) << key.status().message();
    return key.ok() ? *key : std::string();
  }

  bool RunscKnows(const std::string& id) {
    auto r = os::RunCommand({"runsc", "--root=" + state_dir_ + "/runsc", "list"});
    EXPECT_TRUE(r.ok());
    if (r.ok() && r->output.find(id) != std::string::npos) return true;
    for (const auto& name : os::ListDir(state_dir_ + "/runsc")) {
      if (name.find(id) != std::string::npos) return true;
    }
    return false;
  }

  std::string rootfs_;
  os::TempDir tmp_{"runsc-test"};
  const std::string base_ = tmp_.path();
  std::string state_dir_;
  std::string helpers_dir_;
  // For a case that gives the runtime agents: alive until after TearDown's Destroy calls.
  AgentHub hub_;
  RunscOptions options_;
  std::unique_ptr<RunscRuntime> runtime_;
  std::vector<std::string> launched_;
};

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

// The fixture of the tests of RunscRuntime against the real runsc (runsc_runtime_test.cc: runs,
// networks, limits and checkpoints; runsc_runtime_teardown_test.cc: destroy and what runsc
// leaves). Needs root, runsc, and the Debian 12 image that scripts/build-image.sh builds.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "os/cgroup.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/process.h"
#include "os/temp_dir.h"
#include "runtime/agent_hub.h"
#include "runtime/checkpoint_store.h"
#include "runtime/runsc_runtime.h"

#ifndef ADAPT_SHIM_PATH
#error "ADAPT_SHIM_PATH must name the adapt-shim binary"
#endif
#ifndef ADAPT_PAUSE_PATH
#error "ADAPT_PAUSE_PATH must name the adapt-pause binary"
#endif
#ifndef ADAPT_DEFAULT_IMAGES_DIR
#error "ADAPT_DEFAULT_IMAGES_DIR must name the directory scripts/build-image.sh fills"
#endif

namespace adapt::runtime::testing_support {

using namespace std::chrono_literals;

inline std::string ImageRootfs() {
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

}  // namespace adapt::runtime::testing_support

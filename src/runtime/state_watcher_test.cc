#include "runtime/state_watcher.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "os/temp_dir.h"

namespace adapt::runtime {
namespace {

class StateWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    watcher_.SetListener([this](const std::string& id) {
      std::lock_guard lock(mu_);
      heard_.push_back(id);
      cv_.notify_all();
    });
  }
  void TearDown() override { watcher_.SetListener(nullptr); }
  // Writes `name` in `dir` the way the shim does: a temporary file renamed over it.
  void WriteAtomically(const std::string& dir, const std::string& name) {
    std::ofstream(dir + "/.tmp-" + name) << "{}";
    std::filesystem::rename(dir + "/.tmp-" + name, dir + "/" + name);
  }
  std::string MakeSandboxDir(const std::string& id) {
    std::string dir = root_ + "/" + id;
    std::filesystem::create_directories(dir);
    return dir;
  }
  // The ids heard within `wait`, once at least `n` came (or the wait ran out).
  std::vector<std::string> Heard(size_t n, std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, wait, [&] { return heard_.size() >= n; });
    return heard_;
  }

  os::TempDir tmp_{"watch"};
  const std::string root_ = tmp_.path();
  StateWatcher watcher_{"shim-state.json"};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> heard_;
};

TEST_F(StateWatcherTest, ANewStateFileIsHeardForItsSandboxOnly) {
  std::string a = MakeSandboxDir("sbx_a"), b = MakeSandboxDir("sbx_b");
  watcher_.Watch("sbx_a", a);
  watcher_.Watch("sbx_b", b);
  watcher_.Watch("sbx_a", a);        // again: one watch still
  WriteAtomically(a, "output.bin");  // another file: not a state change
  WriteAtomically(a, "shim-state.json");
  EXPECT_EQ(Heard(1, std::chrono::seconds(5)), std::vector<std::string>{"sbx_a"});
  WriteAtomically(b, "shim-state.json");
  EXPECT_EQ(Heard(2, std::chrono::seconds(5)), (std::vector<std::string>{"sbx_a", "sbx_b"}));
}

TEST_F(StateWatcherTest, UnwatchedAndRemovedSandboxesAreNotHeard) {
  std::string a = MakeSandboxDir("sbx_a"), b = MakeSandboxDir("sbx_b");
  watcher_.Watch("sbx_a", a);
  watcher_.Watch("sbx_b", b);
  watcher_.Unwatch("sbx_a");
  std::filesystem::remove_all(b);  // its watch ends with it
  std::string c = MakeSandboxDir("sbx_c");
  watcher_.Watch("sbx_c", c);
  WriteAtomically(a, "shim-state.json");
  WriteAtomically(c, "shim-state.json");
  // sbx_c's event comes after sbx_a's would have: only it is heard.
  EXPECT_EQ(Heard(1, std::chrono::seconds(5)), std::vector<std::string>{"sbx_c"});
  EXPECT_EQ(Heard(2, std::chrono::milliseconds(300)), std::vector<std::string>{"sbx_c"});
}

}  // namespace
}  // namespace adapt::runtime

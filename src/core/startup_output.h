// Following a sandbox's startup output while it is produced (the dashboard's sandbox page,
// GET /v1/sandboxes/{id}/startup/stream). The shim writes the running startup command's
// output to its file at most every 200 ms (runtime/shim_main.cc); each Next reads the sandbox
// again, as Get shows it (its live output while it runs, redacted as GET redacts it, then the
// recorded result), and says what is new since the previous Next. The follower holds no
// thread and no lock: its caller calls Next every kInterval. Not thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/sandbox_view.h"

namespace adapt::core {

struct StartupOutputUpdate {
  // What was appended since the previous update; when `replaced`, the whole retained output.
  std::string stdout_text;
  std::string stderr_text;
  // The output outgrew what is kept (256 KiB): its oldest bytes were dropped, and the texts
  // replace everything sent so far.
  bool replaced = false;
  // Set on the last update: the sandbox, no longer provisioning or running (its startup
  // command ended, or it was stopped or deleted). Its startup result holds the whole output.
  std::optional<Sandbox> ended;
};

class StartupOutputFollower {
 public:
  // How often a caller asks: about the shim's own write interval.
  static constexpr std::chrono::milliseconds kInterval{250};
  using Read = std::function<Result<Sandbox>()>;

  explicit StartupOutputFollower(Read read) : read_(std::move(read)) {}

  // Reads the sandbox once. An error is the read's (the sandbox gone for this caller: NotFound).
  Result<StartupOutputUpdate> Next();

 private:
  Read read_;
  std::string stdout_sent_;
  std::string stderr_sent_;
};

}  // namespace adapt::core

// JobAttempts: runs one attempt of a one-shot job (a fresh sandbox, the command, the sandbox
// deleted) for JobService, which decides what an attempt's end means (retry or not). The
// daemon's is SandboxJobAttempts (core/sandbox_job_attempts.h); unit tests script a fake one.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "store/job_store.h"

namespace adapt::core {

// How an attempt ended.
struct AttemptEnd {
  enum class Kind {
    kExited,          // the command ran and ended (exit_code, or signalled): the application's
    kTimedOut,        // the command ran past the job's timeout: the application's
    kRefused,         // the sandbox or command was refused (bad image, unknown secret): final
    kQuota,           // a limit of the organization refused the sandbox (skipped_quota)
    kCancelled,       // cancel_automation_run asked for it
    kInfrastructure,  // the sandbox could not start or died under the command: retried
  };
  Kind kind = Kind::kInfrastructure;
  std::optional<int> exit_code;
  std::string error;
  std::string sandbox_id;
  std::string command_id;
  std::string stdout_text;  // the latest 64 KiB, valid UTF-8, secrets redacted
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
};

class JobAttempts {
 public:
  // What an attempt tells as it goes: the sandbox it made, then the command it started.
  struct Progress {
    std::function<void(const std::string& sandbox_id)> sandbox;
    std::function<void(const std::string& command_id)> command;
  };
  using Done = std::function<void(AttemptEnd)>;

  virtual ~JobAttempts() = default;
  // Starts attempt `run` of `job` and returns at once; `done` is called exactly once, on
  // another thread, after the attempt's sandbox is gone (or deletion is under way).
  virtual void Start(const store::JobRecord& job, const store::RunRecord& run, Progress progress,
                     Done done) = 0;
  // Takes over attempt `run` of `job` that a previous adaptd left running (its sandbox_id and
  // command_id recorded) and returns at once: its command is followed to its end and reported
  // as Start's attempt would be (the sandbox deleted first); a command its sandbox's agent no
  // longer runs, or a sandbox gone, ends kInfrastructure. Cancel works on it as on any attempt.
  virtual void Reattach(const store::JobRecord& job, const store::RunRecord& run, Done done) = 0;
  // Asks attempt `run_id` to end (its command's process group gets SIGTERM, then SIGKILL
  // after the cancel grace period; a sandbox still starting is not used); its `done` then says
  // kCancelled. False when it does not run here.
  virtual bool Cancel(const std::string& run_id) = 0;
  // A sandbox a previous adaptd made for an attempt it did not see end: deleted, best effort.
  virtual void Abandon(const std::string& org_id, const std::string& sandbox_id) = 0;
};

// The latest `limit` bytes of `text` (valid UTF-8), cut at a character boundary; `truncated`
// becomes true when something was dropped.
std::string LatestBytes(const std::string& text, size_t limit, bool& truncated);

inline constexpr size_t kRunOutputBytes = 64 * 1024;

// A cancel was asked for the attempt: it ended cancelled, unless its command exited with a code
// of its own (not by a signal) first.
void CountAsCancelled(AttemptEnd& end);

// The status of a run (a job's or an automation's) whose attempt ended so: succeeded, failed,
// skipped_quota, cancelled or infrastructure_failed.
std::string RunStatusOf(const AttemptEnd& end);

// Records on `run` how its attempt ended at `now`: the status, exit code, command and the latest
// kRunOutputBytes of each stream. The error stays the caller's to set.
void RecordAttemptEnd(store::RunRecord& run, const AttemptEnd& end, int64_t now);

// cancel_automation_run's grace period (a job's run or an automation's) unless adaptd's
// --run-cancel-grace-seconds says otherwise: the command's process group gets SIGTERM, then
// SIGKILL once the grace period passed if it still runs.
inline constexpr std::chrono::seconds kDefaultRunCancelGrace{10};

}  // namespace adapt::core

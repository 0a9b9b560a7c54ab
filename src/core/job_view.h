// Job and Run: how the core shows one-shot jobs and their runs to its callers (REST and MCP map
// them to their words). A job's env values never leave the daemon: the view keeps their names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/job_store.h"

namespace adapt::core {

struct Job {
  std::string id;
  std::string status;       // queued, running, succeeded, failed, cancelled, infrastructure_failed
  store::JobTemplate spec;  // env: names, each value empty
  int max_attempts = 0;
  int attempts = 0;              // attempts started so far
  std::string last_run_id;       // empty before the first attempt
  std::optional<int> exit_code;  // of the final attempt
  std::string error;             // why it ended without an exit code
  int64_t created_at = 0;        // ms since the epoch
  int64_t updated_at = 0;
  int64_t finished_at = 0;  // 0 while not terminal

  bool terminal() const { return status != "queued" && status != "running"; }
};

// What a job's run used: the ledger's usage entries (core/usage_meter.h) of the sandbox its
// attempt ran in, summed (each attempt gets a fresh sandbox, so they are the run's alone).
// Quantities as the ledger's: cpus x milliseconds, MiB x milliseconds, GPUs x milliseconds;
// the cost in nano-units.
struct RunUsage {
  int64_t cpu_millis = 0;
  int64_t memory_mib_millis = 0;
  int64_t gpu_millis = 0;
  int64_t amount_nanos = 0;
  int64_t entries = 0;  // usage entries summed (0 before the first metering pass)
};

// A run's record is what callers see (its output is already bounded and redacted), with its
// usage: set for a job's run once it has a sandbox; unset for an automation's run (its target
// sandbox is shared by its runs, its usage is not split per run) and before a sandbox.
struct Run : store::RunRecord {
  std::optional<RunUsage> usage;
};

struct JobPage {
  std::vector<Job> items;  // newest first
  std::optional<std::string> next_cursor;
};

struct RunPage {
  std::vector<Run> items;  // newest first
  std::optional<std::string> next_cursor;
};

inline Job ViewOf(const store::JobRecord& r) {
  Job j;
  j.id = r.id;
  j.status = r.status;
  j.spec = r.spec;
  for (auto& [name, value] : j.spec.env) value.clear();
  j.max_attempts = r.max_attempts;
  j.attempts = r.attempts;
  j.last_run_id = r.last_run_id;
  j.exit_code = r.exit_code;
  j.error = r.error;
  j.created_at = r.created_at;
  j.updated_at = r.updated_at;
  j.finished_at = r.finished_at;
  return j;
}

}  // namespace adapt::core

// SubmitJob: a one-shot job as the core takes it (REST's POST /v1/jobs, MCP's
// submit_sandbox_job, `adapt job submit`), and its validation into the template the job row
// keeps (store::JobTemplate). The sandbox fields are checked by ValidateCreateSandbox and the
// command by ValidateRunCommand, so a job accepts exactly what a sandbox and a command would.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/field_names.h"
#include "core/sandbox_request.h"
#include "store/job_store.h"

namespace adapt::core {

inline constexpr int kJobMaxAttemptsMin = 1, kJobMaxAttemptsMax = 10, kJobMaxAttemptsDefault = 3;
inline constexpr int kJobTimeoutSecondsDefault = 600;

struct SubmitJob {
  // Each attempt's fresh instant sandbox: image (unset: the default), cpu, memory_mib,
  // disk_mib, env, secrets and network.egress are read; anything else an edge must refuse.
  CreateSandbox sandbox;
  std::vector<std::string> argv;  // an edge turns a shell string into {"/bin/sh", "-c", it}
  std::string cwd;                // empty: the image's
  std::optional<int64_t> timeout_seconds;  // the command's and the sandbox's TTL; 1..86400
  std::optional<int64_t> max_attempts;     // 1..10, default 3
};

struct ValidJob {
  store::JobTemplate spec;
  int max_attempts = kJobMaxAttemptsDefault;
};

// The sandbox each attempt of `req` creates: req.sandbox, instant, living as long as the
// job's timeout (unchecked: ValidateSubmitJob checks it).
CreateSandbox AttemptSandbox(const SubmitJob& req);

// The first problem of `req`, naming its field as `names` says (core names: image, cpu,
// memory_mib, disk_mib, env, secrets, network.egress, argv, cwd, timeout_seconds,
// max_attempts).
Result<ValidJob> ValidateSubmitJob(const SubmitJob& req, const std::string& default_image,
                                   const FieldNames& names = {});

}  // namespace adapt::core

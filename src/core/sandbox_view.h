// Sandbox: how the core shows a sandbox to its callers (REST and MCP map it to their words):
// the stored record, with the live startup output of a running sandbox when there is one.
// Environment values never appear; they are redacted from output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/sandbox_endpoint.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_request.h"
#include "runtime/output_ring.h"
#include "store/records.h"

namespace adapt::core {

// Where an environment variable came from: the create's env, or an attached secret.
struct EnvironmentSource {
  std::string name;
  std::string source;              // "env" or "secret"
  std::optional<int64_t> version;  // the secret's version
};

// A startup command's settings and, once known, its outcome.
struct StartupView {
  StartupConfig settings;
  std::optional<int64_t> exit_code;
  std::optional<std::string> signal;
  std::optional<std::string> error;
  std::optional<std::string> started_at;  // RFC 3339
  std::optional<std::string> finished_at;
  std::string stdout_text;
  std::string stderr_text;
  bool truncated = false;
};

struct Sandbox {
  std::string id;
  std::string status;
  int64_t created_at = 0;  // ms since epoch
  int64_t updated_at = 0;
  std::optional<int64_t> expires_at;
  std::optional<int64_t> deleted_at;
  SandboxConfig config;  // cpu, memory, image, network, labels, attached secrets, ...
  std::optional<std::string> termination_reason;
  std::optional<std::string> error;
  std::vector<Endpoint> endpoints;
  std::optional<HibernationSummary> hibernation;  // set while hibernated or starting
  std::vector<EnvironmentSource> environment;     // names only, in name order
  std::optional<StartupView> startup;             // unset: an interactive sandbox
};

struct SandboxPage {
  std::vector<Sandbox> items;
  std::optional<std::string> next_cursor;
};

// Secrets to redact from a sandbox's output: its env values of 3 bytes or more (shorter
// ones would blank out ordinary output).
std::vector<std::string> RedactionValues(const store::SandboxRecord& r);

// Fills result's stdout/stderr/truncated from `output`, redacted and made valid UTF-8. `open`:
// the startup command still runs, so an end that could begin a secret (or an unfinished
// character) is left out until more comes.
void ApplyOutput(const store::SandboxRecord& r, const runtime::OutputRing& output, bool open,
                 store::SandboxResult& result);

// `live`: the running sandbox's current output, if any.
Sandbox ViewOf(const store::SandboxRecord& r, const runtime::OutputRing* live = nullptr);

}  // namespace adapt::core

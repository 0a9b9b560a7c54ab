// A sandbox's stored settings and startup outcome, as plain typed data. core/ gives them their
// meaning (core/sandbox_request.h validates a create into a SandboxConfig); the SQLite store
// encodes them as JSON text in its own columns (sandbox_config_codec.h), which no other module
// sees.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace adapt::store {

struct AllowRuleConfig {
  std::string protocol;  // "tcp" or "udp"
  std::string address;   // canonical literal IPv4 or IPv6
  int port = 0;

  bool operator==(const AllowRuleConfig&) const = default;
};

struct HostnameRuleConfig {
  std::string hostname;  // exact, lower case
  int port = 0;

  bool operator==(const HostnameRuleConfig&) const = default;
};

// The sandbox's network as created (seed 001).
struct NetworkConfig {
  std::string egress = "open";  // "open", "none" or "allowlist"
  std::vector<AllowRuleConfig> allow;
  std::optional<std::string> dns;  // the resolver the sandbox may query directly
  std::vector<HostnameRuleConfig> hostnames;
  // Open egress created with network.dns null: no resolver at all (allowlist's null needs no
  // flag, having no default; open's unset dns means adaptd's --dns in records made before).
  bool dns_disabled = false;

  bool operator==(const NetworkConfig&) const = default;
};

// What the sandbox runs at boot. Unset lists inherit from the image.
struct StartupConfig {
  std::string mode = "image";  // "image" or "command"
  std::optional<std::vector<std::string>> argv;
  std::optional<std::vector<std::string>> args;
  std::optional<std::vector<std::string>> entrypoint;
  std::optional<std::string> cwd;
  std::optional<std::string> user;

  bool operator==(const StartupConfig&) const = default;
};

// An organization secret captured at creation: its name and version, never its value.
struct AttachedSecretConfig {
  std::string name;
  int64_t version = 0;

  bool operator==(const AttachedSecretConfig&) const = default;
};

// Whether a warm pool served the create, and why not.
struct PoolUseConfig {
  bool used = false;
  std::string reason;  // empty when used

  bool operator==(const PoolUseConfig&) const = default;
};

// The named checkpoint a fork was made from (its first start restores a copy of it).
struct ForkSourceConfig {
  std::string sandbox_id;
  std::string checkpoint;  // the checkpoint's name

  bool operator==(const ForkSourceConfig&) const = default;
};

// The create request with every default filled in.
struct SandboxConfig {
  int cpu = 1;
  int64_t memory_mib = 1024;
  // GPUs reserved (metered as GPU-milliseconds). Always 0 on this host: its runsc has no
  // --nvproxy, so a create asking for a GPU is refused before a record is made.
  int gpus = 0;
  int64_t disk_mib = 2048;
  std::optional<int64_t> ttl_seconds;  // unset: no expiry
  std::map<std::string, std::string> labels;
  std::string image;                    // a reference (an imageId resolved to its reference)
  std::optional<std::string> image_id;  // "img_..." when the create named one
  NetworkConfig network;
  std::optional<StartupConfig> startup;  // unset: interactive (adapt-pause)
  std::string security_profile = "restricted";
  std::string startup_class = "instant";  // "instant" or "durable"
  std::optional<std::string> storage;     // durable: the volume mounted at /workspace
  std::vector<AttachedSecretConfig> secrets;
  std::optional<PoolUseConfig> pool;  // set when adaptd has warm pools
  // Hibernated after this many seconds without use (core/idle_tracker.h); unset: never.
  std::optional<int64_t> idle_timeout_seconds;
  // The organization's PostgreSQL database in its environment (DATABASE_URL, PG*), set at
  // each provisioning (core/database_service.h).
  bool database = false;
  // Set for a fork (POST /v1/sandboxes {"fromCheckpoint"}): the rest is its source's config.
  std::optional<ForkSourceConfig> forked_from;

  bool operator==(const SandboxConfig&) const = default;
};

// Where a stop or start of the sandbox got (core/sandbox_hibernation.h gives the phases).
struct HibernationState {
  std::string phase;  // "stopping", "stopped", "starting"
  bool workspace_kept = false;
  bool processes_saved = false;
  int64_t stopped_at = 0;
  std::string note;
  bool restart = false;

  bool operator==(const HibernationState&) const = default;
};

// The startup command's outcome (set for sandboxes with a startup) and the hibernation state.
struct SandboxResult {
  std::optional<int64_t> exit_code;
  std::optional<std::string> signal;  // "SIGKILL"
  std::optional<std::string> error;
  std::optional<std::string> started_at;  // RFC 3339
  std::optional<std::string> finished_at;
  std::string stdout_text;  // the final output (redacted), once the command ended
  std::string stderr_text;
  bool truncated = false;
  std::optional<HibernationState> hibernation;

  bool operator==(const SandboxResult&) const = default;
};

}  // namespace adapt::store

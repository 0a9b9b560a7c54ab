// CreateSandbox: the typed create request, as an edge (REST, MCP) fills it from its own
// vocabulary, and ValidateCreateSandbox, which checks it against seed 001's limits and fills
// the defaults. The edges check the shape of their JSON (types, unknown fields); everything
// about values is checked here, once. The first problem found is returned naming its field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "core/field_names.h"
#include "core/image_policy.h"
#include "store/sandbox_config.h"

namespace adapt::core {

using SandboxConfig = store::SandboxConfig;
using NetworkConfig = store::NetworkConfig;
using StartupConfig = store::StartupConfig;

struct AllowRuleRequest {
  std::string protocol;
  std::string address;
  int64_t port = 0;
};

struct HostnameRuleRequest {
  std::string hostname;
  int64_t port = 0;
};

struct NetworkRequest {
  std::optional<std::string> egress;  // unset: "open"
  std::optional<std::vector<AllowRuleRequest>> allow;
  std::optional<std::vector<HostnameRuleRequest>> hostnames;
  std::optional<std::string> dns;
  bool dns_cleared = false;  // dns given as null (refused while hostname rules are present)
};

// A list that is absent, given as null (inherit), or given: `given` tells absent from null.
struct StartupList {
  bool given = false;
  std::optional<std::vector<std::string>> items;
};

struct StartupRequest {
  std::optional<std::string> mode;  // unset: "command" when argv is given, else "image"
  StartupList argv;
  StartupList args;
  StartupList entrypoint;
  std::optional<std::string> cwd;
  std::optional<std::string> user;
};

struct CreateSandbox {
  std::optional<int64_t> cpu;
  std::optional<int64_t> memory_mib;
  std::optional<int64_t> disk_mib;
  std::optional<int64_t> ttl_seconds;
  bool no_expiry = false;  // ttl given as null: the sandbox never expires
  std::map<std::string, std::string> labels;
  std::optional<std::string> image;     // unset: the default image
  std::optional<std::string> image_id;  // an imported image ("img_..."), instead of image
  std::optional<NetworkRequest> network;
  std::optional<StartupRequest> startup;
  std::map<std::string, std::string> env;
  std::vector<std::string> secrets;  // organization secrets to attach, by name
  bool gpu = false;                  // a GPU was asked for (none are available here)
  std::optional<std::string> security_profile;
  std::optional<std::string> startup_class;
  std::optional<std::string> storage;
  std::optional<int64_t> idle_timeout_seconds;  // unset: never hibernated for idleness
  bool database = false;  // the organization's database in the environment (needs a network)
  // Which edge asks (the image policy differs): set by the edge, never by its caller's JSON.
  RequestSurface surface = RequestSurface::kApi;
  // Labels under the reserved "platform." prefix that adaptd sets on sandboxes it makes itself
  // (an app's replica, an automation's replacement), so that one a crash left behind is found:
  // set by the core only, never from a caller's JSON, whose labels may not use the prefix.
  std::map<std::string, std::string> platform_labels;
};

// The reserved prefix of label keys (seed 001: "Keys beginning with platform. are reserved").
inline constexpr std::string_view kPlatformLabelPrefix = "platform.";
// `labels` without the reserved ones: what a sandbox made from another's settings (a fork, a
// replacement) carries over as its caller's own.
std::map<std::string, std::string> CallerLabels(const std::map<std::string, std::string>& labels);

// A fork: a new sandbox from a named checkpoint, with its memory, processes and files, the
// settings of the checkpoint's sandbox and a network of its own (address, egress rules).
struct ForkSandbox {
  std::string from_checkpoint;         // "<sandboxId>/<checkpoint name>"
  std::optional<int64_t> ttl_seconds;  // unset: the checkpoint's sandbox's ttlSeconds
  bool no_expiry = false;              // ttl given as null: the fork never expires
  std::optional<std::map<std::string, std::string>> labels;  // unset: the source's
};

// A create that passed validation: the config as it will be stored, and the env apart
// (values never leave the daemon).
struct NewSandbox {
  SandboxConfig config;
  std::map<std::string, std::string> env;
  // Names of the organization secrets to attach (checked for form only; the service looks
  // them up and captures their values and versions).
  std::vector<std::string> secrets;
};

// `default_image` is used when neither image nor image_id is given; `names` are the caller's
// names for the fields its errors are about.
Result<NewSandbox> ValidateCreateSandbox(const CreateSandbox& req, const std::string& default_image,
                                         const FieldNames& names = {});

}  // namespace adapt::core

// Turns `adapt sandbox create` flags into the POST /v1/sandboxes body. Only the command-line
// syntax is checked here (KEY=VALUE pairs, integers); ranges and meanings are adaptd's to judge.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace adapt::cli {

// The flags as typed; an empty string means the flag was not given.
struct SandboxCreateFlags {
  std::string cpu;
  std::string memory_mib;
  std::string disk_mib;
  std::string ttl;                  // seconds, or "none" for no expiry
  std::string idle_timeout;         // seconds unused before it hibernates
  std::vector<std::string> labels;  // KEY=VALUE each
  std::vector<std::string> env;     // KEY=VALUE each
  std::string image;
  bool run_image = false;
  std::string egress;
  std::string storage;           // persistent storage name, mounted at /workspace
  std::string startup_class;     // "durable" or "instant"
  std::string security_profile;  // "restricted" or "developer"
  bool database = false;         // the organization's database in the environment
  std::string from_checkpoint;   // "SANDBOX/NAME": a fork of that named checkpoint
  std::string gpu;               // a GPU type (adapt gpu ls): {"gpu": {"type": ...}}
  // The startup argv given after "--"; nullopt when there was no "--".
  std::optional<std::vector<std::string>> command;
};

// Splits "KEY=VALUE" at the first '='; the value may be empty, the key may not.
// Errors name `flag`: "--label: expected KEY=VALUE, got 'x'".
Result<std::pair<std::string, std::string>> ParseKeyValue(std::string_view flag,
                                                          std::string_view text);

// Parses a --data document; it must be a JSON object. `source` names it in errors.
Result<nlohmann::json> ParseDataDocument(std::string_view text, std::string_view source);

// Starts from `data` (the --data object, or null) and sets over it each field a flag gives:
// cpu, memoryMiB, diskMiB, ttlSeconds (null for "none"), idleTimeoutSeconds, labels and env (merged
// key by key), image (dropping imageId), network.egress, storage, startupClass, securityProfile,
// fromCheckpoint (a fork: adaptd accepts only ttlSeconds and labels beside it), gpu {"type"}, and
// startup
// {"mode":"image"} for
// --run-image or
// {"mode":"command","argv":[...]} for a command. Other fields of `data` pass through.
// Errors are kInvalidArgument and name the flag.
Result<nlohmann::json> BuildCreateBody(const SandboxCreateFlags& flags,
                                       const nlohmann::json& data = nullptr);

}  // namespace adapt::cli

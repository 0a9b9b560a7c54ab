// The rows the store keeps. Plain data: the meaning of each field belongs to core/.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace adapt::store {

struct OrgRecord {
  std::string id;
  std::string name;
  bool is_admin = false;
  int64_t created_at = 0;
};

struct ApiKeyRecord {
  std::string id;
  std::string org_id;
  std::string name;
  std::string key_hash;  // SHA-256 of the key text; the text itself is never stored
  bool is_admin = false;
  int64_t created_at = 0;
};

struct SandboxRecord {
  int64_t seq = 0;  // insertion order: lists and cursors use it
  std::string id;
  std::string org_id;
  std::string status;
  nlohmann::json config;                   // the create request with defaults filled in
  std::map<std::string, std::string> env;  // values: never leave the daemon
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> expires_at;
  std::optional<int64_t> deleted_at;
  std::string termination_reason;                    // empty while none
  std::string error;                                 // empty while none
  nlohmann::json result = nlohmann::json::object();  // startup result fields
};

struct EventRecord {
  int64_t seq = 0;
  std::string org_id;
  std::string sandbox_id;
  std::string status;
  int64_t at = 0;
};

// A command run in a sandbox. `data` is its wire object (argv, cwd, exit status, output, ...),
// owned by core/; the columns the store queries on are kept beside it.
struct CommandRecord {
  int64_t seq = 0;
  std::string id;
  std::string org_id;
  std::string sandbox_id;
  std::string status;
  nlohmann::json data = nlohmann::json::object();
  int64_t created_at = 0;
};

// An image an organization pulled or imported (/v1/images); `data` holds the rest.
struct ImageRecord {
  std::string id;
  std::string org_id;
  std::string reference;
  std::string status;  // "pulling", "ready", "failed"
  nlohmann::json data = nlohmann::json::object();
  int64_t created_at = 0;
};

struct IdempotencyKey {
  std::string key;
  std::string body_hash;
};

}  // namespace adapt::store

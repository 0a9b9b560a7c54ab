// The rows the store keeps. Plain data: the meaning of each field belongs to core/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/sandbox_config.h"

namespace adapt::store {

struct OrgRecord {
  std::string id;
  std::string name;
  bool is_admin = false;
  int64_t created_at = 0;
  // False for an organization a person signed up for until it registers (register_user);
  // operator-made organizations are registered when created.
  bool registered = true;
  // When its deletion began (core/org_deletion.h), millis; 0 while it is not being deleted.
  int64_t deleting_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

struct ApiKeyRecord {
  std::string id;
  std::string org_id;
  std::string name;
  std::string key_hash;  // SHA-256 of the key text; the text itself is never stored
  bool is_admin = false;
  int64_t created_at = 0;
  int64_t expires_at = 0;  // ms since the epoch; 0: never (core::Auth refuses it from then on)
  int64_t seq = 0;         // insertion order, set by the store when listed: cursors use it
};

// A person who signs in to an organization (the OAuth authorize page) with email and password.
// `email` is normalized (core/user_email.h) and unique across organizations, so that a sign-in
// names one user; `password_hash` is the KDF's self-describing text (core/password_hash.h).
struct UserRecord {
  std::string id;
  std::string org_id;
  std::string email;
  std::string password_hash;
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// A web dashboard sign-in (store/dashboard_session_store.h).
struct DashboardSessionRecord {
  std::string token_hash;  // SHA-256 (hex) of the cookie's token; the token is never kept
  std::string org_id;
  std::string key_id;  // the user (usr_...) or the API key it was opened with
  int64_t created_at = 0;
  int64_t expires_at = 0;
  int64_t revoked_at = 0;  // 0: not revoked
};

struct SandboxRecord {
  int64_t seq = 0;  // insertion order: lists and cursors use it
  std::string id;
  std::string org_id;
  std::string status;
  SandboxConfig config;                    // the create request with defaults filled in
  std::map<std::string, std::string> env;  // values: never leave the daemon
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::optional<int64_t> expires_at;
  std::optional<int64_t> deleted_at;
  std::string termination_reason;  // empty while none
  std::string error;               // empty while none
  SandboxResult result;            // startup outcome, hibernation
};

struct EventRecord {
  int64_t seq = 0;
  std::string org_id;
  std::string sandbox_id;
  std::string status;
  int64_t at = 0;
  // A deployed app's event (issue 20) rather than a sandbox's status: sandbox_id is empty,
  // status is the event's type ("replica.ready", ...), replica_id the replica it is about.
  std::string app_id = {};
  std::string replica_id = {};
  std::string message = {};
  // An account alert (issue 16) rather than either: sandbox_id and app_id are empty, status is
  // its type ("credit_80", "credit_100", "limit_80", "limit_100"), alert_limit the plan
  // limit's name (limit alerts only), alert_value and alert_used what was compared (credits
  // and usage in nano-units; a limit's value and its use in the limit's unit).
  bool alert = false;
  std::string alert_limit = {};
  int64_t alert_value = 0;
  int64_t alert_used = 0;
  // A run's status change (issue 18): sandbox_id is empty (a sandbox's own stream carries
  // only its status), status is the run's, run_sandbox_id the sandbox the run used.
  std::string run_id = {};
  std::string automation_id = {};
  std::string job_id = {};
  int attempt = 0;
  std::optional<int> exit_code = {};
  std::string run_sandbox_id = {};
};

// A command run in a sandbox: what was asked, and once it ended, how. The SQLite store keeps
// the columns it queries on (id, org, sandbox, status, created_at) beside one JSON column for
// the rest (store/command_record_codec.h).
struct CommandRecord {
  int64_t seq = 0;
  std::string id;
  std::string org_id;
  std::string sandbox_id;
  std::string status;  // running, exited, timeout, killed, lost or failed (to start)
  std::vector<std::string> argv;
  std::string cwd;   // empty: the sandbox's
  std::string user;  // as the request gave it; empty: the sandbox's
  int timeout_seconds = 600;
  std::optional<int> exit_code;  // unset while running, when signalled, or lost
  std::optional<int> signal;     // the signal that ended it
  std::string stdout_text;       // the latest 1 MiB of each stream, redacted, valid UTF-8
  std::string stderr_text;
  bool truncated = false;  // earlier output was dropped
  int64_t created_at = 0;  // ms since the epoch; also when it started
  std::optional<int64_t> finished_at;
  std::string termination_reason;        // empty while running
  std::string error;                     // empty while none
  std::string served_by = "runsc-exec";  // or "agent"
};

// The egress policy a sandbox's network was made with, as the firewall applies it (net/policy.h
// gives it its meaning; egress "none" has no network, so never a record).
struct NetworkPolicyRecord {
  std::string egress = "open";  // "open" or "allowlist"
  std::vector<AllowRuleConfig> allow;
  std::string dns;  // the resolver the sandbox may query directly; empty: none
  std::vector<HostnameRuleConfig> hostnames;
  std::string dns_upstream;  // hostname rules: where adapt's DNS proxy asks
  bool dns_all_names = false;

  bool operator==(const NetworkPolicyRecord&) const = default;
};

// A sandbox's network attachment: written before its namespace, links and rules are made,
// so that a restarted adaptd can re-check or remove them. `slot` picks the address block in
// the pool and the interface names; the addresses and the policy are net/'s.
struct NetworkRecord {
  std::string sandbox_id;
  int64_t slot = 0;
  std::string address;        // the sandbox's IPv4 address
  std::string host_address;   // the host end of its veth
  std::string address6;       // its IPv6 address; empty: none
  std::string host_address6;  // the host end's IPv6 address
  NetworkPolicyRecord policy;
  int64_t created_at = 0;
};

// An image an organization pulled or imported (/v1/images).
struct ImageRecord {
  std::string id;
  std::string org_id;
  std::string reference;
  std::string status;  // "pulling", "importing", "ready", "failed"
  bool imported = false;
  std::string import_name;    // the name the archive gave an import ("" none)
  std::string import_format;  // the archive's format
  std::string digest;         // "" until ready
  std::optional<int64_t> size;
  std::string platform;
  std::string config_json;  // the image config's `config` object as JSON text ("" none)
  std::string error;        // why it failed ("" none)
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// A public route to a sandbox port (ingress): `hostname` is unique, under the ingress domain.
struct EndpointRecord {
  std::string id;
  std::string org_id;
  std::string sandbox_id;
  int port = 0;
  std::string hostname;
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

struct IdempotencyKey {
  std::string key;
  std::string body_hash;
};

// OAuth 2.1 (MCP authorization): a dynamically registered public client.
struct OAuthClientRecord {
  std::string id;
  std::string name;
  std::vector<std::string> redirect_uris;
  int64_t created_at = 0;
};

// An authorization code, access token or refresh token, stored by the SHA-256 of its text.
// It acts for one organization (through the API key the user signed in with) and expires.
struct OAuthGrantRecord {
  std::string hash;
  std::string kind;  // "code", "access", "refresh"
  std::string client_id;
  std::string org_id;
  std::string key_id;
  std::string redirect_uri;    // codes: where the code was sent
  std::string code_challenge;  // codes: PKCE S256 challenge
  std::string resource;        // the MCP resource URL it is for
  int64_t expires_at = 0;
  int64_t created_at = 0;
};

// A persistent storage volume (/v1/storage): an encrypted ext4 image owned by one organization,
// unique by (org_id, name). `status`: "creating" (written before the image is made),
// "ready", "deleting" (written before the image is removed).
struct VolumeRecord {
  std::string id;
  std::string org_id;
  std::string name;
  int64_t size_mib = 0;
  std::string status;
  std::string key_identifier;  // hex; the LUKS key's identifier, "" until first opened
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// An object of an organization's object storage: its bytes are the file `blob` in the object
// store's blob directory (named at random, so no key ever becomes a path).
struct ObjectRecord {
  std::string org_id;
  std::string key;
  std::string blob;
  uint64_t size = 0;
  std::string sha256;  // hex
  std::string etag;    // hex MD5 (S3's ETag), or md5-of-md5s "-N" after a multipart upload
  std::string content_type;
  int64_t created_at = 0;
};

// A storage token: reaches one organization's objects and nothing else. Its secret is
// derived from the id with the store key, never kept.
struct StorageTokenRecord {
  std::string id;
  std::string org_id;
  std::string sandbox_id;  // "" unless made for a sandbox
  std::string name;
  int64_t expires_at = 0;
  int64_t revoked_at = 0;  // 0: not revoked
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// A static website: a stable hostname serving its current release.
struct SiteRecord {
  std::string id;
  std::string org_id;
  std::string name;
  std::string hostname;
  std::string release_id;
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

// One file of a site release: its own copy of the object's bytes.
struct SiteFileRecord {
  std::string blob;  // in the object store's blob directory
  uint64_t size = 0;
  std::string content_type;
  std::string sha256;  // hex

  bool operator==(const SiteFileRecord&) const = default;
};

// An immutable copy of an object prefix: `files` by their path below the prefix.
struct SiteReleaseRecord {
  std::string id;
  std::string site_id;
  std::string org_id;
  std::string source_prefix;
  std::map<std::string, SiteFileRecord> files;
  int64_t created_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when read: newer releases are larger
};

// A warm pool member: a sandbox booted ahead of any request, owned by no organization until a
// create claims it (then it becomes a SandboxRecord with the same id). Written before its boot.
struct PoolMemberRecord {
  std::string id;        // the runtime's sandbox id (sbx_...)
  std::string pool_key;  // image and shape it was booted for (core/warm_pool.h)
  std::string state;     // booting | ready
  int64_t created_at = 0;
};

// An organization secret (/v1/secrets): only its current version is kept. `ciphertext` is
// the value sealed by core/ (AES-256-GCM, hex); the plain value is never stored.
struct SecretRecord {
  std::string org_id;
  std::string name;
  int64_t version = 0;
  std::string ciphertext;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t seq = 0;  // insertion order, set by the store when listed: cursors use it
};

}  // namespace adapt::store

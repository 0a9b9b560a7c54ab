// DaemonConfig: every setting of adaptd, with its default. Filled in this order, later
// winning: defaults, the config file (--config, JSON with these camelCase keys), the
// environment (ADAPT_*), flags.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::daemon {

struct DaemonConfig {
  // Address the API listens on; port 0 picks a free one.
  std::string listen = "127.0.0.1:8080";
  // All state: the database, sandbox disks, runsc's state, the admin key.
  std::string state_dir = "/var/lib/adapt";
  // Local images (default: <state_dir>/images).
  std::string images_dir;
  // The image used when a create names neither image nor imageId. Seed 001 says
  // ubuntu:24.04; Ubuntu's images cannot be fetched on hosts without registry access, so
  // the default here is the Debian 12 image that the set-up builds.
  std::string default_image = "debian:12";
  // The runsc binary.
  std::string runsc = "runsc";
  // Where adapt-shim and adapt-pause are (default: beside adaptd).
  std::string libexec_dir;
  // Threads serving HTTP I/O and threads doing blocking work (store, runsc, disks).
  int io_threads = 2;
  int worker_threads = 8;
  // Request bodies over this are refused with 413 before they are read.
  size_t max_body_bytes = 1 << 20;
  // Connections, on each listener: the API, the storage gateway, the ingress (HTTP and HTTPS
  // each) and the sandboxes' TLS hostname proxy. At most max_connections at once (0: no
  // limit), at most max_connections_per_client from one address (for the TLS proxy: from one
  // sandbox); a connection beyond either is closed as it is accepted. Behind a reverse proxy
  // every API client has the proxy's address: raise the per-client cap there.
  int max_connections = 4096;
  int max_connections_per_client = 256;
  // Event streams (status events, command and startup output) one organization holds open at
  // once on the API (0: no limit); past it a new one is 429 (api/org_stream_limit.h).
  int max_streams_per_org = 256;
  // A request head (after the TLS handshake, on the HTTPS ingress) must arrive in full within
  // header_timeout_seconds of the connection's start, or of its first byte on a kept-alive
  // connection, which waits idle_timeout_seconds for that byte. A connection the ingress
  // passes to a sandbox (and one the TLS proxy splices) is closed after
  // proxy_idle_timeout_seconds without a byte either way.
  int header_timeout_seconds = 10;
  int idle_timeout_seconds = 60;
  int proxy_idle_timeout_seconds = 900;
  // A request body must arrive at min_upload_bytes_per_second at least, over the whole body
  // so far, once upload_grace_seconds of waiting for it have passed (0: no minimum); a slower
  // one is cut with a 408.
  uint64_t min_upload_bytes_per_second = 1024;
  int upload_grace_seconds = 10;
  // Sandbox networks: the IPv4 block their /30s come from (keep it clear of every network
  // the host uses), and the resolver of open mode unless a create names one.
  std::string network_pool = "10.88.0.0/16";
  std::string network_pool6 = "fd61:6461:7074::/96";  // "": sandboxes get no IPv6
  std::string dns = "1.1.1.1";
  // adapt's nftables table (inet <name>) and the prefix of its network namespaces; give each
  // adaptd on one host its own name and a disjoint pool.
  std::string network_name = "adapt";
  // Endpoints: the ingress listeners (HTTP, HTTPS; port 0 picks a free one), the domain the
  // endpoint hostnames are made under, and the HTTPS certificate and key (PEM; a self-signed
  // pair is generated at <state_dir>/ingress/ when these are empty).
  std::string ingress_http = "127.0.0.1:8081";
  std::string ingress_https = "127.0.0.1:8443";
  std::string ingress_domain = "adapt.localhost";
  std::string ingress_cert;
  std::string ingress_key;
  // The storage gateway (S3-compatible + bearer form): its own listener, on every address by
  // default so that sandboxes reach it at their gateway address (port 0 picks a free one).
  std::string storage_listen = "0.0.0.0:8082";
  // The database proxy (net/database_proxy.h): sandboxes created with "database": true reach
  // their organization's PostgreSQL database at their gateway on this port. A port in use
  // falls back to a free one (logged). The server itself runs under <state_dir>/postgres, or is
  // database_admin_url's.
  std::string database_listen = "0.0.0.0:5433";
  // An existing PostgreSQL server to hold the databases instead of the cluster under
  // <state_dir>/postgres (database/external_postgres.h): postgres://USER:PASSWORD@HOST:PORT/DB
  // of a role with CREATEDB and CREATEROLE. Empty: the embedded cluster. It carries a password:
  // logged only redacted; prefer the config file or ADAPT_DATABASE_ADMIN_URL to the flag, which
  // every local user sees in the process list.
  std::string database_admin_url;
  // Sandbox sessions the database proxy lets through to the server at once, every
  // organization's together (each is also held to its plan's connection limit). 0: the
  // embedded server's room (database::kSandboxSessions), or an external server's as it
  // reports it (ExternalPostgres::sandbox_sessions; its other clients only its operator
  // knows); a value above the embedded server's room is lowered to it.
  int database_max_sessions = 0;
  // Seconds between checks of every database's size against its plan's quota (1-3600).
  int database_quota_interval_seconds = 30;
  // Object storage: the most bytes one organization's objects may hold (0: no limit), and the
  // age after which an unfinished multipart upload and its parts are removed.
  uint64_t object_quota_bytes = 50ull << 30;
  int64_t multipart_max_age_seconds = 24 * 3600;
  // How long a deleted app's releases are kept before they are removed.
  int64_t app_release_grace_seconds = 3600;
  // Warm pools: "IMAGE=N[,cpu=C][,memoryMiB=M][,diskMiB=D]" each (core/warm_pool_spec.h);
  // none by default, so every create boots its sandbox.
  std::vector<std::string> warm_pools;
  // Registries pulls may reach on loopback, link-local or private addresses, which they
  // refuse otherwise: "HOST" (every port) or "HOST:PORT" (image/registry_destination.h).
  std::vector<std::string> allowed_registries;
  // Trusted image sources (core/image_policy.h): what the assistant's (MCP) sandboxes may
  // start from besides the environment aliases: "REGISTRY/*", "[REGISTRY/]PREFIX/*" or
  // "[REGISTRY/]REPOSITORY". developer_public_images: the assistant's developer sandboxes
  // also take any public image. image_policy "assistant" holds the REST API to the same
  // rule; "open" (seed 001) lets it create from any image.
  std::vector<std::string> trusted_image_sources = {"docker.io/library/*"};
  bool developer_public_images = false;
  std::string image_policy = "open";
  // Per-organization caps until accounts bring plans (0: no cap): sandboxes not deleted or
  // failed (hibernated ones count), images, and image pulls or imports in progress. The
  // create past a cap answers 429 and changes nothing.
  // With plans (core/account_service.h) this stays a cap beside every plan's own, and the
  // built-in default plan is sized from it.
  int max_sandboxes_per_org = 50;
  int max_images_per_org = 100;
  int max_imports_per_org = 4;
  // Accounts: the operator's plans (JSON {"plans": [...]}, README "Accounts, plans and
  // limits"; empty: the built-in default plan only) and the terms version register_user
  // accepts.
  std::string plans_file;
  std::string terms_version = "1";
  // Metering (core/usage_meter.h): seconds between passes that write compute usage into the
  // ledger (at most 30 so that a crash loses nothing older), and at least how long a volume's
  // storage entry covers.
  int metering_interval_seconds = 30;
  int storage_metering_interval_seconds = 3600;
  // One-shot jobs running at once per organization; later ones queue in submission order.
  int job_concurrency_per_org = 4;
  // cancel_automation_run (a job's run or an automation's): seconds between the SIGTERM to the
  // command's process group and the SIGKILL if it still runs (1-300).
  int run_cancel_grace_seconds = 10;
  // Events (GET /v1/events, a sandbox's stream) older than this are deleted by a pass every
  // minute (core/event_retention.h), a sandbox's newest status event excepted (1 s-10 years).
  int64_t event_retention_seconds = 7 * 86400;
  // Threads running MCP tool calls, apart from the API workers, so that tool calls that wait
  // (wait_for_sandbox, run_command) never hold those; a call beyond them answers 429.
  int mcp_call_threads = 16;
  // Whether the OAuth authorize page offers "create an account" to anyone who reaches it:
  // each sign-up makes a new organization, unregistered until register_user. Off by default;
  // then only the operator adds users (`adapt user add`).
  bool allow_signup = false;
};

// Parses argv (and the environment and config file). Returns the config or a usage error;
// `--help` yields a Status with code kOk-less kInvalidArgument and the usage text.
Result<DaemonConfig> LoadConfig(int argc, char** argv);

}  // namespace adapt::daemon

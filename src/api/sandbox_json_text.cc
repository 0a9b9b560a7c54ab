#include "api/sandbox_json_text.h"

#include "api/json_text.h"
#include "base/time.h"

namespace adapt::api {
namespace {

// Every object's keys in sorted (std::map) order, as SandboxToJson's tree dumps them.

void Time(JsonText& j, const std::optional<int64_t>& ms) {
  if (ms) return j.String(FormatRfc3339(*ms));
  j.Null();
}

void Endpoint(JsonText& j, const core::Endpoint& e) {
  j.BeginObject();
  j.Key("createdAt");
  j.String(FormatRfc3339(e.created_at_ms));
  j.Key("hostname");
  j.String(e.hostname);
  j.Key("httpUrl");
  j.String(e.http_url);
  j.Key("id");
  j.String(e.id);
  j.Key("port");
  j.Int(e.port);
  j.Key("sandboxId");
  j.String(e.sandbox_id);
  j.Key("url");
  j.String(e.url);
  j.EndObject();
}

void Network(JsonText& j, const core::NetworkConfig& n) {
  j.BeginObject();
  j.Key("allow");
  j.BeginArray();
  for (const auto& r : n.allow) {
    j.BeginObject();
    j.Key("address");
    j.String(r.address);
    j.Key("port");
    j.Int(r.port);
    j.Key("protocol");
    j.String(r.protocol);
    j.EndObject();
  }
  j.EndArray();
  j.Key("dns");
  j.OptionalString(n.dns);
  j.Key("egress");
  j.String(n.egress);
  j.Key("hostnames");
  j.BeginArray();
  for (const auto& h : n.hostnames) {
    j.BeginObject();
    j.Key("hostname");
    j.String(h.hostname);
    j.Key("port");
    j.Int(h.port);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

void Hibernation(JsonText& j, const std::optional<core::HibernationSummary>& h) {
  if (!h) return j.Null();
  j.BeginObject();
  j.Key("note");
  j.OptionalString(h->note);
  j.Key("processes");
  j.String(h->processes);
  j.Key("stoppedAt");
  j.String(FormatRfc3339(h->stopped_at));
  j.Key("workspace");
  j.String(h->workspace);
  j.EndObject();
}

void Startup(JsonText& j, const std::optional<core::StartupView>& view) {
  if (!view) return j.Null();
  const core::StartupView& v = *view;
  const core::StartupConfig& s = v.settings;
  j.BeginObject();
  j.Key("args");
  j.OptionalStrings(s.args);
  j.Key("argv");
  j.OptionalStrings(s.argv);
  j.Key("cwd");
  j.OptionalString(s.cwd);
  j.Key("entrypoint");
  j.OptionalStrings(s.entrypoint);
  j.Key("error");
  j.OptionalString(v.error);
  j.Key("exitCode");
  j.OptionalInt(v.exit_code);
  j.Key("finishedAt");
  j.OptionalString(v.finished_at);
  j.Key("mode");
  j.String(s.mode);
  j.Key("signal");
  j.OptionalString(v.signal);
  j.Key("startedAt");
  j.OptionalString(v.started_at);
  j.Key("stderr");
  j.String(v.stderr_text);
  j.Key("stdout");
  j.String(v.stdout_text);
  j.Key("truncated");
  j.Bool(v.truncated);
  j.Key("user");
  j.OptionalString(s.user);
  j.EndObject();
}

void Sandbox(JsonText& j, const core::Sandbox& s) {
  const core::SandboxConfig& c = s.config;
  j.BeginObject();
  j.Key("cpu");
  j.Int(c.cpu);
  j.Key("createdAt");
  j.String(FormatRfc3339(s.created_at));
  j.Key("deletedAt");
  Time(j, s.deleted_at);
  j.Key("diskMiB");
  j.Int(c.disk_mib);
  j.Key("endpoints");
  j.BeginArray();
  for (const auto& e : s.endpoints) Endpoint(j, e);
  j.EndArray();
  j.Key("environmentNames");
  j.BeginArray();
  for (const auto& e : s.environment) j.String(e.name);
  j.EndArray();
  j.Key("environmentSources");
  j.BeginArray();
  for (const auto& e : s.environment) {
    j.BeginObject();
    j.Key("name");
    j.String(e.name);
    j.Key("source");
    j.String(e.source);
    if (e.version) {
      j.Key("version");
      j.Int(*e.version);
    }
    j.EndObject();
  }
  j.EndArray();
  j.Key("error");
  j.OptionalString(s.error);
  j.Key("expiresAt");
  Time(j, s.expires_at);
  j.Key("hibernation");
  Hibernation(j, s.hibernation);
  j.Key("id");
  j.String(s.id);
  j.Key("idleTimeoutSeconds");
  j.OptionalInt(c.idle_timeout_seconds);
  j.Key("image");
  j.String(c.image);
  j.Key("imageId");
  j.OptionalString(c.image_id);
  j.Key("labels");
  j.BeginObject();
  for (const auto& [k, v] : c.labels) {
    j.TextKey(k);  // the caller's text: escaped like any string
    j.String(v);
  }
  j.EndObject();
  j.Key("memoryMiB");
  j.Int(c.memory_mib);
  j.Key("network");
  Network(j, c.network);
  if (c.pool) {
    j.Key("pool");
    j.BeginObject();
    j.Key("reason");
    if (c.pool->used) {
      j.Null();
    } else {
      j.String(c.pool->reason);
    }
    j.Key("used");
    j.Bool(c.pool->used);
    j.EndObject();
  }
  j.Key("secrets");
  j.BeginArray();
  for (const auto& secret : c.secrets) j.String(secret.name);
  j.EndArray();
  j.Key("securityProfile");
  j.String(c.security_profile);
  j.Key("startup");
  Startup(j, s.startup);
  j.Key("startupClass");
  j.String(c.startup_class);
  j.Key("status");
  j.String(s.status);
  j.Key("storage");
  j.OptionalString(c.storage);
  j.Key("terminationReason");
  j.OptionalString(s.termination_reason);
  j.Key("ttlSeconds");
  j.OptionalInt(c.ttl_seconds);
  j.Key("updatedAt");
  j.String(FormatRfc3339(s.updated_at));
  j.EndObject();
}

}  // namespace

std::string SandboxJsonText(const core::Sandbox& s) {
  JsonText j;
  j.out().reserve(1024);
  Sandbox(j, s);
  return j.Take();
}

std::string SandboxPageJsonText(const core::SandboxPage& page) {
  JsonText j;
  j.out().reserve(1024 * (page.items.size() + 1));
  j.BeginObject();
  j.Key("items");
  j.BeginArray();
  for (const auto& s : page.items) Sandbox(j, s);
  j.EndArray();
  j.Key("nextCursor");
  j.OptionalString(page.next_cursor);
  j.EndObject();
  return j.Take();
}

}  // namespace adapt::api

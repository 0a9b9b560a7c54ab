#include "core/sandbox_view.h"

#include "base/text.h"
#include "base/time.h"
#include "core/sandbox_hibernation.h"

namespace adapt::core {
namespace {

using nlohmann::json;

json Time(const std::optional<int64_t>& ms) {
  return ms ? json(FormatRfc3339(*ms)) : json(nullptr);
}

json ResultField(const json& result, const char* key) {
  return result.contains(key) ? result[key] : json(nullptr);
}

}  // namespace

std::vector<std::string> RedactionValues(const store::SandboxRecord& r) {
  std::vector<std::string> values;
  for (const auto& [_, v] : r.env) {
    if (v.size() >= 3) values.push_back(v);
  }
  return values;
}

void ApplyOutput(const store::SandboxRecord& r, const runtime::OutputRing& output, json& result) {
  auto secrets = RedactionValues(r);
  result["stdout"] = Redact(SanitizeUtf8(output.Text(runtime::Stream::kStdout)), secrets);
  result["stderr"] = Redact(SanitizeUtf8(output.Text(runtime::Stream::kStderr)), secrets);
  result["truncated"] = output.truncated();
}

json SandboxToJson(const store::SandboxRecord& r, const runtime::OutputRing* live) {
  const json& c = r.config;
  json out = {
      {"id", r.id},
      {"status", r.status},
      {"createdAt", FormatRfc3339(r.created_at)},
      {"updatedAt", FormatRfc3339(r.updated_at)},
      {"expiresAt", Time(r.expires_at)},
      {"deletedAt", Time(r.deleted_at)},
      {"cpu", c["cpu"]},
      {"memoryMiB", c["memoryMiB"]},
      {"diskMiB", c["diskMiB"]},
      {"ttlSeconds", c["ttlSeconds"]},
      {"labels", c["labels"]},
      {"image", c["image"]},
      {"imageId", c["imageId"]},
      {"network", c["network"]},
      {"securityProfile", c["securityProfile"]},
      {"startupClass", c["startupClass"]},
      // The persistent storage mounted at /workspace (durable sandboxes), else null.
      {"storage", c.contains("storage") ? c["storage"] : json(nullptr)},
      {"terminationReason",
       r.termination_reason.empty() ? json(nullptr) : json(r.termination_reason)},
      {"error", r.error.empty() ? json(nullptr) : json(r.error)},
      {"endpoints", json::array()},
      {"hibernation", HibernationView(r)},
  };
  // Whether a warm pool served the create (and why not), when adaptd has warm pools.
  if (c.contains("pool")) out["pool"] = c["pool"];
  // Attached secrets: the names and versions captured at creation (never values).
  json attached = c.contains("secrets") && c["secrets"].is_array() ? c["secrets"] : json::array();
  json secret_names = json::array();
  for (const auto& s : attached) secret_names.push_back(s["name"]);
  out["secrets"] = secret_names;
  json names = json::array(), sources = json::array();
  for (const auto& [k, _] : r.env) {
    names.push_back(k);
    json source = {{"name", k}, {"source", "env"}};
    for (const auto& s : attached) {
      if (s["name"] == k) source = {{"name", k}, {"source", "secret"}, {"version", s["version"]}};
    }
    sources.push_back(source);
  }
  out["environmentNames"] = names;
  out["environmentSources"] = sources;

  if (c["startup"].is_null()) {
    out["startup"] = nullptr;
    return out;
  }
  json startup = c["startup"];
  json result = r.result;
  if (live) ApplyOutput(r, *live, result);
  for (const char* key : {"exitCode", "signal", "error", "startedAt", "finishedAt"})
    startup[key] = ResultField(result, key);
  startup["stdout"] = result.value("stdout", "");
  startup["stderr"] = result.value("stderr", "");
  startup["truncated"] = result.value("truncated", false);
  out["startup"] = startup;
  return out;
}

}  // namespace adapt::core

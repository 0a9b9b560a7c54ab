#include "core/endpoint_service.h"

#include "base/ids.h"
#include "base/time.h"

namespace adapt::core {

using nlohmann::json;

EndpointService::EndpointService(store::Store& store, net::NetworkManager& network,
                                 EndpointOptions options)
    : store_(store), network_(network), options_(std::move(options)) {}

void EndpointService::SetPorts(uint16_t http_port, uint16_t https_port) {
  options_.http_port = http_port;
  options_.https_port = https_port;
}

json EndpointService::View(const store::EndpointRecord& e) const {
  json v = {
      {"id", e.id},
      {"sandboxId", e.sandbox_id},
      {"port", e.port},
      {"hostname", e.hostname},
      {"url", "https://" + e.hostname +
                  (options_.https_port == 443 ? "" : ":" + std::to_string(options_.https_port))},
      {"httpUrl", "http://" + e.hostname +
                      (options_.http_port == 80 ? "" : ":" + std::to_string(options_.http_port))},
      {"createdAt", FormatRfc3339(e.created_at)}};
  return v;
}

Result<json> EndpointService::Create(const Principal& who, const std::string& sandbox_id,
                                     const json& body) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, store_.GetSandbox(who.org_id, sandbox_id));
  if (!body.is_object()) return InvalidArgument("", "the body must be a JSON object {\"port\": N}");
  for (const auto& [k, _] : body.items())
    if (k != "port") return InvalidArgument(k, "unknown field '" + k + "'");
  if (!body.contains("port") || !body["port"].is_number_integer() ||
      body["port"].get<int64_t>() < 1 || body["port"].get<int64_t>() > 65535)
    return InvalidArgument("port", "port must be an integer from 1 to 65535");
  if (sandbox.config.network.egress == "none")
    return Conflict("sandbox " + sandbox_id +
                    " has network egress \"none\": it has no network interface, so no endpoints");
  if (sandbox.status != "running" && sandbox.status != "provisioning")
    return Conflict("sandbox " + sandbox_id + " is " + sandbox.status +
                    "; endpoints route only to a running sandbox");
  store::EndpointRecord e;
  e.id = NewId("ep");
  e.org_id = who.org_id;
  e.sandbox_id = sandbox_id;
  e.port = body["port"].get<int>();
  e.hostname = NewId("h").substr(2) + "." + options_.domain;  // 20 base32 characters
  e.created_at = NowMillis();
  RETURN_IF_ERROR(store_.PutEndpoint(e));
  return View(e);
}

Result<json> EndpointService::List(const Principal& who, const std::string& sandbox_id) {
  if (!sandbox_id.empty()) {
    if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
    RETURN_IF_ERROR(store_.GetSandbox(who.org_id, sandbox_id).status());
  }
  ASSIGN_OR_RETURN(auto records, store_.ListEndpoints(who.org_id, sandbox_id));
  json items = json::array();
  for (const auto& e : records) items.push_back(View(e));
  return json{{"items", items}};
}

Status EndpointService::Delete(const Principal& who, const std::string& sandbox_id,
                               const std::string& id) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  RETURN_IF_ERROR(store_.GetSandbox(who.org_id, sandbox_id).status());
  if (!IsValidId(id, "ep")) return NotFound("endpoint " + id + " not found");
  ASSIGN_OR_RETURN(auto records, store_.ListEndpoints(who.org_id, sandbox_id));
  for (const auto& e : records) {
    if (e.id != id) continue;
    RETURN_IF_ERROR(store_.DeleteEndpoint(who.org_id, id));
    if (on_removed_) on_removed_(e.hostname);
    return Status::Ok();
  }
  return NotFound("endpoint " + id + " not found");
}

void EndpointService::RemoveAll(const std::string& sandbox_id) {
  auto hosts = store_.DeleteEndpointsOfSandbox(sandbox_id);
  if (hosts.ok() && on_removed_)
    for (const auto& h : *hosts) on_removed_(h);
}

std::optional<net::IngressBackend> EndpointService::Route(const std::string& host) {
  auto e = store_.FindEndpointByHostname(host);
  if (!e.ok()) return std::nullopt;
  auto sandbox = store_.GetSandbox("", e->sandbox_id);
  if (!sandbox.ok() || sandbox->status != "running") return std::nullopt;
  auto address = network_.AddressOf(e->sandbox_id);
  if (!address || address->empty()) return std::nullopt;
  return net::IngressBackend{*address, static_cast<uint16_t>(e->port)};
}

SandboxEndpoint EndpointService::Typed(const store::EndpointRecord& e) const {
  return {e.id,
          e.sandbox_id,
          e.port,
          e.hostname,
          "https://" + e.hostname +
              (options_.https_port == 443 ? "" : ":" + std::to_string(options_.https_port)),
          "http://" + e.hostname +
              (options_.http_port == 80 ? "" : ":" + std::to_string(options_.http_port)),
          e.created_at};
}

std::vector<SandboxEndpoint> EndpointService::EndpointsOf(const std::string& org_id,
                                                          const std::string& sandbox_id) {
  std::vector<SandboxEndpoint> out;
  auto records = store_.ListEndpoints(org_id, sandbox_id);
  if (records.ok())
    for (const auto& e : *records) out.push_back(Typed(e));
  return out;
}

}  // namespace adapt::core

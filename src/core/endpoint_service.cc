#include "core/endpoint_service.h"

#include "base/ids.h"
#include "base/time.h"

namespace adapt::core {

EndpointService::EndpointService(store::SandboxStore& sandboxes, store::EndpointStore& endpoints,
                                 net::NetworkManager& network, EndpointOptions options)
    : sandboxes_(sandboxes),
      endpoints_(endpoints),
      network_(network),
      options_(std::move(options)) {}

void EndpointService::SetPorts(uint16_t http_port, uint16_t https_port) {
  options_.http_port = http_port;
  options_.https_port = https_port;
}

Endpoint EndpointService::View(const store::EndpointRecord& e) const {
  Endpoint v;
  v.id = e.id;
  v.sandbox_id = e.sandbox_id;
  v.port = e.port;
  v.hostname = e.hostname;
  v.url = "https://" + e.hostname +
          (options_.https_port == 443 ? "" : ":" + std::to_string(options_.https_port));
  v.http_url = "http://" + e.hostname +
               (options_.http_port == 80 ? "" : ":" + std::to_string(options_.http_port));
  v.created_at_ms = e.created_at;
  return v;
}

Result<Endpoint> EndpointService::Create(const Principal& who, const std::string& sandbox_id,
                                         const CreateEndpoint& request,
                                         const std::optional<store::IdempotencyKey>& idempotency) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "endpoint", idempotency));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, endpoints_.FindIdempotentCreate(*claim));
    if (earlier) return MadeEndpoint(who, sandbox_id, *earlier);
  }
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, sandboxes_.GetSandbox(who.org_id, sandbox_id));
  if (request.port < 1 || request.port > 65535)
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
  e.port = static_cast<int>(request.port);
  e.hostname = NewId("h").substr(2) + "." + options_.domain;  // 20 base32 characters
  e.created_at = NowMillis();
  std::optional<int64_t> max_endpoints;
  if (accounts_) {
    ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(who.org_id));
    max_endpoints = plan.endpoints;
  }
  if (!claim) {
    RETURN_IF_ERROR(endpoints_.PutEndpoint(e, max_endpoints));
    return View(e);
  }
  ASSIGN_OR_RETURN(store::IdempotentCreate made,
                   endpoints_.CreateOnce(*claim, [&]() -> Result<std::string> {
                     RETURN_IF_ERROR(endpoints_.PutEndpoint(e, max_endpoints));
                     return e.id;
                   }));
  if (made.replayed) return MadeEndpoint(who, sandbox_id, made.object_id);
  return View(e);
}

Result<Endpoint> EndpointService::MadeEndpoint(const Principal& who, const std::string& sandbox_id,
                                               const std::string& id) {
  ASSIGN_OR_RETURN(auto records, endpoints_.ListEndpoints(who.org_id, sandbox_id));
  for (const auto& e : records)
    if (e.id == id) return View(e);
  return store::IdempotentObjectGone("endpoint " + id);
}

Result<std::vector<Endpoint>> EndpointService::List(const Principal& who,
                                                    const std::string& sandbox_id) {
  if (!sandbox_id.empty()) {
    if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
    RETURN_IF_ERROR(sandboxes_.GetSandbox(who.org_id, sandbox_id).status());
  }
  ASSIGN_OR_RETURN(auto records, endpoints_.ListEndpoints(who.org_id, sandbox_id));
  std::vector<Endpoint> items;
  for (const auto& e : records) items.push_back(View(e));
  return items;
}

Result<Page<Endpoint>> EndpointService::List(const Principal& who, const std::string& sandbox_id,
                                             const PageRequest& page) {
  if (!sandbox_id.empty()) {
    if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
    RETURN_IF_ERROR(sandboxes_.GetSandbox(who.org_id, sandbox_id).status());
  }
  ASSIGN_OR_RETURN(auto records, endpoints_.ListEndpoints(who.org_id, sandbox_id));
  ASSIGN_OR_RETURN(auto rows,
                   PageNewestFirst(std::move(records), page,
                                   [](const store::EndpointRecord& e) { return e.seq; }));
  return MapPage(std::move(rows), [&](const store::EndpointRecord& e) { return View(e); });
}

Status EndpointService::Delete(const Principal& who, const std::string& sandbox_id,
                               const std::string& id) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  RETURN_IF_ERROR(sandboxes_.GetSandbox(who.org_id, sandbox_id).status());
  if (!IsValidId(id, "ep")) return NotFound("endpoint " + id + " not found");
  ASSIGN_OR_RETURN(auto records, endpoints_.ListEndpoints(who.org_id, sandbox_id));
  for (const auto& e : records) {
    if (e.id != id) continue;
    RETURN_IF_ERROR(endpoints_.DeleteEndpoint(who.org_id, id));
    if (on_removed_) on_removed_(e.hostname);
    return Status::Ok();
  }
  return NotFound("endpoint " + id + " not found");
}

Result<std::vector<std::string>> EndpointService::Remove(const Principal& who,
                                                         const RemoveEndpoints& request) {
  if (!request.id && !request.port) return InvalidArgument("port", "name an endpoint id or a port");
  ASSIGN_OR_RETURN(auto listed, List(who, request.sandbox_id));
  std::vector<std::string> removed;
  for (const auto& e : listed) {
    if (request.id ? e.id != *request.id : e.port != *request.port) continue;
    Status st = Delete(who, request.sandbox_id, e.id);
    if (!st.ok() && st.code() != Code::kNotFound) return st;  // NotFound: removed meanwhile
    removed.push_back(e.id);
  }
  return removed;
}

void EndpointService::RemoveAll(const std::string& sandbox_id) {
  auto hosts = endpoints_.DeleteEndpointsOfSandbox(sandbox_id);
  if (hosts.ok() && on_removed_)
    for (const auto& h : *hosts) on_removed_(h);
}

std::optional<net::IngressBackend> EndpointService::Route(const std::string& host) {
  auto e = endpoints_.FindEndpointByHostname(host);
  if (!e.ok()) return std::nullopt;
  auto sandbox = sandboxes_.GetSandbox("", e->sandbox_id);
  if (!sandbox.ok() || sandbox->status != "running") return std::nullopt;
  auto address = network_.AddressOf(e->sandbox_id);
  if (!address || address->empty()) return std::nullopt;
  if (activity_) activity_->Touch(e->sandbox_id);
  return net::IngressBackend{*address, static_cast<uint16_t>(e->port), {}, {}, e->org_id};
}

std::vector<Endpoint> EndpointService::EndpointsOf(const std::string& org_id,
                                                   const std::string& sandbox_id) {
  std::vector<Endpoint> out;
  auto records = endpoints_.ListEndpoints(org_id, sandbox_id);
  if (records.ok())
    for (const auto& e : *records) out.push_back(View(e));
  return out;
}

}  // namespace adapt::core

// /v1/objects, /v1/storage-tokens and /v1/sites: object storage and static sites through the
// REST API (API keys), and the storage gateway (storage tokens; S3-compatible and bearer).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "api/http_types.h"
#include "api/org_stream_limit.h"
#include "api/router.h"
#include "base/org_counter.h"
#include "core/object_service.h"
#include "storage/object_store.h"
#include "storage/site_service.h"
#include "storage/storage_tokens.h"

namespace adapt::api {

// What the storage gateway (the S3 protocol) and the storage-token routes use directly.
struct ObjectApi {
  storage::ObjectStore& objects;
  storage::StorageTokens& tokens;
  storage::SiteService& sites;
  uint16_t gateway_port = 0;  // set once the gateway listens
  // Caps the streams each organization holds open (--max-streams-per-org): the gateway's
  // object and release downloads and the public download links count with the API's
  // streams. Null: no cap.
  OrgStreamLimit* stream_limit = nullptr;
  // The gateway requests whose body is read (PUTs, and POSTs' XML) that each organization may
  // have at once: each holds one of the storage workers for as long as its client takes to send, so
  // a cap below the pool's size keeps one tenant's slow uploads from stopping everyone's.
  OrgCounter body_uploads;
};

// /v1/objects over core::ObjectService; /v1/storage-tokens over `api.tokens`.
void AddObjectRoutes(Router& router, ObjectApi& api, core::ObjectService& service);
void AddSiteRoutes(Router& router, storage::SiteService& sites);
// For HttpServerOptions::stream_request_body: PUT /v1/objects/content.
bool StreamsObjectBody(std::string_view method, std::string_view path);

// The storage gateway's handler (its own listener): path-style S3 under the bucket
// "objects" with SigV4 header signatures, or `Authorization: Bearer <storage token>`.
class StorageGateway {
 public:
  explicit StorageGateway(ObjectApi& api) : api_(api) {}
  HttpResponse Handle(const HttpRequest& request);

 private:
  ObjectApi& api_;
};
constexpr const char* kGatewayBucket = "objects";

// The handler of the static sites' origin (behind the ingress, by Host header).
// A site's file, for anyone who names its hostname. Each download holds a thread and up to
// a few MiB queued for as long as its client takes to read, so it counts in `downloads`
// (each organization's sites', and all together; past either, a 429), when set.
HttpResponse ServeSite(storage::SiteService& sites, OrgStreamLimit* downloads,
                       const HttpRequest& request);

// "http://<host of the request's Host header>:<port>".
std::string BaseUrlFor(const HttpRequest& request, uint16_t port);

}  // namespace adapt::api

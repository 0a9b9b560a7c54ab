// /v1/objects, /v1/storage-tokens and /v1/sites: translation between HTTP and
// core::ObjectService / storage::StorageTokens / storage::SiteService (typed in, typed out;
// the JSON is made here). Uploads stream (StreamsObjectBody), downloads stream from the blob.
#include "api/object_routes.h"

#include <algorithm>
#include <cctype>

#include "api/download_stream.h"
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "base/time.h"
#include "storage/object_key.h"

namespace adapt::api {
namespace {

using nlohmann::json;

json ObjectJson(const store::ObjectRecord& o) {
  return {{"key", o.key},
          {"size", o.size},
          {"sha256", o.sha256},
          {"etag", o.etag},
          {"contentType", o.content_type},
          {"lastModified", FormatRfc3339(o.created_at)}};
}

json TokenJson(const store::StorageTokenRecord& t) {
  json j = {{"id", t.id},
            {"name", t.name},
            {"expiresAt", FormatRfc3339(t.expires_at)},
            {"createdAt", FormatRfc3339(t.created_at)},
            {"revoked", t.revoked_at != 0}};
  if (!t.sandbox_id.empty()) j["sandboxId"] = t.sandbox_id;
  return j;
}

json SiteJson(const storage::Site& s) {
  json j = {{"id", s.id},
            {"name", s.name},
            {"hostname", s.hostname},
            {"releaseId", s.release_id},
            {"url", s.url},
            {"urls", s.urls},
            {"createdAt", FormatRfc3339(s.created_at_ms)}};
  if (s.release) {
    j["source"] = s.release->source;
    j["files"] = s.release->files;
    j["publishedAt"] = FormatRfc3339(s.release->published_at_ms);
  }
  return j;
}

Result<std::string> QueryKey(const HttpRequest& req) {
  auto it = req.query.find("key");
  if (it == req.query.end()) return InvalidArgument("key", "the key query parameter is required");
  RETURN_IF_ERROR(storage::ValidateObjectKey(it->second));
  return it->second;
}

std::string Query(const HttpRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  return it == req.query.end() ? "" : it->second;
}

Status CheckFields(const json& body, std::initializer_list<const char*> allowed) {
  for (const auto& item : body.items()) {
    const std::string& key = item.key();
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }))
      return InvalidArgument(key, "unknown field " + key);
  }
  return Status::Ok();
}

Result<int64_t> TtlField(const json& body, int64_t fallback, int64_t max) {
  if (!body.contains("ttlSeconds")) return fallback;
  const auto& v = body["ttlSeconds"];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > max)
    return InvalidArgument("ttlSeconds", "ttlSeconds must be an integer 1.." + std::to_string(max));
  return v.get<int64_t>();
}

// The core names the workspace file `workspace_path`; this API calls it `path`.
Status RestField(const Status& st) {
  if (st.field() != "workspace_path") return st;
  return st.WithField("path");
}

HttpResponse NoContent() {
  HttpResponse r;
  r.status = 204;
  return r;
}

}  // namespace

std::string BaseUrlFor(const HttpRequest& req, uint16_t port) {
  std::string host = req.Header("host");
  if (host.empty()) host = "127.0.0.1";
  // Drop the port (an IPv6 literal keeps its brackets).
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos)
    host = host.substr(0, colon);
  return "http://" + host + ":" + std::to_string(port);
}

bool StreamsObjectBody(std::string_view method, std::string_view path) {
  return method == "PUT" && path == "/v1/objects/content";
}

void AddObjectRoutes(Router& router, ObjectApi& api, core::ObjectService& service) {
  router.Add(
      "GET", "/v1/objects",
      [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
        auto page = PageRequestFromQuery(req, {"prefix", "delimiter"});
        if (!page.ok()) return ErrorResponse(page.status());
        auto list = service.List(who, {Query(req, "prefix"), Query(req, "delimiter"), *page});
        if (!list.ok()) return ErrorResponse(list.status());
        json out = PageJson(Page<store::ObjectRecord>{list->items, list->next_cursor}, ObjectJson);
        out["commonPrefixes"] = list->common_prefixes;
        // The organization's use of its object storage quota (null: no limit).
        auto usage = service.Usage(who);
        if (!usage.ok()) return ErrorResponse(usage.status());
        out["usage"] = {{"usedBytes", usage->used_bytes},
                        {"quotaBytes", usage->quota_bytes > 0 ? json(usage->quota_bytes) : json()}};
        return JsonResponse(200, out);
      });
  router.Add("PUT", "/v1/objects/content",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto key = QueryKey(req);
               if (!key.ok()) return ErrorResponse(key.status());
               auto rec =
                   service.Put(who, *key, req.Header("content-type"), RequestBodyReader(req));
               if (!rec.ok()) return ErrorResponse(rec.status());
               return JsonResponse(200, ObjectJson(*rec));
             });
  auto get = [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
    auto key = QueryKey(req);
    if (!key.ok()) return ErrorResponse(key.status());
    auto opened = service.Open(who, *key);
    if (!opened.ok()) return ErrorResponse(opened.status());
    auto& [rec, reader] = *opened;
    HttpResponse r = StreamFileResponse(std::move(reader), rec.size, rec.content_type);
    MarkTenantFile(r, rec.key);
    r.headers.emplace_back("ETag", "\"" + rec.etag + "\"");
    r.headers.emplace_back("X-Content-SHA256", rec.sha256);
    return r;
  };
  router.Add("GET", "/v1/objects/content", get);
  router.Add("HEAD", "/v1/objects/content", get);
  router.Add("DELETE", "/v1/objects/content",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto key = QueryKey(req);
               if (!key.ok()) return ErrorResponse(key.status());
               Status st = service.Delete(who, *key);
               if (!st.ok()) return ErrorResponse(st);
               return NoContent();
             });
  router.Add(
      "POST", "/v1/objects/url",
      [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (Status st = CheckFields(*body, {"key", "ttlSeconds"}); !st.ok())
          return ErrorResponse(st);
        if (!body->contains("key") || !(*body)["key"].is_string())
          return ErrorResponse(InvalidArgument("key", "key must be a string"));
        std::string key = (*body)["key"].get<std::string>();
        if (Status st = storage::ValidateObjectKey(key); !st.ok()) return ErrorResponse(st);
        auto ttl = TtlField(*body, storage::kDefaultUrlTtlSeconds, storage::kMaxUrlTtlSeconds);
        if (!ttl.ok()) return ErrorResponse(ttl.status());
        std::string host = req.Header("host");
        auto link = service.Link(who, {key, *ttl, "http://" + (host.empty() ? "127.0.0.1" : host)});
        if (!link.ok()) return ErrorResponse(link.status());
        return JsonResponse(200, {{"key", key},
                                  {"url", link->url},
                                  {"size", link->object.size},
                                  {"expiresAt", FormatRfc3339(link->expires_at_ms)}});
      });
  router.AddPublic("GET", "/v1/objects/download", [&](const HttpRequest& req, const PathParams&) {
    std::string org = Query(req, "org"), key = Query(req, "key");
    int64_t expires = 0;
    try {
      expires = std::stoll(Query(req, "expires"));
    } catch (...) {
      return ErrorResponse(Status(Code::kUnauthenticated, "the download link is not valid"));
    }
    auto opened = service.OpenByLink({org, key, expires, Query(req, "signature")});
    if (!opened.ok()) return ErrorResponse(opened.status());
    auto& [rec, reader] = *opened;
    HttpResponse r = StreamFileResponse(std::move(reader), rec.size, rec.content_type);
    MarkTenantFile(r, key);
    r.headers.emplace_back("ETag", "\"" + rec.etag + "\"");
    // A public route, which the router counts for no organization: the link's (its signature
    // checked by OpenByLink) holds the download.
    if (api.stream_limit) return api.stream_limit->Admit(org, std::move(r));
    return r;
  });
  router.Add(
      "POST", "/v1/storage-tokens",
      [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (Status st = CheckFields(*body, {"name", "ttlSeconds"}); !st.ok())
          return ErrorResponse(st);
        std::string name;
        if (body->contains("name")) {
          if (!(*body)["name"].is_string())
            return ErrorResponse(InvalidArgument("name", "name must be a string"));
          name = (*body)["name"].get<std::string>();
        }
        auto ttl = TtlField(*body, storage::kDefaultTokenTtlSeconds, storage::kMaxTokenTtlSeconds);
        if (!ttl.ok()) return ErrorResponse(ttl.status());
        auto made = api.tokens.Create(who.org_id, name, *ttl, "", IdempotencyKeyOf(req, *body));
        if (!made.ok()) return ErrorResponse(made.status());
        json out = TokenJson(made->record);
        out["accessKeyId"] = made->record.id;
        // A replay shows no secret: it was shown once, to the request that made it.
        if (!made->replayed) {
          out["token"] = made->token;
          out["secretAccessKey"] = made->secret;
        }
        out["endpoint"] = BaseUrlFor(req, api.gateway_port);
        out["bucket"] = kGatewayBucket;
        return JsonResponse(201, out);
      });
  router.Add("GET", "/v1/storage-tokens",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = api.tokens.List(who.org_id, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, TokenJson));
             });
  router.Add(
      "POST", "/v1/sandboxes/{id}/object-storage",
      [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (Status st = CheckFields(*body, {"ttlSeconds"}); !st.ok()) return ErrorResponse(st);
        auto ttl = TtlField(*body, storage::kDefaultTokenTtlSeconds, storage::kMaxTokenTtlSeconds);
        if (!ttl.ok()) return ErrorResponse(ttl.status());
        auto r = service.AttachToSandbox(who, p.at("id"), *ttl);
        if (!r.ok()) return ErrorResponse(r.status());
        return JsonResponse(
            200,
            {{"sandboxId", r->sandbox_id},
             {"endpoint", r->endpoint},
             {"tokenId", r->token_id},
             {"expiresAt", FormatRfc3339(r->expires_at_ms)},
             {"restarted", r->restarted},
             {"variables", json::array({"SANDBOX_STORAGE_ENDPOINT", "SANDBOX_STORAGE_TOKEN"})}});
      });
  // A sandbox's artifacts (MCP's list_object_artifacts and download_workspace_artifact).
  router.Add("GET", "/v1/sandboxes/{id}/artifacts",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = service.ListArtifacts(who, p.at("id"), *page);
               if (!list.ok()) return ErrorResponse(list.status());
               json items = json::array();
               for (const auto& o : list->items) items.push_back(ObjectJson(o));
               return JsonResponse(200, {{"sandboxId", list->sandbox_id},
                                         {"prefix", list->prefix},
                                         {"items", items},
                                         {"nextCursor", NextCursorJson(list->next_cursor)}});
             });
  router.Add(
      "POST", "/v1/sandboxes/{id}/artifacts",
      [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
        auto body = ParseJsonBody(req);
        if (!body.ok()) return ErrorResponse(body.status());
        if (Status st = CheckFields(*body, {"path", "key", "ttlSeconds"}); !st.ok())
          return ErrorResponse(st);
        if (!body->contains("path") || !(*body)["path"].is_string())
          return ErrorResponse(InvalidArgument("path", "path must be a string"));
        std::string key;
        if (body->contains("key")) {
          if (!(*body)["key"].is_string())
            return ErrorResponse(InvalidArgument("key", "key must be a string"));
          key = (*body)["key"].get<std::string>();
        }
        auto ttl = TtlField(*body, storage::kDefaultUrlTtlSeconds, storage::kMaxUrlTtlSeconds);
        if (!ttl.ok()) return ErrorResponse(ttl.status());
        auto saved =
            service.CopyFromWorkspace(who, {p.at("id"), (*body)["path"].get<std::string>(), key});
        if (!saved.ok()) return ErrorResponse(RestField(saved.status()));
        std::string host = req.Header("host");
        auto link =
            service.Link(who, {saved->key, *ttl, "http://" + (host.empty() ? "127.0.0.1" : host)});
        if (!link.ok()) return ErrorResponse(link.status());
        json out = ObjectJson(link->object);
        out["url"] = link->url;
        out["expiresAt"] = FormatRfc3339(link->expires_at_ms);
        return JsonResponse(201, out);
      });
  router.Add("DELETE", "/v1/storage-tokens/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               Status st = api.tokens.Revoke(who.org_id, p.at("id"));
               if (!st.ok()) return ErrorResponse(st);
               return NoContent();
             });
}

void AddSiteRoutes(Router& router, storage::SiteService& sites) {
  router.Add("POST", "/v1/sites",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               if (Status st = CheckFields(*body, {"source", "name"}); !st.ok())
                 return ErrorResponse(st);
               if (!body->contains("source") || !(*body)["source"].is_string())
                 return ErrorResponse(InvalidArgument("source", "source must be a string"));
               storage::PublishSite publish{(*body)["source"].get<std::string>(), ""};
               if (body->contains("name")) {
                 if (!(*body)["name"].is_string())
                   return ErrorResponse(InvalidArgument("name", "name must be a string"));
                 publish.name = (*body)["name"].get<std::string>();
               }
               auto site = sites.Publish(who.org_id, publish, IdempotencyKeyOf(req, *body));
               if (!site.ok()) return ErrorResponse(site.status());
               return JsonResponse(201, SiteJson(*site));
             });
  router.Add("GET", "/v1/sites",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = sites.List(who.org_id, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, SiteJson));
             });
  router.Add("GET", "/v1/sites/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto site = sites.Get(who.org_id, p.at("id"));
               if (!site.ok()) return ErrorResponse(site.status());
               return JsonResponse(200, SiteJson(*site));
             });
  router.Add("DELETE", "/v1/sites/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               Status st = sites.Delete(who.org_id, p.at("id"));
               if (!st.ok()) return ErrorResponse(st);
               return NoContent();
             });
}

HttpResponse ServeSite(storage::SiteService& sites, OrgStreamLimit* downloads,
                       const HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD") {
    HttpResponse r = ErrorResponse(Status(Code::kInvalidArgument, "a static site is read-only"));
    r.status = 405;
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  std::string host = req.Header("host");
  size_t colon = host.rfind(':');
  if (colon != std::string::npos) host = host.substr(0, colon);
  std::transform(host.begin(), host.end(), host.begin(), ::tolower);
  auto file = sites.Serve(host, req.path);
  if (!file.ok()) return ErrorResponse(file.status());
  HttpResponse r = StreamFileResponse(std::move(file->reader), file->size, file->content_type);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  if (!downloads) return r;
  auto admitted = downloads->TryAdmit(file->org_id, std::move(r));
  if (admitted.ok()) return std::move(*admitted);
  return ErrorResponse(Status(Code::kResourceExhausted,
                              "this site is serving as many downloads as it may at once; "
                              "retry shortly"));
}

}  // namespace adapt::api

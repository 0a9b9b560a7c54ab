// /v1/images and POST /v1/sandboxes/{id}/image (a sandbox saved as an image): translation
// between HTTP and core::ImageService.
#include "api/errors.h"
#include "api/list_page.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"
#include "base/time.h"
#include "core/secret_name.h"

namespace adapt::api {
namespace {

using nlohmann::json;

// The core names a field as its struct does; REST's body names it in camelCase.
Status ImageErrorInRestTerms(Status status) {
  if (status.field() == "credentials.password_secret")
    return status.WithField("credentials.passwordSecret");
  return status;
}

// {"username", "password"} or {"username", "passwordSecret"}.
Result<core::RegistryCredentials> ParseCredentials(const json& c) {
  constexpr const char* kShape =
      "credentials must be {\"username\": string, \"password\": string} or "
      "{\"username\": string, \"passwordSecret\": secret name}";
  if (!c.is_object()) return InvalidArgument("credentials", kShape);
  for (const auto& [key, _] : c.items()) {
    if (key != "username" && key != "password" && key != "passwordSecret")
      return InvalidArgument("credentials." + key, "unknown field 'credentials." + key + "'");
  }
  if (!c.contains("username") || !c["username"].is_string())
    return InvalidArgument("credentials.username", kShape);
  bool has_password = c.contains("password"), has_secret = c.contains("passwordSecret");
  if (has_password == has_secret)
    return InvalidArgument("credentials", "credentials take one of password and passwordSecret");
  core::RegistryCredentials creds;
  creds.username = c["username"];
  if (has_password) {
    if (!c["password"].is_string()) return InvalidArgument("credentials.password", kShape);
    creds.password = c["password"].get<std::string>();
  } else {
    if (!c["passwordSecret"].is_string())
      return InvalidArgument("credentials.passwordSecret", kShape);
    creds.password_secret = c["passwordSecret"].get<std::string>();
    // The core checks the name too, naming its own field; this error names REST's.
    RETURN_IF_ERROR(core::ValidateSecretName(*creds.password_secret, "credentials.passwordSecret"));
  }
  return creds;
}

// POST /v1/images: {"reference", "credentials"?}.
Result<core::PullImage> ParsePull(const json& body) {
  for (const auto& [key, value] : body.items()) {
    if (key != "reference" && key != "credentials")
      return InvalidArgument(key, "unknown field '" + key + "'");
  }
  if (!body.contains("reference") || !body["reference"].is_string())
    return InvalidArgument(
        "reference", "reference must be an image reference such as \"registry.example.com/app:1\"");
  core::PullImage pull;
  pull.reference = body["reference"];
  if (body.contains("credentials") && !body["credentials"].is_null()) {
    ASSIGN_OR_RETURN(pull.credentials, ParseCredentials(body["credentials"]));
  }
  return pull;
}

// POST /v1/sandboxes/{id}/image: {"name", "tag"?}.
Result<core::CommitImage> ParseCommit(const json& body) {
  for (const auto& [key, value] : body.items()) {
    if (key != "name" && key != "tag") return InvalidArgument(key, "unknown field '" + key + "'");
  }
  if (!body.contains("name") || !body["name"].is_string())
    return InvalidArgument("name", "name is required: the image's name, such as \"my-env\"");
  core::CommitImage commit;
  commit.name = body["name"];
  ASSIGN_OR_RETURN(std::string tag, OptionalStringField(body, "tag"));
  if (body.contains("tag") && !body["tag"].is_null()) commit.tag = tag;
  return commit;
}

template <typename T>
json ImageNullable(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json ProgressJson(const core::ImageProgress& p) {
  return {{"bytes", p.bytes}, {"totalBytes", p.total_bytes}};
}

json ImageJson(const core::ImageView& image) {
  json v = {{"id", image.id},
            {"source", image.source},
            {"reference", ImageNullable(image.reference)},
            {"status", image.status},
            {"createdAt", FormatRfc3339(image.created_at)},
            {"digest", ImageNullable(image.digest)},
            {"size", ImageNullable(image.size)},
            {"platform", ImageNullable(image.platform)},
            {"error", ImageNullable(image.error)},
            {"progress", ProgressJson(image.progress)},
            {"operation", {{"id", image.operation.id}, {"phase", image.operation.phase}}}};
  if (image.detailed) {
    json config =
        image.config_json.empty() ? json(nullptr) : json::parse(image.config_json, nullptr, false);
    v["config"] = config.is_discarded() ? json(nullptr) : config;
    v["sandboxes"] = image.sandboxes;
  }
  return v;
}

Result<json> ImageOrError(Result<core::ImageView> image) {
  if (!image.ok()) return ImageErrorInRestTerms(image.status());
  return ImageJson(*image);
}

}  // namespace

void AddImageRoutes(Router& router, core::ImageService& images) {
  router.Add("POST", "/v1/images",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto pull = ParsePull(*body);
               if (!pull.ok()) return ErrorResponse(pull.status());
               return JsonOrError(
                   202, ImageOrError(images.Pull(who, *pull, IdempotencyKeyOf(req, *body))));
             });
  // The body is an image archive, read as it arrives (StreamsRequestBody).
  router.Add("POST", "/v1/images/import",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               for (const auto& [key, _] : req.query) {
                 if (key != "name")
                   return ErrorResponse(InvalidArgument(key, "unknown query parameter " + key));
               }
               std::string name = req.query.count("name") ? req.query.at("name") : "";
               // The key's fingerprint is the path and name here; the core adds the archive's.
               auto image = images.Import(who, name, RequestBodyReader(req),
                                          IdempotencyKeyOf(req, nlohmann::json{{"name", name}}));
               return JsonOrError(201, ImageOrError(std::move(image)));
             });
  router.Add("POST", "/v1/sandboxes/{id}/image",
             [&](const HttpRequest& req, const PathParams& p, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto commit = ParseCommit(*body);
               if (!commit.ok()) return ErrorResponse(commit.status());
               return JsonOrError(202, ImageOrError(images.Commit(who, p.at("id"), *commit,
                                                                  IdempotencyKeyOf(req, *body))));
             });
  router.Add("GET", "/v1/images",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto page = PageRequestFromQuery(req);
               if (!page.ok()) return ErrorResponse(page.status());
               auto list = images.List(who, *page);
               if (!list.ok()) return ErrorResponse(list.status());
               return JsonResponse(200, PageJson(*list, ImageJson));
             });
  router.Add("GET", "/v1/images/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return JsonOrError(200, ImageOrError(images.Get(who, p.at("id"))));
             });
  router.Add("DELETE", "/v1/images/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(images.Delete(who, p.at("id")));
             });
}

}  // namespace adapt::api

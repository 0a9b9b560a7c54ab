// /v1/images and GET /v1/operations/{id}: translation between HTTP and core::ImageService.
#include "api/errors.h"
#include "api/request_parsing.h"
#include "api/resource_responses.h"
#include "api/routes.h"

namespace adapt::api {

void AddImageRoutes(Router& router, core::ImageService& images) {
  router.Add("POST", "/v1/images",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               auto body = ParseJsonBody(req);
               if (!body.ok()) return ErrorResponse(body.status());
               auto image = images.Pull(who, *body);
               return JsonOrError(202, image);
             });
  // The body is an image archive, read as it arrives (StreamsRequestBody).
  router.Add("POST", "/v1/images/import",
             [&](const HttpRequest& req, const PathParams&, const core::Principal& who) {
               for (const auto& [key, _] : req.query) {
                 if (key != "name")
                   return ErrorResponse(InvalidArgument(key, "unknown query parameter " + key));
               }
               std::string name = req.query.count("name") ? req.query.at("name") : "";
               auto body = req.body_stream;
               auto image = images.Import(who, name, [body](char* buf, size_t n) -> long {
                 return body ? body->Read(buf, n) : 0;
               });
               return JsonOrError(201, image);
             });
  router.Add("GET", "/v1/images",
             [&](const HttpRequest&, const PathParams&, const core::Principal& who) {
               auto list = images.List(who);
               return JsonOrError(200, list);
             });
  router.Add("GET", "/v1/images/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto image = images.Get(who, p.at("id"));
               return JsonOrError(200, image);
             });
  router.Add("DELETE", "/v1/images/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               return NoContentOrError(images.Delete(who, p.at("id")));
             });
  router.Add("GET", "/v1/operations/{id}",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto op = images.Operation(who, p.at("id"));
               return JsonOrError(200, op);
             });
}

}  // namespace adapt::api

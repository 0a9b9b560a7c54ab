#include "api/s3_responses.h"

#include <algorithm>

#include "base/ids.h"
#include "base/log.h"
#include "base/markup.h"
#include "storage/host_failure.h"

namespace adapt::api::s3 {

HttpResponse S3Error(int status, const std::string& code, const std::string& message,
                     const std::string& resource) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/xml";
  r.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code + "</Code><Message>" +
           EscapeMarkup(message) + "</Message><Resource>" + EscapeMarkup(resource) +
           "</Resource><RequestId>" + NewId("req").substr(4) + "</RequestId></Error>";
  return r;
}

std::string PublicMessage(const Status& st) {
  if (st.code() != Code::kInternal) return st.message();
  spdlog::error("storage gateway: {}", st.message());
  return storage::kObjectStoreFailed;
}

S3Failure FailureOf(const Status& st, const char* not_found) {
  switch (st.code()) {
    case Code::kNotFound:
      return {404, not_found, st.message()};
    case Code::kInvalidArgument:
      return {400, "InvalidArgument", st.message()};
    case Code::kPayloadTooLarge:
      return {400, "EntityTooLarge", st.message()};
    case Code::kUnauthenticated:
    case Code::kPermissionDenied:
      return {403, "AccessDenied", st.message()};
    case Code::kResourceExhausted:
    case Code::kPaymentRequired:
      // 403, not 429 or 503: S3 clients retry those, and a full quota stays full.
      return {403, "QuotaExceeded", st.message()};
    default:
      return {500, "InternalError", PublicMessage(st)};
  }
}

HttpResponse FromStatus(const Status& st, const std::string& resource, const char* not_found) {
  S3Failure failure = FailureOf(st, not_found);
  return S3Error(failure.status, failure.code, failure.message, resource);
}

HttpResponse ChunkedError(const Status& st, const std::string& key) {
  if (st.code() == Code::kPermissionDenied)
    return S3Error(403, "SignatureDoesNotMatch", st.message(), key);
  return S3Error(400, "IncompleteBody", st.message(), key);
}

HttpResponse Xml(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/xml";
  r.body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + body;
  return r;
}

HttpResponse Empty(int status) {
  HttpResponse r;
  r.status = status;
  r.content_type = "";
  return r;
}

bool Has(const HttpRequest& req, const std::string& name) { return req.query.count(name) > 0; }

std::string Q(const HttpRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  return it == req.query.end() ? "" : it->second;
}

storage::ObjectSource BodySource(const HttpRequest& req, size_t& off) {
  return [&req, &off](char* buf, size_t n) -> long {
    if (req.body_stream) return req.body_stream->Read(buf, n);
    size_t take = std::min(n, req.body.size() - off);
    std::copy_n(req.body.data() + off, take, buf);
    off += take;
    return static_cast<long>(take);
  };
}

}  // namespace adapt::api::s3

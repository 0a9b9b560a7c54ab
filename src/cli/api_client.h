// ApiClient speaks adaptd's REST API over libcurl: JSON requests with a bearer key, and
// Server-Sent Events read line by line. It reports every HTTP answer as an HttpResponse
// (including 4xx/5xx); only a failed exchange (no connection, reset, timeout) is an error.
#pragma once

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace adapt::cli {

struct HttpResponse {
  long status = 0;
  std::string body;
  bool timed_out = false;  // a Stream ended by its max_time (status is 0 if nothing came)
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A create's --idempotency-key as the Idempotency-Key header; none when the flag is empty.
inline HeaderList IdempotencyHeaders(const std::string& key) {
  if (key.empty()) return {};
  return {{"Idempotency-Key", key}};
}

struct StreamOptions {
  HeaderList headers;  // e.g. Last-Event-ID
  // When positive, the stream is closed after this long; that is an answer with timed_out
  // set, not an error, because a quiet event stream is how "nothing happened yet" looks.
  std::chrono::milliseconds max_time{0};
};

// Called with each line of an event stream, without its line ending. Return false to stop.
using LineCallback = std::function<bool(std::string_view line)>;

// Not thread-safe: use one ApiClient per thread. Every call blocks until the answer is complete.
class ApiClient {
 public:
  // `base_url` is like "http://127.0.0.1:8080"; `api_key` may be empty, then no Authorization
  // header is sent and adaptd answers 401 where it needs one.
  ApiClient(std::string base_url, std::string api_key);

  const std::string& base_url() const { return base_url_; }
  const std::string& api_key() const { return api_key_; }

  // `path` starts with "/" and carries any query string, already escaped.
  // Transport failures answer Code::kUnavailable, "cannot reach adaptd at URL: reason".
  Result<HttpResponse> Get(const std::string& path) const;
  Result<HttpResponse> Post(const std::string& path, const nlohmann::json& body,
                            const HeaderList& headers = {}) const;
  Result<HttpResponse> Put(const std::string& path, const nlohmann::json& body) const;
  Result<HttpResponse> Delete(const std::string& path) const;

  // GETs an event stream and feeds each line to `on_line` as it arrives, until the server
  // closes the stream or `on_line` returns false. For a status >= 400 the callback is not
  // called and the body is returned in the response instead.
  Result<HttpResponse> Stream(const std::string& path, const LineCallback& on_line,
                              const StreamOptions& options = {}) const;

 private:
  Result<HttpResponse> Perform(const char* method, const std::string& path, const std::string* body,
                               const HeaderList& headers, const LineCallback* on_line,
                               std::chrono::milliseconds max_time = {}) const;

  std::string base_url_;
  std::string api_key_;
};

// OK for a status below 400; otherwise the error named by the body's
// {"error":{"code","message","field"}}, or "HTTP <status>" with the body when it has none.
Status ErrorFromResponse(const HttpResponse& response);

// The body of a successful answer as JSON (null for an empty body), or its error.
Result<nlohmann::json> JsonOrError(const Result<HttpResponse>& response);

// Percent-encodes everything but RFC 3986 unreserved characters, for a path segment or
// a query value (base's PercentEncode, under the name the CLI's commands use).
std::string EscapeUrlComponent(std::string_view text);

// "/v1/sandboxes/<id>", the id escaped: the root of every per-sandbox route.
std::string SandboxPath(std::string_view id);

// "?k1=v1&k2=v2" with escaped values, skipping empty values; "" when nothing remains.
std::string QueryString(const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace adapt::cli

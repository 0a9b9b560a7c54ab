#include "cli/api_client.h"

#include <curl/curl.h>

#include <memory>

#include "base/percent.h"

namespace adapt::cli {
namespace {

constexpr long kConnectTimeoutSeconds = 10;

using CurlPtr = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using HeaderPtr = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

// What the write callback needs. For a stream, lines are delivered only once the status is
// known to be a success, so an error body is kept whole for ErrorFromResponse.
struct Transfer {
  CURL* curl = nullptr;
  const LineCallback* on_line = nullptr;
  std::string body;
  std::string pending_line;
  bool status_checked = false;
  bool streaming = false;
  bool stopped_by_callback = false;
};

// Feeds complete lines of `transfer.pending_line` to the callback; false when it asked to stop.
bool DeliverLines(Transfer& transfer) {
  size_t start = 0;
  for (;;) {
    size_t end = transfer.pending_line.find('\n', start);
    if (end == std::string::npos) break;
    std::string_view line(transfer.pending_line.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    start = end + 1;
    if (!(*transfer.on_line)(line)) {
      transfer.stopped_by_callback = true;
      return false;
    }
  }
  transfer.pending_line.erase(0, start);
  return true;
}

size_t OnData(char* data, size_t size, size_t count, void* user) {
  auto& transfer = *static_cast<Transfer*>(user);
  const size_t length = size * count;
  if (transfer.on_line != nullptr && !transfer.status_checked) {
    long status = 0;
    curl_easy_getinfo(transfer.curl, CURLINFO_RESPONSE_CODE, &status);
    transfer.streaming = status < 400;
    transfer.status_checked = true;
  }
  if (!transfer.streaming) {
    transfer.body.append(data, length);
    return length;
  }
  transfer.pending_line.append(data, length);
  // Returning less than `length` makes curl abort the transfer, which is how a reader stops.
  return DeliverLines(transfer) ? length : 0;
}

Code CodeForHttpStatus(long status) {
  switch (status) {
    case 400:
      return Code::kInvalidArgument;
    case 401:
      return Code::kUnauthenticated;
    case 403:
      return Code::kPermissionDenied;
    case 404:
      return Code::kNotFound;
    case 409:
      return Code::kConflict;
    case 413:
      return Code::kPayloadTooLarge;
    case 422:
      return Code::kUnsupported;
    case 429:
      return Code::kResourceExhausted;
    case 402:
      return Code::kPaymentRequired;
    case 503:
      return Code::kUnavailable;
    default:
      return status < 500 ? Code::kInvalidArgument : Code::kInternal;
  }
}

std::string FirstLine(std::string_view text) {
  constexpr size_t kMaxLength = 200;
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  return std::string(text.substr(0, kMaxLength));
}

// The member as a string, "" when absent or of another type (json::value would throw).
std::string StringMember(const nlohmann::json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

ApiClient::ApiClient(std::string base_url, std::string api_key)
    : base_url_(std::move(base_url)), api_key_(std::move(api_key)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

Result<HttpResponse> ApiClient::Get(const std::string& path) const {
  return Perform("GET", path, nullptr, {}, nullptr);
}

Result<HttpResponse> ApiClient::Post(const std::string& path, const nlohmann::json& body,
                                     const HeaderList& headers) const {
  // Replacing invalid UTF-8 keeps dump() from throwing on odd bytes in user-given values.
  std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Perform("POST", path, &text, headers, nullptr);
}

Result<HttpResponse> ApiClient::Put(const std::string& path, const nlohmann::json& body) const {
  std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return Perform("PUT", path, &text, {}, nullptr);
}

Result<HttpResponse> ApiClient::Delete(const std::string& path) const {
  return Perform("DELETE", path, nullptr, {}, nullptr);
}

Result<HttpResponse> ApiClient::Stream(const std::string& path, const LineCallback& on_line,
                                       const StreamOptions& options) const {
  return Perform("GET", path, nullptr, options.headers, &on_line, options.max_time);
}

Result<HttpResponse> ApiClient::Perform(const char* method, const std::string& path,
                                        const std::string* body, const HeaderList& headers,
                                        const LineCallback* on_line,
                                        std::chrono::milliseconds max_time) const {
  CurlPtr curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return Internal("cannot initialise libcurl");

  HeaderPtr header_list(nullptr, &curl_slist_free_all);
  auto add_header = [&](const std::string& line) {
    header_list.reset(curl_slist_append(header_list.release(), line.c_str()));
  };
  add_header(on_line != nullptr ? "Accept: text/event-stream" : "Accept: application/json");
  if (!api_key_.empty()) add_header("Authorization: Bearer " + api_key_);
  if (body != nullptr) add_header("Content-Type: application/json");
  add_header("Expect:");  // no 100-continue round trip for larger bodies
  for (const auto& [name, value] : headers) add_header(name + ": " + value);
  if (!header_list) return Internal("cannot build request headers");

  Transfer transfer;
  transfer.curl = curl.get();
  transfer.on_line = on_line;
  char error_buffer[CURL_ERROR_SIZE] = {};
  const std::string url = base_url_ + path;

  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, header_list.get());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnData);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &transfer);
  if (body != nullptr) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }

  if (max_time.count() > 0)
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(max_time.count()));

  CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_WRITE_ERROR && transfer.stopped_by_callback) rc = CURLE_OK;
  const bool timed_out = rc == CURLE_OPERATION_TIMEDOUT && max_time.count() > 0;
  if (timed_out) rc = CURLE_OK;
  if (rc != CURLE_OK) {
    std::string reason = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(rc);
    return Status(Code::kUnavailable, "cannot reach adaptd at " + base_url_ + ": " + reason);
  }
  if (transfer.streaming && !transfer.stopped_by_callback && !transfer.pending_line.empty()) {
    transfer.pending_line.push_back('\n');  // the stream ended mid-line: deliver what came
    DeliverLines(transfer);
  }

  HttpResponse response;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(transfer.body);
  response.timed_out = timed_out;
  return response;
}

Status ErrorFromResponse(const HttpResponse& response) {
  if (response.status < 400) return Status::Ok();
  const Code code = CodeForHttpStatus(response.status);
  nlohmann::json parsed = nlohmann::json::parse(response.body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
    const nlohmann::json& error = parsed["error"];
    std::string message = StringMember(error, "message");
    if (message.empty()) message = StringMember(error, "code");
    if (message.empty()) message = "HTTP " + std::to_string(response.status);
    return Status(code, std::move(message), StringMember(error, "field"));
  }
  std::string message = "HTTP " + std::to_string(response.status);
  std::string detail = FirstLine(response.body);
  if (!detail.empty()) message += ": " + detail;
  return Status(code, std::move(message));
}

Result<nlohmann::json> JsonOrError(const Result<HttpResponse>& response) {
  if (!response.ok()) return response.status();
  RETURN_IF_ERROR(ErrorFromResponse(*response));
  if (response->body.empty()) return nlohmann::json(nullptr);
  nlohmann::json parsed = nlohmann::json::parse(response->body, nullptr, false);
  if (parsed.is_discarded()) return Internal("adaptd answered with invalid JSON");
  return parsed;
}

std::string EscapeUrlComponent(std::string_view text) { return PercentEncode(text); }

std::string SandboxPath(std::string_view id) { return "/v1/sandboxes/" + EscapeUrlComponent(id); }

std::string QueryString(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string query;
  for (const auto& [name, value] : params) {
    if (value.empty()) continue;
    query += query.empty() ? "?" : "&";
    query += name + "=" + EscapeUrlComponent(value);
  }
  return query;
}

}  // namespace adapt::cli

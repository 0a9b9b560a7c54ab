#include "api/http_request_decoding.h"

#include <cctype>
#include <map>
#include <utility>

#include "base/percent.h"

namespace adapt::api {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;

std::string ToString(beast::string_view s) { return std::string(s.data(), s.size()); }

// nullopt on a broken escape and on NUL, which no later layer should have to consider.
std::optional<std::string> DecodeComponent(std::string_view in, PlusSign plus) {
  auto out = PercentDecode(in, plus);
  if (!out || out->find('\0') != std::string::npos) return std::nullopt;
  return out;
}

// "a=1&b=2": pairs without '=' get an empty value, empty pairs are skipped, and the first
// of repeated keys wins. False on a broken escape.
bool DecodeQuery(std::string_view rest, std::map<std::string, std::string>& query) {
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto key = DecodeComponent(pair.substr(0, eq), PlusSign::kSpace);
    auto value = DecodeComponent(
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), PlusSign::kSpace);
    if (!key || !value) return false;
    query.emplace(std::move(*key), std::move(*value));
  }
  return true;
}

}  // namespace

std::optional<HttpRequest> ToHttpRequest(const http::request_header<>& msg,
                                         const std::string& remote) {
  std::string_view target(msg.target().data(), msg.target().size());
  if (target.empty() || target.front() != '/') return std::nullopt;
  HttpRequest request;
  const size_t question = target.find('?');
  auto path = DecodeComponent(target.substr(0, question), PlusSign::kLiteral);
  if (!path) return std::nullopt;
  request.path = std::move(*path);
  request.target = std::string(target);
  if (question != std::string_view::npos &&
      !DecodeQuery(target.substr(question + 1), request.query)) {
    return std::nullopt;
  }
  request.method = ToString(msg.method_string());
  for (const auto& field : msg) {
    std::string name = ToString(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string value = ToString(field.value());
    auto [it, inserted] = request.headers.emplace(std::move(name), value);
    if (!inserted) it->second += ", " + value;
  }
  request.remote = remote;
  return request;
}

std::optional<HttpRequest> ToHttpRequest(http::request<http::string_body>&& msg,
                                         const std::string& remote) {
  auto request = ToHttpRequest(static_cast<const http::request_header<>&>(msg), remote);
  if (request) request->body = std::move(msg.body());
  return request;
}

std::vector<std::string> RouteSegments(std::string_view raw_path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= raw_path.size()) {
    size_t end = raw_path.find('/', start);
    if (end == std::string_view::npos) end = raw_path.size();
    std::string_view segment = raw_path.substr(start, end - start);
    start = end + 1;
    if (segment.empty()) continue;
    // ToHttpRequest refused broken escapes already; a caller that did not is matched raw.
    auto decoded = PercentDecode(segment, PlusSign::kLiteral);
    out.push_back(decoded ? *decoded : std::string(segment));
  }
  return out;
}

std::string RoutedPath(std::string_view raw_path) {
  std::string out;
  for (const auto& segment : RouteSegments(raw_path)) out += "/" + segment;
  return out.empty() ? "/" : out;
}

}  // namespace adapt::api

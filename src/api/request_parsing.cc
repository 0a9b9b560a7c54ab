#include "api/request_parsing.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "base/ids.h"
#include "base/json_parse.h"
#include "base/request_fingerprint.h"

namespace adapt::api {

namespace {

bool BlankBody(const HttpRequest& request) {
  return request.body.find_first_not_of(" \t\r\n") == std::string::npos;
}

}  // namespace

Result<nlohmann::json> ParseRequiredJsonBody(const HttpRequest& request) {
  if (BlankBody(request))
    return InvalidArgument("", "the request body is empty; send a JSON object");
  return ParseJsonBody(request);
}

std::optional<store::IdempotencyKey> IdempotencyKeyOf(const HttpRequest& request,
                                                      const nlohmann::json& body) {
  if (!request.headers.count("idempotency-key")) return std::nullopt;
  return store::IdempotencyKey{request.Header("idempotency-key"),
                               RequestFingerprint(request.path + "\n" + body.dump())};
}

Result<nlohmann::json> ParseJsonBody(const HttpRequest& request) {
  if (BlankBody(request)) return nlohmann::json::object();
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJson(request.body, "the request body"));
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  return body;
}

std::function<long(char*, size_t)> RequestBodyReader(const HttpRequest& request) {
  if (auto stream = request.body_stream)
    return [stream](char* buf, size_t n) -> long { return stream->Read(buf, n); };
  auto body = std::make_shared<const std::string>(request.body);
  auto offset = std::make_shared<size_t>(0);
  return [body, offset](char* buf, size_t n) -> long {
    size_t take = std::min(n, body->size() - *offset);
    std::copy_n(body->data() + *offset, take, buf);
    *offset += take;
    return static_cast<long>(take);
  };
}

Result<int> QueryInt(const HttpRequest& request, const std::string& name, int fallback) {
  auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  int value = 0;
  const std::string& s = it->second;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    return InvalidArgument(name, name + " must be an integer");
  return value;
}

Result<std::string> OptionalStringField(const nlohmann::json& body, const char* field) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return std::string();
  if (!it->is_string()) return InvalidArgument(field, std::string(field) + " must be a string");
  return it->get<std::string>();
}

Result<std::optional<int64_t>> OptionalIntField(const nlohmann::json& body, const char* field) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) return std::optional<int64_t>();
  if (!it->is_number_integer())
    return InvalidArgument(field, std::string(field) + " must be an integer");
  return std::optional<int64_t>(it->get<int64_t>());
}

Result<std::vector<std::string>> CommandArgvFromJson(const nlohmann::json& body) {
  bool has_command = body.contains("command") && !body["command"].is_null();
  bool has_argv = body.contains("argv") && !body["argv"].is_null();
  if (has_command == has_argv)
    return InvalidArgument("command",
                           "give exactly one of argv (a program and its arguments) or command "
                           "(a shell command line)");
  if (has_command) {
    if (!body["command"].is_string() || body["command"].get<std::string>().empty())
      return InvalidArgument("command", "command must be a non-empty shell string");
    return std::vector<std::string>{"/bin/sh", "-c", body["command"].get<std::string>()};
  }
  const nlohmann::json& a = body["argv"];
  if (!a.is_array() || a.empty())
    return InvalidArgument("argv", "argv must be a non-empty array of strings");
  std::vector<std::string> argv;
  for (const auto& v : a) {
    if (!v.is_string()) return InvalidArgument("argv", "argv must be an array of strings");
    argv.push_back(v.get<std::string>());
  }
  return argv;
}

Result<std::string> DeleteConfirmation(const HttpRequest& request, const std::string& what) {
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request));
  for (const auto& [key, _] : body.items()) {
    if (key != "confirm") return InvalidArgument(key, "unknown field '" + key + "'");
  }
  if (body.contains("confirm")) {
    if (!body["confirm"].is_string())
      return InvalidArgument("confirm", "confirm must be " + what + ", as a string");
    return body["confirm"].get<std::string>();
  }
  if (auto q = request.query.find("confirm"); q != request.query.end()) return q->second;
  return std::string();
}

}  // namespace adapt::api

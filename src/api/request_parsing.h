// Reading JSON bodies and query parameters, with API.md errors for bad input.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/http_types.h"
#include "base/status.h"
#include "store/records.h"

namespace adapt::api {

// An empty body is {}; anything but a JSON object is a 400, and so is one nested deeper than
// kMaxJsonDepth (base/json_parse.h), naming the member it was found in.
Result<nlohmann::json> ParseJsonBody(const HttpRequest& request);

// A create's Idempotency-Key header with the fingerprint of what it asks: the path (which names
// the sandbox or organization a create is under) and the body as parsed, so that spacing and
// key order do not make two equal requests differ. nullopt without the header.
std::optional<store::IdempotencyKey> IdempotencyKeyOf(const HttpRequest& request,
                                                      const nlohmann::json& body);
// As ParseJsonBody, but an empty body is refused: for a request that replaces what it names
// (a PUT), where `{}` by omission would reset it.
Result<nlohmann::json> ParseRequiredJsonBody(const HttpRequest& request);

// Reads the request's body as it streams in (HttpRequest::body_stream) or, when the server
// read it whole (a route that streams, spelled in a way the server's choice did not match),
// from HttpRequest::body: a handler that read only the stream took such a body as empty.
// Returns what Read would: bytes, 0 at the end, -1 on a failed read. Holds the request's body
// by copy, so it may outlive the request.
std::function<long(char*, size_t)> RequestBodyReader(const HttpRequest& request);

// The integer query parameter `name`, `fallback` when absent; 400 when not an integer.
Result<int> QueryInt(const HttpRequest& request, const std::string& name, int fallback);

// Body member `field`: absent or null is empty / nullopt; any other type is a 400 naming it.
Result<std::string> OptionalStringField(const nlohmann::json& body, const char* field);
Result<std::optional<int64_t>> OptionalIntField(const nlohmann::json& body, const char* field);

// A command given as exactly one of `command` (a shell string, run with /bin/sh -c) or `argv`
// (an array of strings), as jobs and automations take it.
Result<std::vector<std::string>> CommandArgvFromJson(const nlohmann::json& body);

// The confirmation a destructive delete asks for: {"confirm": "..."} as the only body member,
// or ?confirm=...; empty when neither is given (the core says what was expected). `what`
// names what it must be in the error for a non-string ("the storage's name").
Result<std::string> DeleteConfirmation(const HttpRequest& request, const std::string& what);

}  // namespace adapt::api

// Every way a JSON body enters adaptd, and depth: ParseJson itself (base/json_parse.h), the
// REST body (ParseJsonBody), an MCP JSON-RPC message (Classify, then the argument check and
// the answers a tool call makes), and an OAuth client registration (ParseClientMetadata).
// The first byte picks the entry point; the second, for the wrapped targets, how many levels
// of arrays and objects to put around the rest (0 to 127), so inputs straddle the 64-level
// limit. Invariants: nothing crashes or throws, and an accepted value nests at most
// kMaxJsonDepth levels and survives dump() and a copy. A stack overflow from dump(), a copy
// or a comparison of a value too deep is what the limit prevents.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/request_parsing.h"
#include "base/json_parse.h"
#include "mcp/argument_check.h"
#include "mcp/client_metadata.h"
#include "mcp/json_rpc.h"

using nlohmann::json;

namespace {

// The depth of `value`, walked without recursion (the thing being checked is depth).
int Depth(const json& value) {
  int deepest = 0;
  std::vector<std::pair<const json*, int>> todo{{&value, value.is_structured() ? 1 : 0}};
  while (!todo.empty()) {
    auto [v, d] = todo.back();
    todo.pop_back();
    deepest = std::max(deepest, d);
    if (v->is_structured())
      for (const auto& child : *v) todo.emplace_back(&child, child.is_structured() ? d + 1 : d);
  }
  return deepest;
}

void CheckAccepted(const json& value) {
  if (Depth(value) > adapt::kMaxJsonDepth) __builtin_trap();
  json copy = value;
  std::string text = copy.dump(-1, ' ', false, json::error_handler_t::replace);
  auto again = adapt::ParseJson(text, "x");
  if (!again.ok()) __builtin_trap();
}

// `levels` arrays and objects (alternating) around `inner`.
std::string Wrap(const std::string& inner, int levels) {
  std::string open, close;
  for (int i = 0; i < levels; ++i) {
    if (i % 2) {
      open += "[";
      close = "]" + close;
    } else {
      open += "{\"k\":";
      close = "}" + close;
    }
  }
  return open + inner + close;
}

const json kSchema = {{"type", "object"},
                      {"properties",
                       {{"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 5}}},
                        {"labels", {{"type", "object"}}},
                        {"mode", {{"type", "string"}, {"enum", json::array({"a", "b"})}}}}},
                      {"required", json::array({"n"})}};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  int target = data[0] % 4;
  int levels = data[1] % 128;
  std::string text = Wrap(std::string(reinterpret_cast<const char*>(data) + 2, size - 2), levels);
  switch (target) {
    case 0: {
      auto value = adapt::ParseJson(text, "the body");
      if (value.ok()) CheckAccepted(*value);
      break;
    }
    case 1: {
      adapt::api::HttpRequest request;
      request.body = text;
      auto body = adapt::api::ParseJsonBody(request);
      if (body.ok()) {
        if (!body->is_object()) __builtin_trap();
        CheckAccepted(*body);
      }
      break;
    }
    case 2: {
      auto value = adapt::ParseJson(text, "the body");
      if (!value.ok()) {
        // mcp_http.cc answers a parse error naming the problem.
        adapt::mcp::RpcError(nullptr, adapt::mcp::rpc::kParseError, value.status().message())
            .dump();
        break;
      }
      CheckAccepted(*value);
      adapt::mcp::Message m = adapt::mcp::Classify(*value);
      adapt::mcp::RpcError(m.id, adapt::mcp::rpc::kInvalidRequest, m.problem).dump();
      if (m.kind == adapt::mcp::MessageKind::kRequest) {
        json arguments = m.params.value("arguments", json::object());
        adapt::mcp::CheckArguments(kSchema, arguments);
        adapt::mcp::RpcResult(m.id, {{"echo", m.params}})
            .dump(-1, ' ', false, json::error_handler_t::replace);
      }
      break;
    }
    case 3: {
      adapt::mcp::ClientMetadata client;
      adapt::mcp::ClientMetadataError problem;
      if (adapt::mcp::ParseClientMetadata(text, client, problem)) {
        if (client.redirect_uris.empty() || client.redirect_uris.size() > 10) __builtin_trap();
        for (const auto& uri : client.redirect_uris)
          if (!adapt::mcp::AcceptableRedirect(uri)) __builtin_trap();
        json{{"client_name", client.name}, {"redirect_uris", client.redirect_uris}}.dump();
      } else if (problem.error.empty() || problem.description.empty()) {
        __builtin_trap();
      }
      break;
    }
  }
  return 0;
}

#include "mcp/json_rpc.h"

namespace adapt::mcp {

using nlohmann::json;

Message Classify(const json& value) {
  Message m;
  if (value.is_array()) {
    m.problem = "batches are not supported: send one JSON-RPC message at a time";
    return m;
  }
  if (!value.is_object()) {
    m.problem = "a JSON-RPC message must be a JSON object";
    return m;
  }
  auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") {
    m.problem = "jsonrpc must be \"2.0\"";
    return m;
  }
  auto id = value.find("id");
  bool has_id = id != value.end();
  if (has_id && !(id->is_string() || id->is_number_integer())) {
    m.problem = "id must be a string or an integer";
    return m;
  }
  if (has_id) m.id = *id;
  auto method = value.find("method");
  if (method == value.end()) {
    if (has_id && (value.contains("result") || value.contains("error"))) {
      m.kind = MessageKind::kResponse;
      return m;
    }
    m.problem = "a request needs a method";
    return m;
  }
  if (!method->is_string() || method->get_ref<const std::string&>().empty()) {
    m.problem = "method must be a non-empty string";
    return m;
  }
  m.method = method->get<std::string>();
  auto params = value.find("params");
  if (params != value.end() && !params->is_object()) {
    m.problem = "params must be an object";
    return m;
  }
  m.params = params == value.end() ? json::object() : *params;
  m.kind = has_id ? MessageKind::kRequest : MessageKind::kNotification;
  return m;
}

json RpcResult(const json& id, json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

json RpcError(const json& id, int code, const std::string& message) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}};
}

json RpcNotification(const std::string& method, json params) {
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace adapt::mcp

// JSON-RPC 2.0 as MCP uses it: one message per POST or per stdio line, no batches. Builds
// answers and classifies what a client sent.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace adapt::mcp {

namespace rpc {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kRequestCancelled = -32800;
}  // namespace rpc

enum class MessageKind { kRequest, kNotification, kResponse, kInvalid };

struct Message {
  MessageKind kind = MessageKind::kInvalid;
  nlohmann::json id;  // requests and responses; null otherwise
  std::string method;
  nlohmann::json params;  // an object (empty when absent)
  std::string problem;    // why it is kInvalid
};

// Classifies one parsed JSON value. Anything but a single JSON-RPC 2.0 object is kInvalid.
Message Classify(const nlohmann::json& value);

nlohmann::json RpcResult(const nlohmann::json& id, nlohmann::json result);
nlohmann::json RpcError(const nlohmann::json& id, int code, const std::string& message);
nlohmann::json RpcNotification(const std::string& method, nlohmann::json params);

}  // namespace adapt::mcp

#include "mcp/sandbox_arguments.h"

#include <cmath>

namespace adapt::mcp {

const core::FieldNames& McpSandboxFields() {
  // memory_gib's schema bounds (0.125 to 64) are the core's memory_mib range, so the core
  // never reports it in MiB to a caller who spoke GiB.
  static const core::FieldNames kNames({{"memory_mib", "memory_gib"}, {"labels.name", "name"}});
  return kNames;
}

core::CreateSandbox CreateSandboxFromArguments(const nlohmann::json& args) {
  core::CreateSandbox req;
  req.surface = core::RequestSurface::kAssistant;  // seed 000's image rule (image_policy.h)
  if (args.contains("image")) req.image = args["image"].get<std::string>();
  if (args.contains("memory_gib"))
    req.memory_mib = static_cast<int64_t>(std::llround(args["memory_gib"].get<double>() * 1024));
  if (args.contains("cpu")) req.cpu = args["cpu"].get<int64_t>();
  if (args.contains("security_profile"))
    req.security_profile = args["security_profile"].get<std::string>();
  if (args.contains("startup_class")) req.startup_class = args["startup_class"].get<std::string>();
  if (args.contains("ttl_seconds")) req.ttl_seconds = args["ttl_seconds"].get<int64_t>();
  if (args.contains("storage")) req.storage = args["storage"].get<std::string>();
  if (args.contains("name")) req.labels["name"] = args["name"].get<std::string>();
  return req;
}

}  // namespace adapt::mcp

// list_sandbox_environments and list_gpu_types. The environments are those of
// GET /v1/environments (core/environments.h): seed 000's aliases, each naming an image and
// whether it is available on this host, and the image sources sandbox creation accepts.
#include "core/environments.h"
#include "core/gpu_types.h"
#include "mcp/tools.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

json Environments(const core::ImageCatalog& images, const core::ImagePolicy& policy) {
  core::EnvironmentCatalog catalog =
      core::ListEnvironments(images, policy, core::RequestSurface::kAssistant);
  json list = json::array();
  for (const auto& e : catalog.environments)
    list.push_back({{"alias", e.alias},
                    {"kind", e.kind},
                    {"description", e.description},
                    {"image", e.image},
                    {"available", e.available},
                    {"reason", e.reason ? json(*e.reason) : json(nullptr)}});
  return {{"environments", list},
          {"image_sources", catalog.image_sources},
          {"developer_public_images", catalog.developer_public_images},
          {"trusted_image_sources", catalog.trusted_image_sources}};
}

}  // namespace

void AddEnvironmentTools(ToolRegistry& registry, const ToolServices& services) {
  const core::ImageCatalog& images = services.images;
  static const core::ImagePolicy kDefaultPolicy;
  const core::ImagePolicy& policy = services.image_policy ? *services.image_policy : kDefaultPolicy;

  registry.Add(
      {"list_sandbox_environments",
       "List sandbox environments",
       "List environment aliases and the image sources accepted by sandbox creation. "
       "Pass an alias, or any image reference from a trusted source (for example "
       "\"python:3.13-slim\" or \"mathworks/matlab:r2026b\"), as image to create_sandbox"
       " or create_gpu_sandbox. When developer_public_images is true, "
       "security_profile=developer also accepts any public image.",
       {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}},
       {{"type", "object"},
        {"properties",
         {{"environments",
           {{"type", "array"},
            {"items",
             {{"type", "object"},
              {"properties",
               {{"alias", {{"type", "string"}}},
                {"image", {{"type", "string"}}},
                {"kind", {{"type", "string"}, {"enum", json::array({"cpu", "gpu"})}}},
                {"description", {{"type", "string"}}},
                {"available", {{"type", "boolean"}}},
                {"reason", {{"type", json::array({"string", "null"})}}}}},
              {"required", json::array({"alias", "image", "kind", "available"})}}}}},
          {"image_sources", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"developer_public_images", {{"type", "boolean"}}},
          {"trusted_image_sources", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
        {"required", json::array({"environments", "image_sources", "developer_public_images"})}},
       ToolAnnotations{true, false, true, false},
       [&images, &policy](ToolContext&, const json&) {
         return ToolResult::Ok(Environments(images, policy));
       }});

  registry.Add(
      {"list_gpu_types",
       "List GPU types",
       "List GPU models and memory sizes available for new GPU sandboxes. The response "
       "intentionally describes GPU capabilities without exposing backing "
       "infrastructure.",
       {{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}},
       {{"type", "object"},
        {"properties",
         {{"gpu_types",
           {{"type", "array"},
            {"items",
             {{"type", "object"},
              {"properties",
               {{"gpu_type", {{"type", "string"}}}, {"memory_gib", {{"type", "number"}}}}},
              {"required", json::array({"gpu_type"})}}}}},
          {"explanation", {{"type", "string"}}}}},
        {"required", json::array({"gpu_types", "explanation"})}},
       ToolAnnotations{true, false, true, false},
       [](ToolContext&, const json&) {
         core::GpuTypeCatalog catalog = core::ListGpuTypes();
         json types = json::array();
         for (const auto& t : catalog.gpu_types)
           types.push_back({{"gpu_type", t.type}, {"memory_gib", t.memory_gib}});
         return ToolResult::Ok(
             {{"gpu_types", types},
              {"explanation", catalog.explanation + " With MCP, use create_sandbox for a CPU "
                                                    "sandbox."}});
       }});
}

}  // namespace adapt::mcp

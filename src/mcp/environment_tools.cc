// list_sandbox_environments and list_gpu_types. Until /v1/environments lands, the
// environments are the images built on this node: every <images-dir>/<name>/rootfs, named by
// the reference that resolves to it ("debian_12" is "debian:12").
#include "core/image_catalog.h"
#include "mcp/tools.h"
#include "os/files.h"

namespace adapt::mcp {
namespace {

using nlohmann::json;

// The reference an image directory was stored under: the last '_' was the tag's ':'.
std::string ReferenceOf(const std::string& dir_name) {
  size_t last = dir_name.rfind('_');
  if (last == std::string::npos || last == 0) return dir_name;
  std::string ref = dir_name.substr(0, last) + ":" + dir_name.substr(last + 1);
  return core::ImageCatalog::DirectoryName(ref) == dir_name ? ref : dir_name;
}

json Environments(const std::string& images_dir, const std::string& default_image) {
  json out = json::array();
  for (const auto& name : os::ListDir(images_dir)) {
    if (name.empty() || name[0] == '.' || !os::Exists(images_dir + "/" + name + "/rootfs"))
      continue;
    std::string ref = ReferenceOf(name);
    out.push_back(
        {{"alias", ref},
         {"image", ref},
         {"kind", "cpu"},
         {"default", ref == default_image},
         {"has_python", os::Exists(images_dir + "/" + name + "/rootfs/usr/bin/python3")}});
  }
  return out;
}

}  // namespace

void AddEnvironmentTools(ToolRegistry& registry, const ToolServices& services) {
  std::string images_dir = services.images_dir;
  std::string default_image = services.default_image;

  registry.Add(
      {"list_sandbox_environments",
       "List sandbox environments",
       "Lists the image aliases create_sandbox accepts as image on this node, and which image "
       "sources are allowed. Images are built on the node; public registry images are not "
       "accepted here.",
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
                {"default", {{"type", "boolean"}}},
                {"has_python", {{"type", "boolean"}}}}},
              {"required", json::array({"alias", "image", "kind"})}}}}},
          {"image_sources", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"developer_public_images", {{"type", "boolean"}}}}},
        {"required", json::array({"environments", "image_sources", "developer_public_images"})}},
       ToolAnnotations{true, false, true, false},
       [images_dir, default_image](ToolContext&, const json&) {
         return ToolResult::Ok({{"environments", Environments(images_dir, default_image)},
                                {"image_sources", json::array({"local"})},
                                {"developer_public_images", false}});
       }});

  registry.Add(
      {"list_gpu_types",
       "List GPU types",
       "Lists the GPU models and memory sizes new GPU sandboxes can use. This node has none, so "
       "the list is empty and explanation says why.",
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
         return ToolResult::Ok(
             {{"gpu_types", json::array()},
              {"explanation",
               "This node has no GPUs that sandboxes can use (its gVisor runtime has no GPU "
               "passthrough); create CPU sandboxes with create_sandbox."}});
       }});
}

}  // namespace adapt::mcp

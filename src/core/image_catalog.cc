#include "core/image_catalog.h"

#include <nlohmann/json.hpp>

#include "os/files.h"

namespace adapt::core {
namespace {

std::vector<std::string> StringList(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return {};
  return j[key].get<std::vector<std::string>>();
}

}  // namespace

std::string ImageCatalog::DirectoryName(const std::string& reference) {
  std::string out;
  for (char c : reference) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-';
    out += safe ? c : '_';
  }
  return out;
}

Result<Image> ImageCatalog::Resolve(const std::string& reference) const {
  std::string name = DirectoryName(reference);
  std::string base = dir_ + "/" + name;
  if (name.empty() || name[0] == '.' || !os::Exists(base + "/rootfs") ||
      !os::Exists(base + "/config.json")) {
    return Status(Code::kNotFound,
                  "image '" + reference +
                      "' is not available on this host (pulling from registries is not supported "
                      "yet; build local images with scripts/build-image.sh)",
                  "image");
  }
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(base + "/config.json"));
  Image image{reference, base + "/rootfs", {}};
  try {
    auto j = nlohmann::json::parse(text);
    if (j.contains("config") && j["config"].is_object()) j = j["config"];
    image.config.entrypoint = StringList(j, "Entrypoint");
    image.config.cmd = StringList(j, "Cmd");
    image.config.env = StringList(j, "Env");
    image.config.working_dir = j.value("WorkingDir", "");
    image.config.user = j.value("User", "");
  } catch (const std::exception& e) {
    return Internal("reading the config of image " + reference + ": " + e.what());
  }
  return image;
}

}  // namespace adapt::core

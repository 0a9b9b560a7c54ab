#include "core/image_catalog.h"

#include <nlohmann/json.hpp>

#include "core/image_service.h"
#include "image/reference.h"
#include "os/file_in_root.h"
#include "os/files.h"

namespace adapt::core {
namespace {

std::vector<std::string> StringList(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_array()) return {};
  std::vector<std::string> out;
  for (const auto& v : j[key])
    if (v.is_string()) out.push_back(v);
  return out;
}

ImageConfig ParseConfig(nlohmann::json j) {
  ImageConfig c;
  if (j.contains("config") && j["config"].is_object()) j = j["config"];
  if (!j.is_object()) return c;
  c.entrypoint = StringList(j, "Entrypoint");
  c.cmd = StringList(j, "Cmd");
  c.env = StringList(j, "Env");
  if (j.contains("WorkingDir") && j["WorkingDir"].is_string()) c.working_dir = j["WorkingDir"];
  if (j.contains("User") && j["User"].is_string()) c.user = j["User"];
  return c;
}

Image FromStored(const std::string& reference, const image::StoredImage& s) {
  Image image{reference, "", s.layer_dirs, ParseConfig(s.config)};
  for (auto it = s.layer_dirs.rbegin(); it != s.layer_dirs.rend(); ++it) {
    if (os::RegularFileInRoot(*it, "/etc/passwd")) {
      image.rootfs = *it;
      break;
    }
  }
  if (image.rootfs.empty() && !s.layer_dirs.empty()) image.rootfs = s.layer_dirs.back();
  return image;
}

}  // namespace

std::string ImageStoreKey(const std::string& org_id, const std::string& reference) {
  if (reference.starts_with(kImportedImagePrefix)) return reference;
  return org_id + "/" + reference;
}

std::string ImageCatalog::DirectoryName(const std::string& reference) {
  std::string out;
  for (char c : reference) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-';
    out += safe ? c : '_';
  }
  return out;
}

Result<Image> ImageCatalog::Resolve(const std::string& org_id, const std::string& reference) const {
  std::string name = DirectoryName(reference);
  std::string base = dir_ + "/" + name;
  if (name.empty() || name[0] == '.' || !os::Exists(base + "/rootfs") ||
      !os::Exists(base + "/config.json")) {
    if (store_) {
      if (org_id.empty())
        return Status(Code::kNotFound, "image '" + reference + "' is not a local image", "image");
      if (auto stored = store_->Lookup(ImageStoreKey(org_id, reference)))
        return FromStored(reference, *stored);
      return Status(Code::kNotFound, "image '" + reference + "' has not been pulled", "image");
    }
    return Status(Code::kNotFound,
                  "image '" + reference +
                      "' is not available on this host (pulling from registries is not supported "
                      "yet; build local images with scripts/build-image.sh)",
                  "image");
  }
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(base + "/config.json"));
  Image image{reference, base + "/rootfs", {}, {}};
  try {
    image.config = ParseConfig(nlohmann::json::parse(text));
  } catch (const std::exception& e) {
    return Internal("reading the config of image " + reference + ": " + e.what());
  }
  return image;
}

bool ImageCatalog::Pullable(const std::string& reference) const {
  return store_ && image::ParseReference(reference).ok();
}

Result<Image> ImageCatalog::ResolveOrPull(const std::string& org_id,
                                          const std::string& reference) const {
  auto found = Resolve(org_id, reference);
  if (found.ok() || found.status().code() != Code::kNotFound || !store_ || org_id.empty() ||
      reference.starts_with(kImportedImagePrefix))
    return found;
  ASSIGN_OR_RETURN(image::StoredImage stored,
                   store_->Pull(ImageStoreKey(org_id, reference), reference, {}));
  return FromStored(reference, stored);
}

}  // namespace adapt::core

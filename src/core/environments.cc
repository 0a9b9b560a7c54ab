#include "core/environments.h"

#include <vector>

namespace adapt::core {
namespace {

struct Alias {
  const char* alias;
  const char* description;
  const char* image;  // a local image (scripts/build-image.sh) or any reference
  const char* build;  // the scripts/build-image.sh argument that builds it
};

// The default debian:12 image carries python3, so python is served by it. The others are
// Debian-package images (nodejs; gcc/g++; rustc/cargo; blender) built by
// scripts/build-image.sh (setup.sh builds all five); a deployment with registry access can
// point an alias at any reference instead.
const std::vector<Alias> kEnvironments = {
    {"python", "Python 3 (Debian 12 python3)", "debian:12", "debian"},
    {"node", "Node.js (Debian 12 nodejs)", "adapt-env/node:debian12", "node"},
    {"gcc", "GCC and G++ (Debian 12 gcc, g++)", "adapt-env/gcc:debian12", "gcc"},
    {"rust", "Rust (Debian 12 rustc, cargo)", "adapt-env/rust:debian12", "rust"},
    {"blender", "Blender (Debian 12 blender)", "adapt-env/blender:debian12", "blender"},
};

std::string Unavailable(const Alias& e) {
  return std::string("the image ") + e.image + " of environment '" + e.alias +
         "' is not built on this host (scripts/build-image.sh IMAGES_DIR " + e.build +
         " builds it)";
}

}  // namespace

EnvironmentCatalog ListEnvironments(const ImageCatalog& images, const ImagePolicy& policy,
                                    RequestSurface surface) {
  EnvironmentCatalog catalog;
  for (const auto& e : kEnvironments) {
    bool available = images.Resolve("", e.image).ok();
    catalog.environments.push_back(
        {e.alias, "cpu", e.description, e.image, available,
         available ? std::nullopt : std::optional<std::string>(Unavailable(e))});
  }
  catalog.trusted_image_sources = policy.SourceNames();
  catalog.developer_public_images = policy.developer_public_images();
  catalog.image_policy = policy.api_policy();
  std::string trusted;
  for (const auto& s : catalog.trusted_image_sources) trusted += (trusted.empty() ? "" : ", ") + s;
  catalog.image_sources = {"an environment alias above"};
  if (surface == RequestSurface::kApi && policy.api_policy() == "open") {
    catalog.image_sources.push_back(
        "any image reference pulled from an OCI registry this host can reach");
    catalog.image_sources.push_back("an image of the organization's /v1/images by imageId");
    return catalog;
  }
  catalog.image_sources.push_back("an image reference from a trusted source: " + trusted);
  if (policy.developer_public_images())
    catalog.image_sources.push_back("with security profile developer: any public image reference");
  if (surface == RequestSurface::kApi)
    catalog.image_sources.push_back(
        "an image of the organization's /v1/images by imageId, when pulled from a trusted "
        "source");
  return catalog;
}

bool IsEnvironmentAlias(const std::string& name) {
  for (const auto& e : kEnvironments)
    if (name == e.alias) return true;
  return false;
}

std::vector<std::string> EnvironmentImages() {
  std::vector<std::string> out;
  for (const auto& e : kEnvironments) out.push_back(e.image);
  return out;
}

std::optional<Result<std::string>> ResolveEnvironment(const ImageCatalog& images,
                                                      const std::string& name) {
  for (const auto& e : kEnvironments) {
    if (name != e.alias) continue;
    if (!images.Resolve("", e.image).ok())
      return Result<std::string>(Unsupported("image", Unavailable(e)));
    return Result<std::string>(std::string(e.image));
  }
  return std::nullopt;
}

}  // namespace adapt::core

// Environments: seed 000's ready-made environment aliases (python, node, gcc, rust, blender),
// each naming an image, and the image sources sandbox creation accepts. An alias is
// available when its image is on this host; `image: "<alias>"` on create resolves to it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "core/image_catalog.h"
#include "core/image_policy.h"

namespace adapt::core {

struct Environment {
  std::string alias;  // what create accepts as `image`
  std::string kind;   // "cpu"
  std::string description;
  std::string image;
  bool available = false;
  std::optional<std::string> reason;  // why it is not available
};

struct EnvironmentCatalog {
  std::vector<Environment> environments;
  std::vector<std::string> image_sources;  // the other images sandbox creation accepts
  bool developer_public_images = false;
  std::vector<std::string> trusted_image_sources;  // ImagePolicy::SourceNames()
  std::string image_policy = "open";               // what the REST API follows
};

// The aliases and the image sources `surface` accepts under `policy`.
EnvironmentCatalog ListEnvironments(const ImageCatalog& images, const ImagePolicy& policy = {},
                                    RequestSurface surface = RequestSurface::kApi);

// Whether `name` is an alias (python, node, ...).
bool IsEnvironmentAlias(const std::string& name);

// The images the aliases stand for (trusted whatever the policy's sources).
std::vector<std::string> EnvironmentImages();

// The image an alias stands for; nullopt when `name` is not an alias; Unsupported when the
// alias's image is not available on this host.
std::optional<Result<std::string>> ResolveEnvironment(const ImageCatalog& images,
                                                      const std::string& name);

}  // namespace adapt::core

// ImageReference: "[registry/]repository[:tag][@sha256:hex]" as docker understands it. A first
// component with a '.' or ':' or equal to "localhost" names the registry; otherwise the image
// is on Docker Hub, where single-component names live under "library/".
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::image {

struct ImageReference {
  std::string registry;    // "registry-1.docker.io", "127.0.0.1:5000"
  std::string repository;  // "library/debian"
  std::string tag;         // "latest" when neither tag nor digest was given
  std::string digest;      // "sha256:<64 hex>" or empty

  // What the manifest is fetched by: the digest when given, else the tag.
  std::string ManifestRef() const { return digest.empty() ? tag : digest; }
  // Loopback registries are spoken to over plain HTTP, as docker allows for localhost.
  std::string BaseUrl() const;
  std::string ToString() const;
};

// InvalidArgument naming `field` when `text` is not a valid reference.
Result<ImageReference> ParseReference(const std::string& text, const std::string& field = "image");

bool IsSha256Digest(const std::string& digest);

}  // namespace adapt::image

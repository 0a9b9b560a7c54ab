// Image manifests as registries serve them: Docker schema 2 and OCI manifests (a config blob
// and an ordered list of layer blobs) and manifest lists / OCI indexes (one manifest per
// platform, of which adapt takes linux/amd64).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::image {

inline constexpr const char* kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr const char* kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr const char* kDockerManifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr const char* kDockerManifestList =
    "application/vnd.docker.distribution.manifest.list.v2+json";
// Seed 001: "fit the 32 GiB image-build limit".
inline constexpr uint64_t kMaxImageBytes = 32ull << 30;
// Manifests, indexes and image configs are read whole into memory, so each is at most this
// (a real one is a few KiB); layers are streamed and never read whole.
inline constexpr uint64_t kMaxMetadataBytes = 4 << 20;

struct Descriptor {
  std::string media_type;
  std::string digest;  // sha256:<hex>, validated
  uint64_t size = 0;
  std::string platform;  // "os/arch[/variant]" in an index, else empty
};

struct Manifest {
  bool is_index = false;
  std::vector<Descriptor> manifests;  // index only
  Descriptor config;                  // image manifest only
  std::vector<Descriptor> layers;     // image manifest only, base first
  uint64_t TotalLayerBytes() const;
};

// `content_type` is the response's Content-Type; the body's mediaType wins when present.
Result<Manifest> ParseManifest(const std::string& body, const std::string& content_type);

// The linux/amd64 entry of an index, or an error naming the platforms it offers.
Result<Descriptor> PickPlatform(const Manifest& index, const std::string& reference);

// The image config blob of `what` ("image 'x'"): a JSON object for linux/amd64, or an error.
Result<nlohmann::json> ParseImageConfig(const std::string& text, const std::string& what);

// Layer compression by media type: "gzip", "zstd", "" (plain tar); error for others.
Result<std::string> LayerCompression(const std::string& media_type);

}  // namespace adapt::image

// Reads one image out of a staged image archive (archive_staging.h), checking every blob it
// uses against its digest before anything is trusted:
//   - an OCI image layout (oci-layout, index.json, blobs/sha256/<hex>), as written by
//     `skopeo copy ... oci-archive:` and `docker save` since Docker 25: each blob's sha256 and
//     size must match the descriptor naming it; an index is followed to linux/amd64.
//   - a `docker save` archive (manifest.json, the config <hex>.json, plain-tar layers), as
//     written by `docker save` and `skopeo copy ... docker-archive:`: each layer's sha256 must
//     be the config's diff id for it. adapt writes an OCI manifest for such an image.
// An archive with several images needs `name`: the ref name annotation (OCI) or a RepoTag.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "image/archive_staging.h"
#include "image/manifest.h"

namespace adapt::image {

struct ArchiveImage {
  std::string format;           // "oci" or "docker"
  std::string name;             // the name the archive gives the image; "" when none
  std::string manifest;         // the image manifest (written by adapt for a docker archive)
  std::string manifest_digest;  // its sha256
  nlohmann::json config;        // the image config, checked to be linux/amd64
  std::string config_digest;
  std::vector<Descriptor> layers;                 // base first
  std::map<std::string, std::string> blob_files;  // digest -> staged file (config, layers, ...)
};

Result<ArchiveImage> ReadImageArchive(const StagedArchive& archive, const std::string& name);

}  // namespace adapt::image

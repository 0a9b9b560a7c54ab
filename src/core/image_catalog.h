// ImageCatalog: the images a sandbox can start from. Until registry pulls land, these are
// root filesystems built on this machine (scripts/build-image.sh), one directory each:
// <images-dir>/<name>/rootfs and <images-dir>/<name>/config.json (the OCI image config's
// Entrypoint, Cmd, Env, WorkingDir and User).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::core {

struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "K=V"
  std::string working_dir;
  std::string user;
};

struct Image {
  std::string reference;  // "debian:12"
  std::string rootfs;     // directory
  ImageConfig config;
};

class ImageCatalog {
 public:
  explicit ImageCatalog(std::string images_dir) : dir_(std::move(images_dir)) {}

  // NotFound (with a hint) when `reference` has not been built here. Thread-safe.
  Result<Image> Resolve(const std::string& reference) const;

  // The directory name a reference is stored under: ':' and '/' become '_'.
  static std::string DirectoryName(const std::string& reference);

 private:
  std::string dir_;
};

}  // namespace adapt::core

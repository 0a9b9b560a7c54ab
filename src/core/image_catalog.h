// ImageCatalog: the images a sandbox can start from. First the root filesystems built on
// this machine (scripts/build-image.sh), one directory each: <images-dir>/<name>/rootfs and
// <images-dir>/<name>/config.json (the OCI image config's Entrypoint, Cmd, Env, WorkingDir
// and User); then images pulled from OCI registries into the image store (image/).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "image/image_store.h"

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
  // A local image's root filesystem; for a pulled image, the topmost layer holding
  // /etc/passwd (where startup.user is looked up).
  std::string rootfs;
  std::vector<std::string> layers;  // a pulled image's layer directories, base first
  ImageConfig config;
};

class ImageCatalog {
 public:
  explicit ImageCatalog(std::string images_dir, image::ImageStore* store = nullptr)
      : dir_(std::move(images_dir)), store_(store) {}

  // A local image or one pulled before; NotFound (with a hint) otherwise. Thread-safe.
  Result<Image> Resolve(const std::string& reference) const;

  // Whether `reference` could be pulled (a registry store is configured and it parses).
  bool Pullable(const std::string& reference) const;

  // Resolve, pulling from the registry when the image is not here yet. Blocking.
  Result<Image> ResolveOrPull(const std::string& reference) const;

  // The directory name a reference is stored under: ':' and '/' become '_'.
  static std::string DirectoryName(const std::string& reference);

 private:
  std::string dir_;
  image::ImageStore* store_;
};

}  // namespace adapt::core

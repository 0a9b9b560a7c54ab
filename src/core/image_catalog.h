// ImageCatalog: the images a sandbox can start from. First the root filesystems built on
// this machine (scripts/build-image.sh), one directory each: <images-dir>/<name>/rootfs and
// <images-dir>/<name>/config.json (the OCI image config's Entrypoint, Cmd, Env, WorkingDir
// and User); then images pulled from OCI registries into the image store (image/), which
// are each organization's own: a reference another organization pulled is not found by
// name, it is pulled again with this organization's access (layers are shared on disk).
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
  std::string rootfs;               // read on the host only through os/file_in_root.h
  std::vector<std::string> layers;  // a pulled image's layer directories, base first
  ImageConfig config;
};

// The image-store key of `reference` for organization `org_id`. An imported image's
// reference ("import:<image id>", reached through its imageId only) is its own key.
std::string ImageStoreKey(const std::string& org_id, const std::string& reference);

class ImageCatalog {
 public:
  explicit ImageCatalog(std::string images_dir, image::ImageStore* store = nullptr)
      : dir_(std::move(images_dir)), store_(store) {}

  // A local image or one `org_id` pulled before (an empty `org_id`: local images only);
  // NotFound (with a hint) otherwise. Thread-safe.
  Result<Image> Resolve(const std::string& org_id, const std::string& reference) const;

  // Whether `reference` could be pulled (a registry store is configured and it parses).
  bool Pullable(const std::string& reference) const;

  // Resolve, pulling from the registry for `org_id` (anonymously) when the image is not
  // here yet. Blocking.
  Result<Image> ResolveOrPull(const std::string& org_id, const std::string& reference) const;

  // The directory name a reference is stored under: ':' and '/' become '_'.
  static std::string DirectoryName(const std::string& reference);

 private:
  std::string dir_;
  image::ImageStore* store_;
};

}  // namespace adapt::core

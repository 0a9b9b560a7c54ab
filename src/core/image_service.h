// ImageService: the typed verbs on /v1/images. An organization pulls an image by reference
// (an operation: the image is "pulling" with progress in bytes until "ready" or "failed"),
// lists and inspects its images (digest, size, platform, config, the sandboxes using it) and
// deletes them (Conflict while a live sandbox uses one); deleting collects the blobs and
// layers nothing uses any more. Registry credentials serve the pull and are never stored or
// echoed. Thread-safe.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "core/auth.h"
#include "image/image_store.h"
#include "store/store.h"

namespace adapt::core {

class ImageService {
 public:
  ImageService(store::Store& store, image::ImageStore& images, boost::asio::thread_pool& workers);

  // Pulls a previous adaptd left unfinished are marked failed. Call once, before serving.
  void Reconcile();

  Result<nlohmann::json> Pull(const Principal& who, const nlohmann::json& body);
  Result<nlohmann::json> Get(const Principal& who, const std::string& id);
  Result<nlohmann::json> List(const Principal& who);
  Status Delete(const Principal& who, const std::string& id);
  // GET /v1/operations/{id} for a pull: its phase (Pending, Running, Completed, Failed).
  Result<nlohmann::json> Operation(const Principal& who, const std::string& id);

  // The reference of this organization's ready image `id` (sandbox create's imageId).
  Result<std::string> ReferenceOf(const std::string& org_id, const std::string& id);

  // Removes what no image record and no live sandbox uses.
  void CollectGarbage();

 private:
  void RunPull(store::ImageRecord rec, image::Credentials creds);
  nlohmann::json View(const store::ImageRecord& rec, bool detail);

  store::Store& store_;
  image::ImageStore& images_;
  boost::asio::thread_pool& workers_;
  std::mutex mu_;
  std::map<std::string, std::pair<uint64_t, uint64_t>> progress_;  // id -> (bytes, total)
};

}  // namespace adapt::core

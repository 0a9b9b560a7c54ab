// ImageRecordStore: image records (/v1/images); the blobs themselves live in image::ImageStore. One
// domain of Store (store/store.h): a service that needs only this domain depends on this interface,
// and a test can give it a MemoryStore. Every method is one transaction; implementations are
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class ImageRecordStore {
 public:
  virtual ~ImageRecordStore() = default;

  // Images (/v1/images). Put inserts or replaces. An empty org_id lists every org's.
  virtual Status PutImage(const ImageRecord& image) = 0;
  // Inserts a new image record, counting in the same transaction the organization's images
  // (at `max_images` already: kResourceExhausted) and, when `image` is in progress (pulling
  // or importing), those in progress (at `max_in_progress`: kResourceExhausted); nothing is
  // written then. 0 means no cap.
  virtual Status InsertImageWithinCaps(const ImageRecord& image, int max_images,
                                       int max_in_progress) = 0;
  virtual Result<ImageRecord> GetImage(const std::string& org_id, const std::string& id) = 0;
  virtual Result<std::vector<ImageRecord>> ListImages(const std::string& org_id) = 0;
  virtual Status DeleteImage(const std::string& org_id, const std::string& id) = 0;
};

}  // namespace adapt::store

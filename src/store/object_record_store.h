// ObjectRecordStore: object storage's rows; the bytes are storage::ObjectStore's blobs. One domain
// of Store (store/store.h): a service that needs only this domain depends on this interface, and a
// test can give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class ObjectRecordStore {
 public:
  virtual ~ObjectRecordStore() = default;

  // Object storage. PutObject inserts or replaces and returns the replaced blob ("" when new).
  virtual Result<std::string> PutObject(const ObjectRecord& object) = 0;
  virtual Result<ObjectRecord> GetObject(const std::string& org_id, const std::string& key) = 0;
  // Up to `limit` objects whose key starts with `prefix` and is > `after` (byte order), in key
  // order. The search starts at the prefix and ends past it: no row outside it is read.
  virtual Result<std::vector<ObjectRecord>> ListObjects(const std::string& org_id,
                                                        const std::string& prefix,
                                                        const std::string& after, size_t limit) = 0;
  // Returns the deleted object's blob; NotFound when there is none.
  virtual Result<std::string> DeleteObject(const std::string& org_id, const std::string& key) = 0;
  // Every blob some object or site release refers to.
  virtual Result<std::vector<std::string>> ListReferencedBlobs() = 0;
  // The bytes the organization's object storage holds: its objects, and the releases of its
  // sites and apps (their own copies, which count against the same quota).
  virtual Result<uint64_t> ObjectBytes(const std::string& org_id) = 0;
  // PutObject, in one transaction with a check that the organization's object storage then
  // holds (as ObjectBytes counts) at most `quota_bytes` (kResourceExhausted otherwise, and
  // nothing changes); 0 means no limit.
  virtual Result<std::string> PutObjectWithinQuota(const ObjectRecord& object,
                                                   uint64_t quota_bytes) = 0;
};

}  // namespace adapt::store

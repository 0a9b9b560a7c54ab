// Static websites: publishing copies an object prefix that holds index.html into an immutable
// release (its own blobs, never changed afterwards); a site is a stable hostname under the
// ingress domain serving its latest release. Publishing again makes a new release.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "storage/object_store.h"
#include "store/store.h"

namespace adapt::storage {

constexpr size_t kMaxSiteFiles = 1000;
constexpr uint64_t kMaxSiteBytes = 1ull << 30;

struct SiteFile {
  std::string content_type;
  uint64_t size = 0;
  std::unique_ptr<os::FileReader> reader;
};

class SiteService {
 public:
  SiteService(store::Store& store, ObjectStore& objects, std::string domain)
      : store_(store), objects_(objects), domain_(std::move(domain)) {}
  // The ingress ports, for the URLs (0: left out).
  void SetPorts(uint16_t http, uint16_t https) {
    http_port_ = http;
    https_port_ = https;
  }

  // Publishes `source` (an object prefix) as a new release of site `name` (made when new).
  Result<nlohmann::json> Publish(const std::string& org_id, const std::string& source,
                                 const std::string& name);
  Result<std::vector<nlohmann::json>> List(const std::string& org_id);
  Result<nlohmann::json> Get(const std::string& org_id, const std::string& id);
  Status Delete(const std::string& org_id, const std::string& id);
  // The file at `path` of the site served at `host` (index.html for a directory).
  Result<SiteFile> Serve(const std::string& host, const std::string& path);
  bool IsSiteHost(const std::string& host);

 private:
  nlohmann::json View(const store::SiteRecord& site, const store::SiteReleaseRecord* release);

  store::Store& store_;
  ObjectStore& objects_;
  std::string domain_;
  uint16_t http_port_ = 0, https_port_ = 0;
};

}  // namespace adapt::storage

// Static websites: publishing copies an object prefix that holds index.html into an immutable
// release (its own blobs, never changed afterwards); a site is a stable hostname under the
// ingress domain serving its latest release. Publishing again makes a new release; a site
// keeps kMaxSiteReleases of them, and their bytes count against the organization's object
// storage quota.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/status.h"
#include "storage/object_store.h"
#include "store/site_store.h"

namespace adapt::storage {

constexpr size_t kMaxSiteFiles = 1000;
constexpr uint64_t kMaxSiteBytes = 1ull << 30;
// Kept per site: the live release and the newest others (a publish deletes older ones).
constexpr size_t kMaxSiteReleases = 10;
constexpr size_t kMaxSitesPerOrg = 100;

struct SiteFile {
  std::string org_id;  // the site's organization, whose count of site downloads it takes
  std::string content_type;
  uint64_t size = 0;
  std::unique_ptr<os::FileReader> reader;
};

// What to publish: errors name the fields `source` and `name`.
struct PublishSite {
  std::string source;  // an object prefix holding index.html; "" or "/": the root
  std::string name;    // "": "site"
};

// The release a site serves.
struct SiteReleaseView {
  std::string source;  // the object prefix it copied, with its trailing '/'
  size_t files = 0;
  int64_t published_at_ms = 0;
};

struct Site {
  std::string id;
  std::string name;
  std::string hostname;
  std::string release_id;
  std::string url;                // https, ending in /index.html
  std::vector<std::string> urls;  // https, then http
  int64_t created_at_ms = 0;
  std::optional<SiteReleaseView> release;  // unset when its release cannot be read
};

class SiteService {
 public:
  SiteService(store::SiteStore& store, ObjectStore& objects, std::string domain)
      : store_(store), objects_(objects), domain_(std::move(domain)) {}
  // The ingress ports, for the URLs (0: left out).
  void SetPorts(uint16_t http, uint16_t https) {
    http_port_ = http;
    https_port_ = https;
  }

  // Publishes `source` (an object prefix) as a new release of site `name` (made when new),
  // deleting the site's oldest releases past kMaxSiteReleases. kResourceExhausted, nothing
  // changed, when the copy would take the organization past its object storage quota or a
  // new site past kMaxSitesPerOrg.
  // `idempotency`: the key is written with the site (scope "site"); a replay publishes
  // nothing and answers the site the key published, as it is now; the key with another
  // request is Conflict; InvalidArgument unless it is 1 to 255 bytes.
  Result<Site> Publish(const std::string& org_id, const PublishSite& request,
                       const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  // A newest-first page of the organization's sites; InvalidArgument for a bad limit or cursor.
  Result<Page<Site>> List(const std::string& org_id, const PageRequest& page);
  Result<Site> Get(const std::string& org_id, const std::string& id);
  Status Delete(const std::string& org_id, const std::string& id);
  // The file at `path` of the site served at `host` (index.html for a directory).
  Result<SiteFile> Serve(const std::string& host, const std::string& path);
  bool IsSiteHost(const std::string& host);

 private:
  Site View(const store::SiteRecord& site, const store::SiteReleaseRecord* release);
  // The site an earlier publish under an Idempotency-Key made, as it is now.
  Result<Site> Published(const std::string& org_id, const std::string& site_id);

  store::SiteStore& store_;
  ObjectStore& objects_;
  std::string domain_;
  uint16_t http_port_ = 0, https_port_ = 0;
};

}  // namespace adapt::storage

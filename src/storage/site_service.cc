#include "storage/site_service.h"

#include <algorithm>

#include "base/ids.h"
#include "base/time.h"
#include "storage/object_key.h"

namespace adapt::storage {
namespace {

Status ValidateSiteName(const std::string& name) {
  if (name.empty() || name.size() > 40)
    return InvalidArgument("name", "name must be 1..40 characters");
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return InvalidArgument("name", "name may hold only a-z, 0-9 and '-'");
  }
  if (name.front() == '-' || name.back() == '-')
    return InvalidArgument("name", "name must not start or end with '-'");
  return Status::Ok();
}

}  // namespace

Site SiteService::View(const store::SiteRecord& s, const store::SiteReleaseRecord* release) {
  std::string http = "http://" + s.hostname +
                     (http_port_ && http_port_ != 80 ? ":" + std::to_string(http_port_) : "") +
                     "/index.html";
  std::string https = "https://" + s.hostname +
                      (https_port_ && https_port_ != 443 ? ":" + std::to_string(https_port_) : "") +
                      "/index.html";
  Site v;
  v.id = s.id;
  v.name = s.name;
  v.hostname = s.hostname;
  v.release_id = s.release_id;
  v.url = https;
  v.urls = {https, http};
  v.created_at_ms = s.created_at;
  if (release)
    v.release = SiteReleaseView{release->source_prefix, release->files.size(), release->created_at};
  return v;
}

Result<Site> SiteService::Publish(const std::string& org_id, const PublishSite& request,
                                  const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(org_id, "site", idempotency));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) return Published(org_id, *earlier);
  }
  std::string prefix = request.source;
  while (!prefix.empty() && prefix.front() == '/') prefix.erase(0, 1);
  if (!prefix.empty() && prefix.back() != '/') prefix += "/";
  if (!prefix.empty()) RETURN_IF_ERROR(ValidateObjectPrefix(prefix, "source"));
  std::string site_name = request.name.empty() ? "site" : request.name;
  RETURN_IF_ERROR(ValidateSiteName(site_name));
  // Bounded: at most kMaxSiteFiles objects and kMaxSiteBytes under the prefix.
  std::vector<store::ObjectRecord> files;
  std::string after;
  uint64_t total = 0;
  for (;;) {
    ASSIGN_OR_RETURN(auto page, objects_.List(org_id, prefix, "", after, kMaxListLimit));
    for (auto& o : page.objects) {
      total += o.size;
      files.push_back(std::move(o));
    }
    if (files.size() > kMaxSiteFiles)
      return InvalidArgument("source", "source holds more than 1000 objects");
    if (total > kMaxSiteBytes) return InvalidArgument("source", "source holds more than 1 GiB");
    if (!page.truncated) break;
    after = page.next_after;
  }
  bool has_index = std::any_of(files.begin(), files.end(), [&](const store::ObjectRecord& o) {
    return o.key == prefix + "index.html";
  });
  if (!has_index)
    return InvalidArgument("source", "source " +
                                         (prefix.empty() ? std::string("(the root)") : prefix) +
                                         " must contain index.html");
  // Reuse the site of this name, or make one.
  store::SiteRecord site;
  bool existing = false;
  if (auto sites = store_.ListSites(org_id); sites.ok()) {
    for (auto& s : *sites) {
      if (s.name == site_name) {
        site = s;
        existing = true;
      }
    }
  }
  if (!existing) {
    site.id = NewId("site");
    site.org_id = org_id;
    site.name = site_name;
    site.hostname = site_name + "-" + NewId("h").substr(2, 8) + "." + domain_;
    site.created_at = NowMillis();
  }
  store::SiteReleaseRecord release;
  release.id = NewId("rel");
  release.site_id = site.id;
  release.org_id = org_id;
  release.source_prefix = prefix;
  release.created_at = NowMillis();
  std::vector<std::string> copied;
  auto undo = [&] {
    for (const auto& b : copied) objects_.RemoveBlob(b);
  };
  for (const auto& o : files) {
    auto blob = objects_.CopyBlob(o.blob);
    if (!blob.ok()) {
      if (blob.status().code() == Code::kNotFound) continue;  // deleted meanwhile
      undo();
      return blob.status();
    }
    copied.push_back(*blob);
    release.files[o.key.substr(prefix.size())] = {*blob, o.size, o.content_type, o.sha256};
  }
  site.release_id = release.id;
  store::SitePublishLimits limits;
  limits.max_releases = kMaxSiteReleases;
  limits.max_sites = kMaxSitesPerOrg;
  auto quota = objects_.QuotaForStored(org_id);
  if (!quota.ok()) {
    undo();
    return quota.status();
  }
  limits.quota_bytes = *quota;
  // The pruned releases' blobs are freed once their rows are gone for good (the transaction,
  // or the key's around it, committed); a crash between leaves them unreferenced, and
  // ObjectStore::Init removes them.
  std::vector<std::string> pruned;
  auto publish = [&]() -> Result<std::string> {
    ASSIGN_OR_RETURN(pruned, store_.PublishSite(site, release, limits));
    return site.id;
  };
  if (!claim) {
    if (auto made = publish(); !made.ok()) {
      undo();
      return made.status();
    }
    for (const auto& b : pruned) objects_.RemoveBlob(b);
    return View(site, &release);
  }
  auto made = store_.CreateOnce(*claim, publish);
  // A concurrent publish with the key won (replayed): its release is the one kept.
  if (!made.ok() || made->replayed) undo();
  if (!made.ok()) return made.status();
  if (made->replayed) return Published(org_id, made->object_id);
  for (const auto& b : pruned) objects_.RemoveBlob(b);
  return View(site, &release);
}

Result<Site> SiteService::Published(const std::string& org_id, const std::string& site_id) {
  auto site = Get(org_id, site_id);
  if (!site.ok() && site.status().code() == Code::kNotFound)
    return store::IdempotentObjectGone("site " + site_id);
  return site;
}

Result<Page<Site>> SiteService::List(const std::string& org_id, const PageRequest& page) {
  ASSIGN_OR_RETURN(auto sites, store_.ListSites(org_id));
  ASSIGN_OR_RETURN(
      Page<store::SiteRecord> records,
      PageNewestFirst(std::move(sites), page, [](const store::SiteRecord& s) { return s.seq; }));
  Page<Site> out;
  for (const auto& s : records.items) {
    auto rel = store_.GetSiteRelease(s.release_id);
    out.items.push_back(View(s, rel.ok() ? &*rel : nullptr));
  }
  out.next_cursor = records.next_cursor;
  return out;
}

Result<Site> SiteService::Get(const std::string& org_id, const std::string& id) {
  ASSIGN_OR_RETURN(auto s, store_.GetSite(org_id, id));
  auto rel = store_.GetSiteRelease(s.release_id);
  return View(s, rel.ok() ? &*rel : nullptr);
}

Status SiteService::Delete(const std::string& org_id, const std::string& id) {
  ASSIGN_OR_RETURN(auto s, store_.GetSite(org_id, id));
  ASSIGN_OR_RETURN(auto blobs, store_.DeleteSite(org_id, s.id));
  for (const auto& b : blobs) objects_.RemoveBlob(b);
  return Status::Ok();
}

bool SiteService::IsSiteHost(const std::string& host) {
  return store_.FindSiteByHostname(host).ok();
}

Result<SiteFile> SiteService::Serve(const std::string& host, const std::string& path) {
  ASSIGN_OR_RETURN(auto site, store_.FindSiteByHostname(host));
  ASSIGN_OR_RETURN(auto release, store_.GetSiteRelease(site.release_id));
  std::string p = path;
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  if (p.empty() || p.back() == '/') p += "index.html";
  auto it = release.files.find(p);
  if (it == release.files.end()) {
    // A directory path without its slash.
    it = release.files.find(p + "/index.html");
    if (it == release.files.end()) return NotFound("no file " + path + " on this site");
  }
  SiteFile f;
  f.org_id = site.org_id;
  f.content_type = it->second.content_type;
  f.size = it->second.size;
  ASSIGN_OR_RETURN(f.reader, objects_.OpenBlob(it->second.blob));
  return f;
}

}  // namespace adapt::storage

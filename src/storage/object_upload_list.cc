// ObjectStore::ListUploads: an organization's unfinished multipart uploads, found through the
// ledger (never by scanning <root>/uploads, where every organization's uploads lie), read from
// their meta.json, and paged in S3's order.
#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "base/ids.h"
#include "os/files.h"
#include "storage/object_key.h"
#include "storage/object_store.h"

namespace adapt::storage {
namespace {

// Whether `marker` is one of the common prefixes this listing rolls keys up into, as a
// page's NextKeyMarker is: every key under it was listed with it already.
bool IsCommonPrefix(const std::string& marker, const UploadListQuery& q) {
  const std::string& d = q.delimiter;
  if (d.empty() || marker.size() < q.prefix.size() + d.size() ||
      marker.compare(0, q.prefix.size(), q.prefix) != 0)
    return false;
  return marker.find(d, q.prefix.size()) == marker.size() - d.size();
}

bool AfterMarkers(const UnfinishedUpload& u, const UploadListQuery& q, bool marker_is_prefix) {
  if (q.key_marker.empty()) return true;
  if (marker_is_prefix && u.key.compare(0, q.key_marker.size(), q.key_marker) == 0) return false;
  if (u.key != q.key_marker) return u.key > q.key_marker;
  return !q.upload_id_marker.empty() && u.upload_id > q.upload_id_marker;
}

// The upload's key and start from its meta.json when it is `org_id`'s; nullopt when it is
// gone (completed, aborted or expired since the ledger was read) or not the organization's.
std::optional<UnfinishedUpload> ReadUpload(const std::string& dir, const std::string& id,
                                           const std::string& org_id) {
  auto text = os::ReadFile(dir + "/meta.json");
  if (!text.ok()) return std::nullopt;
  auto meta = nlohmann::json::parse(*text, nullptr, false);
  if (!meta.is_object()) return std::nullopt;
  auto org = meta.find("org");
  auto key = meta.find("key");
  if (org == meta.end() || !org->is_string() || *org != org_id || key == meta.end() ||
      !key->is_string())
    return std::nullopt;
  UnfinishedUpload u;
  u.upload_id = id;
  u.key = key->get<std::string>();
  // An upload begun before meta.json recorded its start gets one at the next expiry sweep.
  auto created = meta.find("created");
  if (created != meta.end() && created->is_number_integer()) u.created_at = created->get<int64_t>();
  return u;
}

// One entry of a listing: an upload, or a common prefix (no upload id) its key rolls up into.
struct ListedEntry {
  std::string name;       // the upload's key, or the common prefix
  std::string upload_id;  // "" for a common prefix
  int64_t created_at = 0;
  bool operator<(const ListedEntry& o) const {
    return name != o.name ? name < o.name : upload_id < o.upload_id;
  }
};

}  // namespace

Result<UploadListing> ObjectStore::ListUploads(const std::string& org_id,
                                               const UploadListQuery& q) {
  RETURN_IF_ERROR(ValidateObjectPrefix(q.prefix));
  if (q.delimiter.size() > 16)
    return InvalidArgument("delimiter", "delimiter is longer than 16 bytes");
  const size_t max = std::clamp<size_t>(q.max, 1, kMaxListLimit);
  const bool marker_is_prefix = IsCommonPrefix(q.key_marker, q);
  // Only the first max + 1 entries in S3's order are kept (the one past the page says it is
  // truncated), so memory stays bounded however many uploads the organization has. A common
  // prefix sorts where its first key does: a key outside it is before every key in it
  // exactly when it is before the prefix itself.
  std::set<ListedEntry> best;
  for (const auto& id : ledger_.UploadsOf(org_id)) {
    if (!IsValidId(id, "upl")) continue;
    auto u = ReadUpload(root_ + "/uploads/" + id, id, org_id);
    if (!u || u->key.compare(0, q.prefix.size(), q.prefix) != 0) continue;
    if (!AfterMarkers(*u, q, marker_is_prefix)) continue;
    ListedEntry e;
    if (!q.delimiter.empty()) {
      size_t at = u->key.find(q.delimiter, q.prefix.size());
      if (at != std::string::npos) e.name = u->key.substr(0, at + q.delimiter.size());
    }
    if (e.name.empty()) {
      e.name = u->key;
      e.upload_id = u->upload_id;
      e.created_at = u->created_at;
    }
    if (best.size() > max && !(e < *best.rbegin())) continue;
    best.insert(std::move(e));
    if (best.size() > max + 1) best.erase(std::prev(best.end()));
  }
  UploadListing out;
  out.truncated = best.size() > max;
  size_t entries = 0;
  for (const auto& e : best) {
    if (entries++ == max) break;
    out.next_key_marker = e.name;
    out.next_upload_id_marker = e.upload_id;
    if (e.upload_id.empty())
      out.common_prefixes.push_back(e.name);
    else
      out.uploads.push_back({e.name, e.upload_id, e.created_at});
  }
  if (!out.truncated) {
    out.next_key_marker.clear();
    out.next_upload_id_marker.clear();
  }
  return out;
}

}  // namespace adapt::storage

// The organization's objects and signed links (ObjectService): validation in the core's
// terms, then storage::ObjectStore and storage::StorageTokens.
#include "core/object_service.h"

#include "base/text.h"
#include "base/time.h"
#include "storage/object_key.h"

namespace adapt::core {

ObjectService::ObjectService(store::SandboxStore& sandbox_records, store::NetworkStore& networks,
                             storage::ObjectStore& objects, storage::StorageTokens& tokens,
                             FileService& files, SandboxService& sandboxes)
    : sandbox_records_(sandbox_records),
      networks_(networks),
      objects_(objects),
      tokens_(tokens),
      files_(files),
      sandboxes_(sandboxes) {}

Result<ObjectPage> ObjectService::List(const Principal& who, const ListObjects& request) {
  RETURN_IF_ERROR(CheckPageLimit(request.page.limit));
  ASSIGN_OR_RETURN(std::string after, ParseKeyListCursor(request.page.cursor));
  ASSIGN_OR_RETURN(storage::ObjectListing listing,
                   objects_.List(who.org_id, request.prefix, request.delimiter, after,
                                 static_cast<size_t>(request.page.limit)));
  ObjectPage page;
  page.items = std::move(listing.objects);
  page.common_prefixes = std::move(listing.common_prefixes);
  if (listing.truncated) page.next_cursor = KeyListCursor(listing.next_after);
  return page;
}

Result<ObjectUsage> ObjectService::Usage(const Principal& who) {
  ASSIGN_OR_RETURN(uint64_t used, objects_.UsedBytes(who.org_id));
  return ObjectUsage{used, objects_.QuotaOf(who.org_id)};
}

Result<store::ObjectRecord> ObjectService::Head(const Principal& who, const std::string& key) {
  return objects_.Head(who.org_id, key);
}

Result<std::pair<store::ObjectRecord, std::unique_ptr<os::FileReader>>> ObjectService::Open(
    const Principal& who, const std::string& key) {
  return objects_.Open(who.org_id, key);
}

Result<store::ObjectRecord> ObjectService::Put(const Principal& who, const std::string& key,
                                               const std::string& content_type,
                                               const storage::ObjectSource& source) {
  return objects_.Put(who.org_id, key, content_type, source);
}

Status ObjectService::Delete(const Principal& who, const std::string& key) {
  return objects_.Delete(who.org_id, key);
}

Result<ObjectText> ObjectService::ReadText(const Principal& who, const std::string& key,
                                           size_t max_bytes) {
  ASSIGN_OR_RETURN(auto opened, objects_.Open(who.org_id, key));
  auto& [record, reader] = opened;
  if (record.size > max_bytes)
    return Status(Code::kPayloadTooLarge, "object " + key + " is " + std::to_string(record.size) +
                                              " bytes, more than max_bytes " +
                                              std::to_string(max_bytes));
  std::string text(record.size, '\0');
  size_t got = 0;
  while (got < text.size()) {
    long n = reader->Read(text.data() + got, text.size() - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  if (text.find('\0') != std::string::npos || SanitizeUtf8(text) != text)
    return InvalidArgument("key", "object " + key + " is not UTF-8 text");
  return ObjectText{key, std::move(text)};
}

Result<DownloadLink> ObjectService::Link(const Principal& who, const MakeDownloadLink& request) {
  RETURN_IF_ERROR(storage::ValidateObjectKey(request.key));
  if (request.ttl_seconds < 1 || request.ttl_seconds > storage::kMaxUrlTtlSeconds)
    return InvalidArgument("ttl_seconds", "ttl_seconds must be an integer 1.." +
                                              std::to_string(storage::kMaxUrlTtlSeconds));
  ASSIGN_OR_RETURN(store::ObjectRecord record, objects_.Head(who.org_id, request.key));
  const int64_t expires = NowMillis() / 1000 + request.ttl_seconds;
  DownloadLink link;
  link.name = record.key.substr(record.key.rfind('/') + 1);
  link.url = (request.base_url.empty() ? api_base_ : request.base_url) + "/v1/objects/download?" +
             tokens_.SignDownload(who.org_id, record.key, expires);
  link.expires_at_ms = expires * 1000;
  link.object = std::move(record);
  return link;
}

Result<std::pair<store::ObjectRecord, std::unique_ptr<os::FileReader>>> ObjectService::OpenByLink(
    const SignedDownload& link) {
  RETURN_IF_ERROR(tokens_.VerifyDownload(link.org_id, link.key, link.expires_at, link.signature));
  return objects_.Open(link.org_id, link.key);
}

}  // namespace adapt::core

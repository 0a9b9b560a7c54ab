#include "storage/object_key.h"

#include "base/percent.h"
#include "base/text.h"

namespace adapt::storage {
namespace {

// Segments split on '/' (and '\\', which some clients treat as a separator).
Status CheckSegments(std::string_view key, bool allow_trailing_slash, const std::string& field,
                     std::string_view shown) {
  size_t start = 0;
  for (size_t i = 0; i <= key.size(); ++i) {
    if (i < key.size() && key[i] != '/' && key[i] != '\\') continue;
    std::string_view seg = key.substr(start, i - start);
    bool last = i == key.size();
    if (seg.empty() && !(last && allow_trailing_slash && start > 0)) {
      if (!(last && key.empty()))
        return InvalidArgument(field, field + " " + std::string(shown) +
                                          " has an empty path segment (leading or double '/')");
    }
    if (seg == "." || seg == "..")
      return InvalidArgument(
          field, field + " " + std::string(shown) + " contains a '.' or '..' path segment");
    start = i + 1;
  }
  return Status::Ok();
}

Status CheckText(std::string_view key, bool allow_trailing_slash, const std::string& field) {
  if (key.size() > kMaxKeyBytes)
    return InvalidArgument(field, field + " is longer than 1024 bytes");
  for (size_t i = 0; i < key.size();) {
    size_t n = Utf8SequenceLength(key, i);
    if (n == 0) return InvalidArgument(field, field + " is not valid UTF-8");
    unsigned char c = static_cast<unsigned char>(key[i]);
    if (n == 1 && (c < 0x20 || c == 0x7f))
      return InvalidArgument(field, field + " contains a control character");
    if (c == '\\') return InvalidArgument(field, field + " contains a backslash");
    i += n;
  }
  std::string shown = "\"" + std::string(key.substr(0, 64)) + (key.size() > 64 ? "...\"" : "\"");
  RETURN_IF_ERROR(CheckSegments(key, allow_trailing_slash, field, shown));
  // One more round of percent-decoding: what a careless client or proxy would make of the key.
  std::string decoded = PercentDecodeLenient(key, PlusSign::kLiteral);
  if (decoded != key) {
    for (char ch : decoded) {
      if (ch == '\\' || ch == '\0')
        return InvalidArgument(field, field + " " + shown + " contains an encoded separator");
    }
    RETURN_IF_ERROR(CheckSegments(decoded, allow_trailing_slash, field, shown));
  }
  return Status::Ok();
}

}  // namespace

Status ValidateObjectKey(std::string_view key, const std::string& field) {
  if (key.empty()) return InvalidArgument(field, field + " must not be empty");
  if (key.back() == '/') return InvalidArgument(field, field + " must not end with '/'");
  return CheckText(key, false, field);
}

Status ValidateObjectPrefix(std::string_view prefix, const std::string& field) {
  if (prefix.empty()) return Status::Ok();
  return CheckText(prefix, true, field);
}

Status ValidateContentType(std::string_view type) {
  if (type.size() > kMaxContentTypeBytes)
    return InvalidArgument("contentType", "contentType is longer than 255 bytes");
  for (char c : type) {
    if (c < 0x20 || c > 0x7e)
      return InvalidArgument("contentType", "contentType must be printable ASCII");
  }
  return Status::Ok();
}

}  // namespace adapt::storage

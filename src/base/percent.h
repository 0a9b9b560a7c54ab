// Percent-encoding (RFC 3986 section 2.1) for URL paths, query strings and form bodies.
// One codec for every caller; where callers differ (SigV4 keeps '/' in a path, a form turns
// '+' into a space, a key check tolerates broken escapes) the difference is a parameter.
// Plain std, no state: safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace adapt {

// Encodes every byte outside RFC 3986's unreserved set (A-Z a-z 0-9 - _ . ~) as %XX with
// uppercase digits. That is also SigV4's canonical URI encoding (S3 requires exactly this
// set and uppercase) and a safe form value. With `keep_slash`, '/' stays as it is (a path).
std::string PercentEncode(std::string_view bytes, bool keep_slash = false);

// How '+' decodes: itself in a path and in SigV4, a space in a query string or a form body
// (application/x-www-form-urlencoded).
enum class PlusSign { kLiteral, kSpace };

// Decodes %XX (either case); nullopt on a '%' not followed by two hex digits.
std::optional<std::string> PercentDecode(std::string_view text, PlusSign plus);

// Decodes %XX where it is well formed and keeps any other '%' as it is: for text that is
// not rejected for a broken escape (SigV4's canonical query, a form body, a key check).
std::string PercentDecodeLenient(std::string_view text, PlusSign plus);

}  // namespace adapt

// Text helpers for output that reaches JSON: UTF-8 repair and secret redaction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace adapt {

// Length of the valid UTF-8 sequence starting at s[i]; 0 when it is invalid (truncated,
// overlong, a surrogate or past U+10FFFF). Plain std: the static agent compiles it in too.
size_t Utf8SequenceLength(std::string_view s, size_t i);

// True when `s` is valid UTF-8 (no overlongs, no surrogates, nothing truncated).
bool IsValidUtf8(std::string_view s);

// Returns `bytes` as valid UTF-8: NUL bytes and invalid sequences become U+FFFD.
std::string SanitizeUtf8(std::string_view bytes);

// Whether `s` holds a C0 control character (NUL, newline, escape, ...) or DEL: what a name
// shown in lists, logs and terminals must not.
bool HasControlCharacter(std::string_view s);

// Replaces every occurrence of each non-empty value in `secrets` with "[REDACTED]".
// Longer values are replaced first, so a value containing another is hidden whole.
std::string Redact(std::string text, std::vector<std::string> secrets);

}  // namespace adapt

// Text helpers for output that reaches JSON: UTF-8 checks and repair (secret values:
// base/redaction.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace adapt {

// Length of the valid UTF-8 sequence starting at s[i]; 0 when it is invalid (truncated,
// overlong, a surrogate or past U+10FFFF). Plain std: the static agent compiles it in too.
size_t Utf8SequenceLength(std::string_view s, size_t i);

// True when `s` is valid UTF-8 (no overlongs, no surrogates, nothing truncated).
bool IsValidUtf8(std::string_view s);

// The length of an unfinished UTF-8 sequence at the end of `text` (0 when there is none):
// output still being written holds it back, so that a chunk boundary never splits a character.
size_t PartialUtf8AtEnd(std::string_view text);

// Returns `bytes` as valid UTF-8: NUL bytes and invalid sequences become U+FFFD.
std::string SanitizeUtf8(std::string_view bytes);

// Whether `s` holds a C0 control character (NUL, newline, escape, ...) or DEL: what a name
// shown in lists, logs and terminals must not.
bool HasControlCharacter(std::string_view s);

// `s` fit to quote in an error or a log line when someone else chose it (an archive entry's
// name): every byte outside printable ASCII (controls, escapes, DEL, any non-ASCII byte, which
// could be a bidirectional override) becomes '?', and past `max_bytes` it is cut and ends in
// "...". Lossy on purpose: it names a thing for a reader, never to be parsed back.
std::string PrintableAscii(std::string_view s, size_t max_bytes = 120);

// Whether `s` holds a NUL byte (which no C string, path or argv element can carry).
inline bool HasNul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

// `s` as a decimal integer: an optional '-' and digits only, nothing before or after (no
// space, no '+', no "12abc", which std::stoi takes as 12), within int64_t; nullopt otherwise.
std::optional<int64_t> ParseDecimal(std::string_view s);

}  // namespace adapt

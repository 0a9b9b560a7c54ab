// Hiding secret values (a sandbox's environment, a password) in text that leaves adaptd: a
// whole text, or a window of output that is still being written or whose oldest bytes were
// dropped, where a value may straddle either edge.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace adapt {

inline constexpr std::string_view kRedactionMask = "[REDACTED]";

// Replaces every occurrence of each non-empty value in `secrets` with "[REDACTED]": every byte
// that is part of some occurrence is hidden, and occurrences that overlap (a value inside
// another, two values sharing bytes) become one mask. Linear in the text and the values.
std::string Redact(std::string_view text, const std::vector<std::string>& secrets);

// The window text[from..] of longer output, as valid UTF-8 (SanitizeUtf8) with the values
// hidden. text[0..from) are the bytes just before the window, passed so that a value that
// began there is hidden whole (LongestSecret() - 1 of them are enough). `cut_before`: bytes
// before text[0] are gone, so a start of `text` that could be the end of a value is hidden too.
std::string RedactWindow(std::string_view text, size_t from,
                         const std::vector<std::string>& secrets, bool cut_before);

// How many bytes at the end of `text` could be the start of one of the values: output still
// being written holds them back until it shows whether the value follows.
size_t SecretStartAtEnd(std::string_view text, const std::vector<std::string>& secrets);

size_t LongestSecret(const std::vector<std::string>& secrets);

}  // namespace adapt

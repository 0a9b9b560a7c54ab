// Hex encoding of bytes: digests, keys, cursors and tokens that must travel as text.
// Plain std, no state: safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace adapt {

// Two lowercase digits per byte.
std::string HexEncode(std::string_view bytes);
// The same for a digest buffer (OpenSSL hands out unsigned char).
std::string HexEncode(const unsigned char* bytes, size_t n);

// The bytes of `hex` (digits in either case); nullopt unless it is an even number of hex
// digits.
std::optional<std::string> HexDecode(std::string_view hex);

}  // namespace adapt

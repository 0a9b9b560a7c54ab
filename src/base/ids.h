// Identifiers: random, prefixed by kind ("sbx_", "org_", "key_"), and
// validated before they are used as paths, cgroup names or runsc ids.
#pragma once

#include <string>
#include <string_view>

namespace adapt {

// Returns `prefix` + "_" + 20 random lower-case base32 characters. Thread-safe.
std::string NewId(std::string_view prefix);

// Returns `n` random bytes rendered as URL-safe base64 without padding. Thread-safe.
std::string RandomToken(size_t n);

// True when `id` is prefix_ followed by 1..64 of [a-z0-9]: safe as a file name.
bool IsValidId(std::string_view id, std::string_view prefix);

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

}  // namespace adapt

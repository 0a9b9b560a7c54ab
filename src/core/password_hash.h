// Passwords of users (core/users.h), stored only as scrypt hashes: memory-hard (32 MiB and
// tens of milliseconds per guess at the default cost), salted per password, in a
// self-describing text "scrypt$<log2 N>$<r>$<p>$<salt hex>$<hash hex>" so the cost can rise
// later without invalidating stored hashes. Thread-safe; each call allocates the KDF's memory.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::core {

struct ScryptCost {
  int log2_n = 15;  // N = 32768: 128 * r * N = 32 MiB of memory per hash
  int r = 8;
  int p = 1;
};

// Internal only when OpenSSL cannot compute it (out of memory).
Result<std::string> HashPassword(const std::string& password, ScryptCost cost = {});

// True when `password` hashes to `encoded`. The comparison takes the same time wherever the
// hashes differ; a malformed `encoded` (or a cost outside sane bounds) is false.
bool VerifyPassword(const std::string& password, const std::string& encoded);

}  // namespace adapt::core

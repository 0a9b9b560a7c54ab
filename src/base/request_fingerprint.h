// What a request sent with an Idempotency-Key is remembered by (store::IdempotencyKey's
// body_hash, a job's fingerprint): an HMAC-SHA256 under a key of adaptd's own, not a bare
// SHA-256. The text hashed is what the request carried, a secret's value or a sandbox's
// environment among it, and a bare hash of a short value is guessed offline by anyone holding
// a copy of adapt.db; the key is derived from the master key, which the database does not hold.
#pragma once

#include <string>
#include <string_view>

namespace adapt {

// Sets the key, once at start-up before any request is served.
void SetRequestFingerprintKey(std::string key);

// The fingerprint of `text`, 64 hex digits: HMAC-SHA256 under the key set, or SHA-256 of the
// text when none was set (unit tests, tools that hold no master key).
std::string RequestFingerprint(std::string_view text);

}  // namespace adapt

#include "base/ids.h"

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "base/hex.h"

namespace adapt {
namespace {

// From the kernel (getrandom), not OpenSSL's RAND_bytes: RAND_bytes keeps a generator per
// thread that calls it, which a detached thread still running at exit (an agent session's)
// leaves behind (LeakSanitizer, runtime_test); the kernel's keeps nothing of ours.
std::vector<unsigned char> RandomBytes(size_t n) {
  std::vector<unsigned char> buf(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(buf.data() + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    // Fails only when the kernel has no entropy source at all: nothing sane to do then.
    if (r <= 0) std::abort();
    got += static_cast<size_t>(r);
  }
  return buf;
}

}  // namespace

std::string NewId(std::string_view prefix) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  auto bytes = RandomBytes(20);
  std::string id(prefix);
  id += '_';
  for (unsigned char b : bytes) id += kAlphabet[b % 32];
  return id;
}

std::string RandomToken(size_t n) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  auto bytes = RandomBytes(n);
  std::string out;
  // base64url without padding: 3 bytes become 4 characters, a last 1 or 2 bytes 2 or 3.
  for (size_t i = 0; i < n; i += 3) {
    size_t take = std::min<size_t>(3, n - i);
    uint32_t chunk = 0;
    for (size_t k = 0; k < 3; ++k) chunk = (chunk << 8) | (k < take ? bytes[i + k] : 0);
    for (size_t k = 0; k < take + 1; ++k) out += kAlphabet[(chunk >> (18 - 6 * k)) & 63];
  }
  return out;
}

bool IsValidId(std::string_view id, std::string_view prefix) {
  if (id.size() <= prefix.size() + 1 || id.size() > prefix.size() + 1 + 64) return false;
  if (id.substr(0, prefix.size()) != prefix || id[prefix.size()] != '_') return false;
  for (char c : id.substr(prefix.size() + 1)) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// Every API request hashes its key. OpenSSL 3's one-shot SHA256() looks the digest up again
// (under a lock) at each call; fetched once here, the same digest (bench/README.md, "api").
std::string Sha256Hex(std::string_view data) {
  static EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  unsigned int length = 0;
  if (!fetched || EVP_Digest(data.data(), data.size(), digest, &length, fetched, nullptr) != 1 ||
      length != sizeof digest)
    SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return HexEncode(digest, sizeof digest);
}

}  // namespace adapt

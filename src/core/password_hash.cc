#include "core/password_hash.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>
#include <vector>

#include "base/hex.h"

namespace adapt::core {
namespace {

constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;

std::vector<std::string> SplitDollar(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t at = s.find('$'); at != std::string::npos; at = s.find('$', start)) {
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

bool ParseInt(const std::string& s, int lo, int hi, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out >= lo && out <= hi;
}

bool Scrypt(const std::string& password, const std::string& salt, ScryptCost cost,
            unsigned char* out, size_t out_len) {
  uint64_t n = uint64_t{1} << cost.log2_n;
  // OpenSSL refuses a cost whose memory (128 * r * (N + p + 2) bytes) passes maxmem.
  uint64_t maxmem =
      128ULL * static_cast<uint64_t>(cost.r) * (n + static_cast<uint64_t>(cost.p) + 2) +
      (1ULL << 20);
  return EVP_PBE_scrypt(password.data(), password.size(),
                        reinterpret_cast<const unsigned char*>(salt.data()), salt.size(), n,
                        static_cast<uint64_t>(cost.r), static_cast<uint64_t>(cost.p), maxmem, out,
                        out_len) == 1;
}

}  // namespace

Result<std::string> HashPassword(const std::string& password, ScryptCost cost) {
  unsigned char salt[kSaltBytes];
  if (RAND_bytes(salt, sizeof salt) != 1) return Internal("hashing a password: no random bytes");
  std::string salt_text(reinterpret_cast<const char*>(salt), sizeof salt);
  unsigned char hash[kHashBytes];
  if (!Scrypt(password, salt_text, cost, hash, sizeof hash))
    return Internal("hashing a password: scrypt failed");
  return "scrypt$" + std::to_string(cost.log2_n) + "$" + std::to_string(cost.r) + "$" +
         std::to_string(cost.p) + "$" + HexEncode(salt, sizeof salt) + "$" +
         HexEncode(hash, sizeof hash);
}

bool VerifyPassword(const std::string& password, const std::string& encoded) {
  auto parts = SplitDollar(encoded);
  if (parts.size() != 6 || parts[0] != "scrypt") return false;
  ScryptCost cost;
  // Bounds keep a corrupt row from asking for gigabytes.
  if (!ParseInt(parts[1], 10, 20, cost.log2_n) || !ParseInt(parts[2], 1, 32, cost.r) ||
      !ParseInt(parts[3], 1, 16, cost.p))
    return false;
  auto salt = HexDecode(parts[4]);
  auto expected = HexDecode(parts[5]);
  if (!salt || !expected || salt->empty() || expected->size() != kHashBytes) return false;
  unsigned char hash[kHashBytes];
  if (!Scrypt(password, *salt, cost, hash, sizeof hash)) return false;
  return CRYPTO_memcmp(hash, expected->data(), kHashBytes) == 0;
}

}  // namespace adapt::core

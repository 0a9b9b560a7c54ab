#include "mcp/oauth_text.h"

#include <cstdint>

#include "base/hex.h"
#include "base/ids.h"
#include "base/percent.h"

namespace adapt::mcp {

std::map<std::string, std::string> DecodeForm(const std::string& body) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find('&', start);
    if (end == std::string::npos) end = body.size();
    std::string pair = body.substr(start, end - start);
    if (!pair.empty()) {
      size_t eq = pair.find('=');
      std::string k = PercentDecodeLenient(pair.substr(0, eq), PlusSign::kSpace);
      std::string v = eq == std::string::npos
                          ? ""
                          : PercentDecodeLenient(pair.substr(eq + 1), PlusSign::kSpace);
      out.emplace(k, v);
    }
    start = end + 1;
  }
  return out;
}

std::string S256Challenge(const std::string& verifier) {
  // Sha256Hex's digits always decode.
  std::string bytes = HexDecode(Sha256Hex(verifier)).value_or("");
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(n >> s) & 63];
  }
  size_t rest = bytes.size() - i;  // 32 bytes: 2 left
  if (rest) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (rest == 2) n |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    if (rest == 2) out += kAlphabet[(n >> 6) & 63];
  }
  return out;
}

std::string WithQuery(const std::string& uri, const std::map<std::string, std::string>& params) {
  std::string out = uri;
  char sep = uri.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : params) {
    out += sep + PercentEncode(k) + "=" + PercentEncode(v);
    sep = '&';
  }
  return out;
}

}  // namespace adapt::mcp

#include "net/client_hello.h"

#include <vector>

namespace adapt::net {
namespace {

constexpr uint8_t kHandshakeRecord = 22;
constexpr uint8_t kClientHelloType = 1;
constexpr uint16_t kServerNameExtension = 0;
constexpr uint16_t kEncryptedClientHelloExtension = 0xfe0d;

HelloStatus Invalid(ClientHello* out, const std::string& why) {
  out->error = why;
  return HelloStatus::kInvalid;
}

// A bounds-checked reader over one message.
struct Reader {
  std::span<const uint8_t> b;
  size_t at = 0;
  bool ok = true;
  size_t left() const { return b.size() - at; }
  uint32_t Take(size_t n) {  // big-endian integer of n bytes
    if (!ok || left() < n) {
      ok = false;
      return 0;
    }
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v = v << 8 | b[at++];
    return v;
  }
  std::span<const uint8_t> Bytes(size_t n) {
    if (!ok || left() < n) {
      ok = false;
      return {};
    }
    auto s = b.subspan(at, n);
    at += n;
    return s;
  }
};

bool ValidHostname(const std::string& h) {
  if (h.empty() || h.size() > 253) return false;
  for (char c : h)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return true;
}

HelloStatus ParseServerName(std::span<const uint8_t> ext, ClientHello* out) {
  Reader r{ext};
  size_t list = r.Take(2);
  if (!r.ok || list != r.left()) return Invalid(out, "a malformed server_name extension");
  while (r.left() > 0) {
    uint8_t type = static_cast<uint8_t>(r.Take(1));
    auto name = r.Bytes(r.Take(2));
    if (!r.ok) return Invalid(out, "a malformed server_name extension");
    if (type != 0) continue;
    if (!out->server_name.empty()) return Invalid(out, "two host names in server_name");
    for (uint8_t c : name)
      out->server_name += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    if (!ValidHostname(out->server_name)) return Invalid(out, "a server name that is no host name");
  }
  return HelloStatus::kOk;
}

HelloStatus ParseHello(std::span<const uint8_t> body, ClientHello* out) {
  Reader r{body};
  r.Take(2);    // legacy_version
  r.Bytes(32);  // random
  size_t sid = r.Take(1);
  if (sid > 32) return Invalid(out, "a malformed ClientHello (session id)");
  r.Bytes(sid);
  size_t suites = r.Take(2);
  if (suites < 2 || suites % 2) return Invalid(out, "a malformed ClientHello (cipher suites)");
  r.Bytes(suites);
  size_t comp = r.Take(1);
  if (comp < 1) return Invalid(out, "a malformed ClientHello (compression)");
  r.Bytes(comp);
  if (!r.ok) return Invalid(out, "a truncated ClientHello");
  if (r.left() == 0) return HelloStatus::kOk;  // no extensions, so no server name
  size_t ext_len = r.Take(2);
  if (!r.ok || ext_len != r.left()) return Invalid(out, "a malformed ClientHello (extensions)");
  bool seen_sni = false;
  while (r.left() > 0) {
    uint16_t type = static_cast<uint16_t>(r.Take(2));
    auto ext = r.Bytes(r.Take(2));
    if (!r.ok) return Invalid(out, "a malformed ClientHello extension");
    if (type == kEncryptedClientHelloExtension) out->encrypted = true;
    if (type == kServerNameExtension) {
      if (seen_sni) return Invalid(out, "two server_name extensions");
      seen_sni = true;
      if (ParseServerName(ext, out) != HelloStatus::kOk) return HelloStatus::kInvalid;
    }
  }
  return HelloStatus::kOk;
}

}  // namespace

HelloStatus ParseClientHello(std::span<const uint8_t> data, ClientHello* out) {
  ClientHelloReader reader;
  return reader.Parse(data, out);
}

HelloStatus ClientHelloReader::Parse(std::span<const uint8_t> data, ClientHello* out) {
  *out = ClientHello{};
  while (true) {
    if (handshake_.size() >= 4) {
      if (handshake_[0] != kClientHelloType)
        return Invalid(out, "the first handshake message is not a ClientHello");
      size_t len = size_t{handshake_[1]} << 16 | size_t{handshake_[2]} << 8 | handshake_[3];
      if (len + 4 > kMaxClientHelloBytes) return Invalid(out, "a ClientHello larger than 32 KiB");
      if (handshake_.size() >= len + 4)
        return ParseHello(std::span<const uint8_t>(handshake_).subspan(4, len), out);
    }
    if (data.size() < at_ || data.size() - at_ < 5) {
      if (at_ < data.size() && data[at_] != kHandshakeRecord)
        return Invalid(out, "not TLS (the first record is no handshake)");
      return HelloStatus::kNeedMore;
    }
    if (data[at_] != kHandshakeRecord)
      return Invalid(out, "not TLS (the first record is no handshake)");
    if (data[at_ + 1] != 3) return Invalid(out, "not TLS (record version)");
    size_t len = size_t{data[at_ + 3]} << 8 | data[at_ + 4];
    if (len == 0 || len > 16384 + 256) return Invalid(out, "not TLS (record length)");
    if (data.size() - at_ - 5 < len) return HelloStatus::kNeedMore;
    handshake_.insert(handshake_.end(), data.begin() + static_cast<std::ptrdiff_t>(at_ + 5),
                      data.begin() + static_cast<std::ptrdiff_t>(at_ + 5 + len));
    at_ += 5 + len;
  }
}

}  // namespace adapt::net

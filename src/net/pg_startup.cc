#include "net/pg_startup.h"

namespace adapt::net {
namespace {

uint32_t ReadU32(std::string_view d, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(d[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(d[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(d[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(d[at + 3]));
}

void AppendU32(std::string& out, uint32_t v) {
  out += static_cast<char>(v >> 24);
  out += static_cast<char>(v >> 16);
  out += static_cast<char>(v >> 8);
  out += static_cast<char>(v);
}

constexpr uint32_t kProtocol3 = 196608;
constexpr uint32_t kCancelCode = 80877102;
constexpr uint32_t kSslCode = 80877103;
constexpr uint32_t kGssEncCode = 80877104;

StartupMessage Invalid(std::string why) {
  StartupMessage m;
  m.kind = StartupKind::kInvalid;
  m.error = std::move(why);
  return m;
}

}  // namespace

StartupMessage ParseStartup(std::string_view data) {
  StartupMessage m;
  if (data.size() < 8) return m;
  uint32_t length = ReadU32(data, 0);
  uint32_t code = ReadU32(data, 4);
  if (length < 8 || length > kMaxStartupBytes) return Invalid("a malformed startup message");
  // The first 8 bytes tell the kind: a length its kind cannot have is refused now, not after
  // waiting (until the proxy's deadline) for bytes that a broken client never sends.
  const bool encryption = code == kSslCode || code == kGssEncCode;
  if (encryption && length != 8) return Invalid("a malformed encryption request");
  if (code == kCancelCode && length != 16) return Invalid("a malformed cancel request");
  if (!encryption && code != kCancelCode && code != kProtocol3)
    return Invalid("an unsupported protocol version");
  if (code == kProtocol3 && length < 10) return Invalid("a malformed startup message");
  m.length = length;
  if (data.size() < length) return m;
  if (encryption) {
    m.kind = code == kSslCode ? StartupKind::kSslRequest : StartupKind::kGssEncRequest;
    return m;
  }
  if (code == kCancelCode) {
    m.kind = StartupKind::kCancel;
    m.cancel = BackendKey{ReadU32(data, 8), ReadU32(data, 12)};
    return m;
  }
  // key\0value\0 ... \0
  std::string_view body = data.substr(8, length - 8);
  if (body.empty() || body.back() != '\0') return Invalid("a malformed startup message");
  size_t at = 0;
  bool has_database = false;
  while (at < body.size() && body[at] != '\0') {
    size_t key_end = body.find('\0', at);
    if (key_end == std::string_view::npos || key_end + 1 >= body.size())
      return Invalid("a malformed startup message");
    size_t value_end = body.find('\0', key_end + 1);
    if (value_end == std::string_view::npos) return Invalid("a malformed startup message");
    std::string_view key = body.substr(at, key_end - at);
    std::string_view value = body.substr(key_end + 1, value_end - key_end - 1);
    if (key == "user") m.user = value;
    if (key == "database") {
      m.database = value;
      has_database = true;
    }
    // Replication connections are not for tenants.
    if (key == "replication" && value != "false" && value != "0" && value != "off" && value != "no")
      return Invalid("replication connections are not allowed");
    at = value_end + 1;
  }
  if (at + 1 != body.size()) return Invalid("a malformed startup message");
  if (m.user.empty()) return Invalid("the startup message names no user");
  if (!has_database || m.database.empty()) m.database = m.user;
  m.kind = StartupKind::kStartup;
  return m;
}

std::string PgErrorResponse(const std::string& code, const std::string& message) {
  std::string fields;
  fields += 'S';
  fields += "FATAL";
  fields += '\0';
  fields += 'V';
  fields += "FATAL";
  fields += '\0';
  fields += 'C';
  fields += code;
  fields += '\0';
  fields += 'M';
  fields += message;
  fields += '\0';
  fields += '\0';
  std::string out = "E";
  AppendU32(out, static_cast<uint32_t>(fields.size() + 4));
  return out + fields;
}

}  // namespace adapt::net

// The first message of a PostgreSQL client (protocol 3.0), as the database proxy reads it:
// SSLRequest and GSSENCRequest (answered "N": the proxy speaks plaintext inside the host),
// CancelRequest with the key it quotes, or the StartupMessage with its user and database. Only
// the framing is parsed; the proxy then forwards the message unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace adapt::net {

inline constexpr size_t kMaxStartupBytes = 10000;

// What a CancelRequest quotes and BackendKeyData hands out: a session's backend process id and
// its random secret.
struct BackendKey {
  uint32_t pid = 0;
  uint32_t secret = 0;
  bool operator==(const BackendKey&) const = default;
};

enum class StartupKind { kNeedMore, kInvalid, kSslRequest, kGssEncRequest, kCancel, kStartup };

struct StartupMessage {
  StartupKind kind = StartupKind::kNeedMore;
  size_t length = 0;     // bytes of the whole message, once known
  std::string user;      // kStartup
  std::string database;  // kStartup: the user when the client named none
  std::string error;     // kInvalid
  BackendKey cancel;     // kCancel
};

// Parses the message at the start of `data` (more bytes may follow).
StartupMessage ParseStartup(std::string_view data);

// A FATAL ErrorResponse with SQLSTATE `code` and `message`, which clients print.
std::string PgErrorResponse(const std::string& code, const std::string& message);

}  // namespace adapt::net

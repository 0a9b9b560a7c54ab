// Reads the server name (SNI) out of the first bytes a TLS client sends, without decrypting
// anything: the TLS records (RFC 8446 5.1) carrying the ClientHello handshake message
// (4.1.2), possibly split over several records, and its server_name extension (RFC 6066 3).
// The bytes come from a sandbox: every length is checked against what is there.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace adapt::net {

// The most a ClientHello may take, records included; longer is refused.
inline constexpr size_t kMaxClientHelloBytes = 32 * 1024;

enum class HelloStatus { kNeedMore, kInvalid, kOk };

struct ClientHello {
  std::string server_name;  // lower case; empty when the client sent none
  bool encrypted = false;   // an encrypted_client_hello extension is present
  std::string error;        // why it is kInvalid
};

// Parses the start of a connection. kNeedMore: a prefix of a plausible ClientHello.
HelloStatus ParseClientHello(std::span<const uint8_t> data, ClientHello* out);

}  // namespace adapt::net

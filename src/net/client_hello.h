// Reads the server name (SNI) out of the first bytes a TLS client sends, without decrypting
// anything: the TLS records (RFC 8446 5.1) carrying the ClientHello handshake message
// (4.1.2), possibly split over several records, and its server_name extension (RFC 6066 3).
// The bytes come from a sandbox: every length is checked against what is there.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

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

// The same parse over a connection's bytes as they arrive: each call is given everything read
// so far (a prefix of the next call's bytes) and reads only the records completed since the
// last, so a ClientHello sent a byte at a time costs its length, not its length squared.
class ClientHelloReader {
 public:
  HelloStatus Parse(std::span<const uint8_t> data, ClientHello* out);

 private:
  std::vector<uint8_t> handshake_;  // the handshake layer's bytes of the records read
  size_t at_ = 0;                   // where the first record not yet read begins
};

}  // namespace adapt::net

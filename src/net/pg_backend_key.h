// What the database proxy reads of a session's server-to-client bytes (PostgreSQL protocol
// 3.0): the BackendKeyData ('K') that a CancelRequest must quote to cancel this session's
// query, up to the ReadyForQuery ('Z') that ends the start-up. Only the framing is followed
// (type byte, 4-byte length that counts itself); the bytes are forwarded unchanged by the
// proxy whatever this reads. After 'Z', an ErrorResponse, a malformed or oversized message,
// the scanner stops and reads nothing more: a session's query results are never parsed.
// It keeps at most a message header and the first 8 bytes of a body, whatever the lengths.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "net/pg_startup.h"

namespace adapt::net {

// Longer messages than this before ReadyForQuery are not PostgreSQL's start-up: stop.
inline constexpr uint32_t kMaxStartupReplyMessage = 1 << 20;

class BackendKeyScanner {
 public:
  enum class State {
    kScanning,  // the start-up goes on
    kReady,     // ReadyForQuery came; key() is the session's, if the server sent one
    kStopped,   // an error, or bytes that are not a start-up: no key
  };

  // The next bytes the server sent, split anywhere. Ignored once not kScanning.
  void Feed(std::string_view bytes);
  State state() const { return state_; }
  // The BackendKeyData that followed AuthenticationOk; set only in kReady.
  std::optional<BackendKey> key() const { return state_ == State::kReady ? key_ : std::nullopt; }

 private:
  void OnMessageEnd();

  State state_ = State::kScanning;
  std::array<uint8_t, 5> header_{};  // type and length
  size_t header_have_ = 0;
  uint32_t body_left_ = 0;         // bytes of the current body not yet read
  std::array<uint8_t, 8> body_{};  // the first bytes of the current body
  size_t body_have_ = 0;
  uint32_t body_length_ = 0;
  bool authenticated_ = false;
  std::optional<BackendKey> key_;
};

}  // namespace adapt::net

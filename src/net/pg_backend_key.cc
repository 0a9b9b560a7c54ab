#include "net/pg_backend_key.h"

#include <algorithm>

namespace adapt::net {
namespace {

uint32_t ReadBe32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | static_cast<uint32_t>(p[3]);
}

}  // namespace

void BackendKeyScanner::Feed(std::string_view bytes) {
  size_t at = 0;
  while (state_ == State::kScanning && at < bytes.size()) {
    if (header_have_ < header_.size()) {
      header_[header_have_++] = static_cast<uint8_t>(bytes[at++]);
      if (header_have_ < header_.size()) continue;
      uint32_t length = ReadBe32(&header_[1]);
      if (length < 4 || length - 4 > kMaxStartupReplyMessage) {
        state_ = State::kStopped;
        return;
      }
      body_length_ = body_left_ = length - 4;
      body_have_ = 0;
      if (body_left_ == 0) OnMessageEnd();
      continue;
    }
    size_t take = std::min<size_t>(body_left_, bytes.size() - at);
    size_t keep = std::min(take, body_.size() - body_have_);
    std::copy_n(bytes.data() + at, keep, body_.data() + body_have_);
    body_have_ += keep;
    body_left_ -= static_cast<uint32_t>(take);
    at += take;
    if (body_left_ == 0) OnMessageEnd();
  }
}

// The start-up's messages (protocol 3.0, "Start-up" flow): 'R' Authentication*, then after
// AuthenticationOk 'S' ParameterStatus, 'K' BackendKeyData, 'N' notices, and 'Z'; an 'E' ends
// the connection. Other types are skipped by their length.
void BackendKeyScanner::OnMessageEnd() {
  char type = static_cast<char>(header_[0]);
  header_have_ = 0;
  switch (type) {
    case 'R':
      // AuthenticationOk is exactly the code 0; the SASL steps carry more after their code.
      if (body_length_ == 4 && ReadBe32(body_.data()) == 0) authenticated_ = true;
      break;
    case 'K':
      // Only the server's own key, after authentication, and only the first.
      if (authenticated_ && body_length_ == 8 && !key_)
        key_ = BackendKey{ReadBe32(body_.data()), ReadBe32(body_.data() + 4)};
      break;
    case 'Z':
      state_ = authenticated_ ? State::kReady : State::kStopped;
      break;
    case 'E':
      state_ = State::kStopped;
      break;
    default:
      break;
  }
}

}  // namespace adapt::net

#include "runtime/agent_session.h"

#include <thread>
#include <vector>

#include "base/log.h"
#include "os/process.h"
#include "os/unix_socket.h"

namespace adapt::runtime {

using agent::Frame;
using agent::FrameType;

AgentSession::AgentSession(std::string sandbox_id, os::UniqueFd fd)
    : sandbox_id_(std::move(sandbox_id)), fd_(std::move(fd)) {}

AgentSession::~AgentSession() = default;

void AgentSession::Start() {
  std::thread([self = shared_from_this()] { self->ReadLoop(); }).detach();
}

Status AgentSession::Send(FrameType type, uint32_t channel, std::string_view payload) {
  if (closed_) return Status(Code::kUnavailable, "the sandbox agent is disconnected");
  std::lock_guard lock(write_mu_);
  Status st = os::WriteAll(fd_.get(), agent::EncodeFrame(type, channel, payload));
  if (!st.ok()) {
    Close();
    return Status(Code::kUnavailable, "the sandbox agent is disconnected");
  }
  return st;
}

Result<uint32_t> AgentSession::Spawn(const agent::SpawnRequest& request, AgentCallbacks cb) {
  uint32_t channel;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status(Code::kUnavailable, "the sandbox agent is disconnected");
    channel = next_channel_++;
    channels_[channel] = std::move(cb);
  }
  Status st = Send(FrameType::kSpawn, channel, agent::EncodeSpawn(request));
  if (!st.ok()) {
    std::lock_guard lock(mu_);
    // When the reader already ended the channel as lost, it is gone from the map.
    if (channels_.erase(channel) == 0) return channel;
    return st;
  }
  return channel;
}

Status AgentSession::SendStdin(uint32_t channel, std::string_view data) {
  if (data.empty()) return Send(FrameType::kStdin, channel, "");
  constexpr size_t kChunk = 256 * 1024;
  for (size_t i = 0; i < data.size(); i += kChunk)
    RETURN_IF_ERROR(Send(FrameType::kStdin, channel, data.substr(i, kChunk)));
  return Status::Ok();
}

Status AgentSession::Signal(uint32_t channel, int sig) {
  return Send(FrameType::kSignal, channel, agent::EncodeInts({sig}));
}

void AgentSession::Close() {
  if (!closed_.exchange(true)) os::ShutdownSocket(fd_.get());
}

void AgentSession::Deliver(const Frame& f) {
  AgentCallbacks cb;
  {
    std::lock_guard lock(mu_);
    auto it = channels_.find(f.channel);
    if (it == channels_.end()) return;
    if (f.type == FrameType::kExit) {
      cb = std::move(it->second);
      channels_.erase(it);
    } else {
      cb = it->second;  // copies two std::functions: cheap next to a 64 KiB chunk
    }
  }
  if (f.type == FrameType::kStdout || f.type == FrameType::kStderr) {
    if (cb.output) cb.output(f.type == FrameType::kStdout ? 1 : 2, f.payload);
  } else if (f.type == FrameType::kExit) {
    std::vector<int32_t> v;
    AgentExit e;
    if (agent::DecodeInts(f.payload, 2, v)) {
      e.exit_code = v[0];
      e.signal = v[1];
    } else {
      e.lost = true;
    }
    if (cb.exit) cb.exit(e);
  }
}

void AgentSession::ReadLoop() {
  agent::FrameDecoder decoder;
  std::vector<char> buf(256 * 1024);
  bool bad = false;
  while (!bad) {
    auto n = os::ReadSome(fd_.get(), buf.data(), buf.size());
    if (!n.ok() || *n == 0) break;
    decoder.Feed(std::string_view(buf.data(), *n));
    Frame f;
    for (;;) {
      auto next = decoder.Pop(f);
      if (next == agent::FrameDecoder::Next::kNeedMore) break;
      if (next == agent::FrameDecoder::Next::kBad) {
        spdlog::warn("sandbox {}: the agent sent a malformed frame; dropping it", sandbox_id_);
        bad = true;
        break;
      }
      if (f.type == FrameType::kHello) {
        std::vector<int32_t> v;
        if (agent::DecodeInts(f.payload, 1, v) &&
            v[0] == static_cast<int32_t>(agent::kProtocolVersion)) {
          ready_ = true;
        } else {
          spdlog::warn("sandbox {}: the agent speaks another protocol version", sandbox_id_);
          bad = true;
          break;
        }
      } else if (ready_) {
        Deliver(f);
      }
    }
  }
  Close();
  std::map<uint32_t, AgentCallbacks> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(channels_);
  }
  AgentExit lost;
  lost.lost = true;
  for (auto& [_, cb] : pending)
    if (cb.exit) cb.exit(lost);
}

}  // namespace adapt::runtime

#include "runtime/agent_session.h"

#include <algorithm>
#include <memory>
#include <set>
#include <system_error>
#include <thread>
#include <vector>

#include "base/background_work.h"
#include "base/constant_time.h"
#include "base/log.h"
#include "os/process.h"
#include "os/timed_io.h"
#include "os/unix_socket.h"

namespace adapt::runtime {

using agent::Frame;
using agent::FrameType;

AgentSession::AgentSession(std::string sandbox_id, os::UniqueFd fd)
    : sandbox_id_(std::move(sandbox_id)), fd_(std::move(fd)) {}

AgentSession::~AgentSession() = default;

bool AgentSession::Start(Frame hello) {
  try {
    std::thread(Guarded("sandbox " + sandbox_id_ + ": agent session", [self = shared_from_this(),
                                                                       hello = std::move(
                                                                           hello)]() mutable {
      self->ReadLoop(std::move(hello));
    })).detach();
    return true;
  } catch (const std::system_error& e) {
    spdlog::warn("sandbox {}: no thread for the agent's session: {}", sandbox_id_, e.what());
    Close();
    return false;
  }
}

bool AgentSession::OfferData(uint32_t channel, std::string_view token, os::UniqueFd fd) {
  std::lock_guard lock(mu_);
  auto it = data_.find(channel);
  if (it == data_.end() || it->second.ended || static_cast<bool>(it->second.fd) || token.empty() ||
      !ConstantTimeEquals(it->second.token, token))
    return false;
  it->second.fd = std::move(fd);
  data_cv_.notify_all();
  return true;
}

Result<os::UniqueFd> AgentSession::TakeData(uint32_t channel, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto it = data_.find(channel);
    if (it == data_.end())
      return Status(Code::kUnavailable, "no data connection is expected on that channel");
    if (static_cast<bool>(it->second.fd)) {
      os::UniqueFd fd = std::move(it->second.fd);
      data_.erase(it);
      return fd;
    }
    if (it->second.ended || closed_ ||
        data_cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (it = data_.find(channel); it != data_.end() && static_cast<bool>(it->second.fd)) continue;
      data_.erase(channel);
      return Status(Code::kUnavailable, "the sandbox agent opened no data connection");
    }
  }
}

Status AgentSession::Send(FrameType type, uint32_t channel, std::string_view payload) {
  return SendBefore(type, channel, payload, std::chrono::steady_clock::now() + kSendLimit);
}

Status AgentSession::SendBefore(FrameType type, uint32_t channel, std::string_view payload,
                                std::chrono::steady_clock::time_point deadline) {
  if (closed_) return Status(Code::kUnavailable, "the sandbox agent is disconnected");
  // The agent reads its connection all the time (a command's stdin waits in its memory), so
  // one that takes nothing until the deadline is stopped (the sandbox's root can do that, or
  // the sandbox is paused): it is dropped rather than left holding this caller's thread for
  // good. The wait for another sender's frame counts too: behind a stalled frame, each
  // caller would otherwise wait for that one's limit and then its own.
  std::unique_lock lock(write_mu_, std::defer_lock);
  Status st =
      lock.try_lock_until(deadline)
          ? os::WriteAllBefore(fd_.get(), agent::EncodeFrame(type, channel, payload), deadline)
          : Status(Code::kUnavailable, "no turn to write to the agent");
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
    if (!request.data_token.empty()) data_[channel].token = request.data_token;
  }
  Status st = Send(FrameType::kSpawn, channel, agent::EncodeSpawn(request));
  if (!st.ok()) {
    std::lock_guard lock(mu_);
    // When the reader already ended the channel as lost, it is gone from the map.
    if (channels_.erase(channel) == 0) return channel;
    data_.erase(channel);
    return st;
  }
  return channel;
}

Result<uint32_t> AgentSession::Attach(const std::string& tag, AgentCallbacks cb) {
  uint32_t channel;
  {
    std::lock_guard lock(mu_);
    if (closed_) return Status(Code::kUnavailable, "the sandbox agent is disconnected");
    auto it = held_.find(tag);
    if (it == held_.end()) return NotFound("the sandbox agent does not run " + tag + " any more");
    channel = it->second;
    held_.erase(it);
    if (channels_.count(channel))
      return NotFound("the sandbox agent does not run " + tag + " any more");
    channels_[channel] = std::move(cb);
  }
  // On failure the reader ends the channel as lost, through its callbacks.
  (void)Send(FrameType::kAttach, channel, "");
  return channel;
}

Status AgentSession::SendStdin(uint32_t channel, std::string_view data) {
  // One limit for the whole of it: per frame, an agent that took each frame just before its
  // limit would hold the sender for 32 limits (8 MiB in 256 KiB frames).
  const auto deadline = std::chrono::steady_clock::now() + kSendLimit;
  if (data.empty()) return SendBefore(FrameType::kStdin, channel, "", deadline);
  constexpr size_t kChunk = 256 * 1024;
  for (size_t i = 0; i < data.size(); i += kChunk)
    RETURN_IF_ERROR(SendBefore(FrameType::kStdin, channel, data.substr(i, kChunk), deadline));
  return Status::Ok();
}

Status AgentSession::Signal(uint32_t channel, int sig) {
  return Send(FrameType::kSignal, channel, agent::EncodeInts({sig}));
}

Status AgentSession::SignalBefore(uint32_t channel, int sig,
                                  std::chrono::steady_clock::time_point deadline) {
  return SendBefore(FrameType::kSignal, channel, agent::EncodeInts({sig}), deadline);
}

Status AgentSession::Acknowledge(uint32_t channel, const agent::Ack& ack) {
  if (version_ < 4) return Status::Ok();
  return Send(FrameType::kAck, channel, agent::EncodeAck(ack));
}

Status AgentSession::Rekey(const std::string& key) { return Send(FrameType::kRekey, 0, key); }

void AgentSession::Close() {
  if (!closed_.exchange(true)) os::ShutdownSocket(fd_.get());
}

void AgentSession::Hangup(std::chrono::milliseconds timeout) {
  // Closed first, so that no spawn starts meanwhile; the reader reads on until the agent's
  // end of the connection closes, which is what this waits for.
  if (closed_.exchange(true)) return;
  os::ShutdownSocketWrite(fd_.get());
  {
    std::unique_lock lock(mu_);
    reader_done_cv_.wait_for(lock, timeout, [&] { return reader_done_; });
  }
  os::ShutdownSocket(fd_.get());
}

void AgentSession::Deliver(const Frame& f) {
  AgentCallbacks cb;
  std::vector<int32_t> v;
  bool decoded = f.type == FrameType::kExit && agent::DecodeInts(f.payload, 2, v);
  {
    std::lock_guard lock(mu_);
    auto it = channels_.find(f.channel);
    if (it == channels_.end()) return;
    if (f.type == FrameType::kExit) {
      cb = std::move(it->second);
      channels_.erase(it);
      // A process that ran had its data connection dialed first; that connection goes
      // through AgentHub's accept and may come after this frame (a tool that exits at
      // once, on a loaded host), so only a spawn that never started ends the wait.
      bool started = decoded && !(v[0] == agent::kExitNotStarted && v[1] == 0);
      if (auto d = data_.find(f.channel); d != data_.end() && !started) {
        d->second.ended = true;
        data_cv_.notify_all();
      }
    } else {
      cb = it->second;  // copies two std::functions: cheap next to a 64 KiB chunk
    }
  }
  if (f.type == FrameType::kStdout || f.type == FrameType::kStderr) {
    if (cb.output) cb.output(f.type == FrameType::kStdout ? 1 : 2, f.payload);
  } else if (f.type == FrameType::kExit) {
    AgentExit e;
    if (decoded) {
      e.exit_code = v[0];
      e.signal = v[1];
    } else {
      e.lost = true;
    }
    if (cb.exit) cb.exit(e);
  }
}

bool AgentSession::HandleHello(const Frame& f) {
  uint32_t version = 0;
  std::string key;  // checked by AgentHub already
  std::vector<agent::HeldProcess> held;
  if (f.type == FrameType::kHello && agent::DecodeHello(f.payload, version, key, held) &&
      agent::SpokenVersion(version)) {
    version_ = version;
    std::lock_guard lock(mu_);
    std::set<uint32_t> named;
    for (const auto& h : held) {
      // A channel named twice would have two commands' outputs meet on it, and one past
      // kMaxHeldChannel would have new channels wrap round to 0: neither is taken.
      if (h.channel == 0 || h.channel > kMaxHeldChannel || !named.insert(h.channel).second) {
        spdlog::warn(
            "sandbox {}: the agent's hello names channel {} for {} again or out of "
            "range; not attached",
            sandbox_id_, h.channel, h.tag.substr(0, 64));
        continue;
      }
      held_[h.tag] = h.channel;
      // New channels never collide with the held ones.
      next_channel_ = std::max(next_channel_, h.channel + 1);
    }
    ready_ = true;
    return true;
  }
  spdlog::warn("sandbox {}: the agent speaks another protocol version", sandbox_id_);
  return false;
}

void AgentSession::ReadLoop(Frame hello) {
  // The agent's frames are the sandbox's bytes: one whose handling threw ends the session as
  // a malformed frame does (below: its commands are reported lost), not the process.
  RunGuarded("sandbox " + sandbox_id_ + ": agent session", [&] { ReadFrames(std::move(hello)); });
  Close();
  std::map<uint32_t, AgentCallbacks> pending;
  {
    std::lock_guard lock(mu_);
    pending.swap(channels_);
    for (auto& [_, d] : data_) d.ended = true;
    data_cv_.notify_all();
    reader_done_ = true;
    reader_done_cv_.notify_all();
  }
  AgentExit lost;
  lost.lost = true;
  for (auto& entry : pending) {
    auto& report_exit = entry.second.exit;
    if (report_exit)
      RunGuarded("sandbox " + sandbox_id_ + ": reporting a lost command",
                 [&] { report_exit(lost); });
  }
}

void AgentSession::ReadFrames(Frame hello) {
  agent::FrameDecoder decoder;
  // Not zeroed: an idle session's reads touch a page or two of it, where a zeroed buffer
  // made all 256 KiB resident for every sandbox's session.
  constexpr size_t kReadBuffer = 256 * 1024;
  auto buf = std::make_unique_for_overwrite<char[]>(kReadBuffer);
  bool bad = !HandleHello(hello);
  while (!bad) {
    auto n = os::ReadSome(fd_.get(), buf.get(), kReadBuffer);
    if (!n.ok() || *n == 0) break;
    decoder.Feed(std::string_view(buf.get(), *n));
    Frame f;
    for (;;) {
      auto next = decoder.Pop(f);
      if (next == agent::FrameDecoder::Next::kNeedMore) break;
      if (next == agent::FrameDecoder::Next::kBad) {
        spdlog::warn("sandbox {}: the agent sent a malformed frame; dropping it", sandbox_id_);
        bad = true;
        break;
      }
      if (f.type == FrameType::kRekey) {
        if (rekeyed_) rekeyed_();
      } else if (f.type != FrameType::kHello) {
        Deliver(f);
      }
    }
  }
}

}  // namespace adapt::runtime

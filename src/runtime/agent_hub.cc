#include "runtime/agent_hub.h"

#include <chrono>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "base/background_work.h"
#include "base/constant_time.h"
#include "base/ids.h"
#include "base/log.h"
#include "os/files.h"
#include "os/process.h"
#include "os/unix_socket.h"

namespace adapt::runtime {

// Generous: a ptrace-platform sandbox on a loaded host can be slow to write its first frame.
constexpr auto kFirstFrameWait = std::chrono::seconds(10);

struct AgentHub::Listener {
  std::string sandbox_id;
  std::string path;
  std::string key_file;
  std::string key;       // guarded by mu
  std::string next_key;  // handed to the agent, not yet confirmed; guarded by mu
  os::UniqueFd fd;
  std::mutex mu;
  bool closed = false;                    // guarded by mu
  int pending = 0;                        // connections in Introduce; guarded by mu
  bool warned_full = false;               // guarded by mu
  std::shared_ptr<AgentSession> session;  // guarded by mu
  std::chrono::steady_clock::time_point listened_at = std::chrono::steady_clock::now();
};

AgentHub::~AgentHub() {
  std::map<std::string, std::shared_ptr<Listener>> all;
  {
    std::lock_guard lock(mu_);
    all.swap(listeners_);
  }
  for (auto& [id, l] : all) {
    std::lock_guard lock(l->mu);
    l->closed = true;
    os::ShutdownSocket(l->fd.get());
    if (l->session) l->session->Close();
  }
}

namespace {

// The key file's lines: the key, then the one being handed over (may be absent).
Status ReadKeys(const std::string& key_file, std::string& key, std::string& next) {
  ASSIGN_OR_RETURN(std::string text, os::ReadFile(key_file));
  auto nl = text.find('\n');
  key = text.substr(0, nl);
  next = nl == std::string::npos ? "" : text.substr(nl + 1);
  if (key.empty() || key.size() > agent::kMaxAgentKey || next.size() > agent::kMaxAgentKey)
    return Internal("the agent key file " + key_file + " is malformed");
  return Status::Ok();
}

// Written before the agent is sent the next key: after a crash either key is still taken.
Status WriteKeys(const std::string& key_file, const std::string& key, const std::string& next) {
  return os::WriteFileAtomic(key_file, next.empty() ? key : key + "\n" + next, 0600);
}

}  // namespace

Status AgentHub::Listen(const std::string& sandbox_id, const std::string& socket_path,
                        const std::string& key_file) {
  std::lock_guard lock(mu_);
  if (listeners_.count(sandbox_id)) return Status::Ok();
  auto l = std::make_shared<Listener>();
  l->sandbox_id = sandbox_id;
  l->path = socket_path;
  l->key_file = key_file;
  RETURN_IF_ERROR(ReadKeys(key_file, l->key, l->next_key));
  // Only root inside the sandbox may connect; the workload's user may not.
  ASSIGN_OR_RETURN(l->fd, os::ListenUnix(socket_path, 0600));
  try {
    std::thread(Guarded("sandbox " + sandbox_id + ": agent socket", [l] {
      AcceptLoop(l);
    })).detach();
  } catch (const std::system_error& e) {
    return Status(Code::kUnavailable, std::string("no thread for the agent socket: ") + e.what());
  }
  listeners_[sandbox_id] = l;
  return Status::Ok();
}

namespace {

// Reads exactly n bytes, waiting at most until `deadline`.
bool ReadExactly(int fd, char* buf, size_t n, std::chrono::steady_clock::time_point deadline) {
  size_t got = 0;
  while (got < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    auto ready = os::WaitReadable({fd}, static_cast<int>(left.count()));
    if (!ready.ok()) return false;
    if (!(*ready)[0]) continue;
    auto r = os::ReadSome(fd, buf + got, n - got);
    if (!r.ok() || *r == 0) return false;
    got += *r;
  }
  return true;
}

// The first frame of a new connection, read without a byte more (what follows belongs to
// the session or to the data stream). False for anything but a small hello or data frame.
bool ReadFirstFrame(int fd, agent::Frame& out) {
  // A hello lists the processes the agent held (a few bytes each); a data token is short.
  auto deadline = std::chrono::steady_clock::now() + kFirstFrameWait;
  char header[agent::kFrameHeaderSize];
  if (!ReadExactly(fd, header, sizeof header, deadline)) return false;
  auto u32 = [&](size_t at) {
    auto b = reinterpret_cast<const unsigned char*>(header + at);
    return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
  };
  uint32_t len = u32(0);
  auto type = static_cast<agent::FrameType>(header[4]);
  if (type == agent::FrameType::kHello  ? len > agent::kMaxFramePayload
      : type == agent::FrameType::kData ? len > 256
                                        : true)
    return false;
  out.type = type;
  out.channel = u32(5);
  out.payload.assign(len, '\0');
  return ReadExactly(fd, out.payload.data(), len, deadline);
}

}  // namespace

void AgentHub::AcceptLoop(std::shared_ptr<Listener> l) {
  for (;;) {
    auto conn = os::AcceptUnix(l->fd.get());
    {
      std::lock_guard lock(l->mu);
      if (l->closed) return;
    }
    if (!conn.ok()) {
      spdlog::warn("sandbox {}: agent socket: {}", l->sandbox_id, conn.status().message());
      return;
    }
    {
      // A sandbox that floods its socket holds a few threads, not one per connection.
      std::lock_guard lock(l->mu);
      if (l->pending >= kMaxPendingConnections) {
        if (!l->warned_full)
          spdlog::warn("sandbox {}: too many connections to the agent socket; closing the extra",
                       l->sandbox_id);
        l->warned_full = true;
        continue;  // the connection closes here
      }
      ++l->pending;
    }
    // Each connection is heard on a thread of its own: an agent slowed down by a busy host
    // (or a process of the sandbox that connects and says nothing) holds up no other.
    try {
      std::thread(Guarded("sandbox " + l->sandbox_id + ": agent connection",
                          [l, fd = std::move(*conn)]() mutable { Introduce(l, std::move(fd)); }))
          .detach();
    } catch (const std::system_error& e) {
      std::lock_guard lock(l->mu);
      --l->pending;
      spdlog::warn("sandbox {}: no thread for an agent connection: {}", l->sandbox_id, e.what());
    }
  }
}

void AgentHub::Introduce(std::shared_ptr<Listener> l, os::UniqueFd conn) {
  // The agent speaks first at once: the wait is bounded.
  agent::Frame first;
  // Guarded here, so that the connection is counted out also when reading threw.
  bool introduced = false;
  RunGuarded("sandbox " + l->sandbox_id + ": agent connection",
             [&] { introduced = ReadFirstFrame(conn.get(), first); });
  std::lock_guard lock(l->mu);
  --l->pending;
  if (l->closed) return;
  if (!introduced) {
    spdlog::debug("sandbox {}: a connection to the agent socket did not introduce itself",
                  l->sandbox_id);
    return;
  }
  if (first.type == agent::FrameType::kData) {
    // A data connection belongs to a spawn of the current session, with its token.
    if (!l->session || !l->session->OfferData(first.channel, first.payload, std::move(conn)))
      spdlog::debug("sandbox {}: an unexpected data connection was dropped", l->sandbox_id);
    return;
  }
  uint32_t version = 0;
  std::string key;
  std::vector<agent::HeldProcess> held;
  bool decoded =
      agent::DecodeHello(first.payload, version, key, held) && agent::SpokenVersion(version);
  bool current = decoded && ConstantTimeEquals(key, l->key);
  bool handed = decoded && !l->next_key.empty() && ConstantTimeEquals(key, l->next_key);
  if (!current && !handed) {
    // Anything of the sandbox may connect here; only the agent holds the key.
    spdlog::debug("sandbox {}: a hello without the agent's key was dropped", l->sandbox_id);
    return;
  }
  if (handed) {
    l->key = l->next_key;
    l->next_key.clear();
  }
  if (l->session) l->session->Close();
  auto session = std::make_shared<AgentSession>(l->sandbox_id, std::move(conn));
  // A fresh key for the agent's next hellos: a restored sandbox's agent must not keep the
  // one it was checkpointed with.
  std::string next = RandomToken(32);
  std::weak_ptr<Listener> weak = l;
  session->SetRekeyed([weak, next] {
    auto listener = weak.lock();
    if (!listener) return;
    std::lock_guard lock(listener->mu);
    if (listener->next_key != next) return;
    listener->key = next;
    listener->next_key.clear();
    Status st = WriteKeys(listener->key_file, listener->key, "");
    if (!st.ok()) spdlog::warn("sandbox {}: {}", listener->sandbox_id, st.message());
  });
  if (!session->Start(std::move(first))) return;
  l->session = session;
  if (WriteKeys(l->key_file, l->key, next).ok()) {
    l->next_key = next;
    (void)session->Rekey(next);
  }
}

std::shared_ptr<AgentSession> AgentHub::StopListening(const std::string& sandbox_id) {
  std::shared_ptr<Listener> l;
  {
    std::lock_guard lock(mu_);
    auto it = listeners_.find(sandbox_id);
    if (it == listeners_.end()) return nullptr;
    l = it->second;
    listeners_.erase(it);
  }
  std::lock_guard lock(l->mu);
  l->closed = true;
  os::ShutdownSocket(l->fd.get());
  return std::exchange(l->session, nullptr);
}

void AgentHub::Close(const std::string& sandbox_id) {
  if (auto session = StopListening(sandbox_id)) session->Close();
}

void AgentHub::Hangup(const std::string& sandbox_id, std::chrono::milliseconds timeout) {
  // Waited for outside the listener's lock, which the session's reader may take (rekeyed).
  if (auto session = StopListening(sandbox_id)) session->Hangup(timeout);
}

std::shared_ptr<AgentHub::Listener> AgentHub::Find(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  auto it = listeners_.find(sandbox_id);
  return it == listeners_.end() ? nullptr : it->second;
}

std::shared_ptr<AgentSession> AgentHub::Session(const std::string& sandbox_id) {
  auto l = Find(sandbox_id);
  if (!l) return nullptr;
  std::lock_guard lock(l->mu);
  return l->session && l->session->Ready() ? l->session : nullptr;
}

std::shared_ptr<AgentSession> AgentHub::AwaitFirstSession(const std::string& sandbox_id) {
  for (;;) {
    auto l = Find(sandbox_id);
    if (!l) return nullptr;
    {
      std::lock_guard lock(l->mu);
      if (l->session && l->session->Ready()) return l->session;
      if (l->closed || std::chrono::steady_clock::now() >= l->listened_at + kFirstConnectWindow)
        return nullptr;
    }
    // The agent's hello is a few milliseconds away once it runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace adapt::runtime

#include "runtime/agent_hub.h"

#include <chrono>
#include <thread>

#include "base/log.h"
#include "os/process.h"
#include "os/unix_socket.h"

namespace adapt::runtime {

// Generous: a ptrace-platform sandbox on a loaded host can be slow to write its first frame.
constexpr auto kFirstFrameWait = std::chrono::seconds(10);

struct AgentHub::Listener {
  std::string sandbox_id;
  std::string path;
  os::UniqueFd fd;
  std::mutex mu;
  bool closed = false;                    // guarded by mu
  std::shared_ptr<AgentSession> session;  // guarded by mu
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

Status AgentHub::Listen(const std::string& sandbox_id, const std::string& socket_path) {
  std::lock_guard lock(mu_);
  if (listeners_.count(sandbox_id)) return Status::Ok();
  auto l = std::make_shared<Listener>();
  l->sandbox_id = sandbox_id;
  l->path = socket_path;
  // Only root inside the sandbox (the agent) may connect; the workload's user may not.
  ASSIGN_OR_RETURN(l->fd, os::ListenUnix(socket_path, 0600));
  listeners_[sandbox_id] = l;
  std::thread([l] { AcceptLoop(l); }).detach();
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
    // Each connection is heard on a thread of its own: an agent slowed down by a busy host
    // (or a process of the sandbox that connects and says nothing) holds up no other.
    std::thread([l, fd = std::move(*conn)]() mutable { Introduce(l, std::move(fd)); }).detach();
  }
}

void AgentHub::Introduce(std::shared_ptr<Listener> l, os::UniqueFd conn) {
  // Only the agent connects here, and it speaks first at once: the wait is bounded.
  agent::Frame first;
  if (!ReadFirstFrame(conn.get(), first)) {
    spdlog::warn("sandbox {}: a connection to the agent socket did not introduce itself",
                 l->sandbox_id);
    return;
  }
  std::lock_guard lock(l->mu);
  if (l->closed) return;
  if (first.type == agent::FrameType::kData) {
    // A data connection belongs to a spawn of the current session, with its token.
    if (!l->session || !l->session->OfferData(first.channel, first.payload, std::move(conn)))
      spdlog::warn("sandbox {}: an unexpected data connection was dropped", l->sandbox_id);
    return;
  }
  if (l->session) l->session->Close();
  l->session = std::make_shared<AgentSession>(l->sandbox_id, std::move(conn));
  l->session->Start(std::move(first));
}

void AgentHub::Close(const std::string& sandbox_id) {
  std::shared_ptr<Listener> l;
  {
    std::lock_guard lock(mu_);
    auto it = listeners_.find(sandbox_id);
    if (it == listeners_.end()) return;
    l = it->second;
    listeners_.erase(it);
  }
  std::lock_guard lock(l->mu);
  l->closed = true;
  os::ShutdownSocket(l->fd.get());
  if (l->session) l->session->Close();
  l->session.reset();
}

std::shared_ptr<AgentSession> AgentHub::Session(const std::string& sandbox_id) {
  std::shared_ptr<Listener> l;
  {
    std::lock_guard lock(mu_);
    auto it = listeners_.find(sandbox_id);
    if (it == listeners_.end()) return nullptr;
    l = it->second;
  }
  std::lock_guard lock(l->mu);
  if (l->session && l->session->Ready()) return l->session;
  return nullptr;
}

}  // namespace adapt::runtime

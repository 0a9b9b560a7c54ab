#include "runtime/agent_hub.h"

#include <thread>

#include "base/log.h"
#include "os/unix_socket.h"

namespace adapt::runtime {

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

void AgentHub::AcceptLoop(std::shared_ptr<Listener> l) {
  for (;;) {
    auto conn = os::AcceptUnix(l->fd.get());
    std::lock_guard lock(l->mu);
    if (l->closed) return;
    if (!conn.ok()) {
      spdlog::warn("sandbox {}: agent socket: {}", l->sandbox_id, conn.status().message());
      return;
    }
    if (l->session) l->session->Close();
    l->session = std::make_shared<AgentSession>(l->sandbox_id, std::move(*conn));
    l->session->Start();
  }
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

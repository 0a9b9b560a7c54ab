// AgentHub: the host ends of the in-sandbox agents' channels. For each running sandbox
// adaptd listens on a Unix socket of its own (<sandbox dir>/session/agent.sock, mounted
// into that sandbox only), so an agent can only ever reach its own sandbox's session, and
// the listener speaks nothing but the agent protocol. A new connection (the agent
// reconnecting) replaces the previous one.
// Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "os/unique_fd.h"
#include "runtime/agent_session.h"

namespace adapt::runtime {

class AgentHub {
 public:
  AgentHub() = default;
  ~AgentHub();
  AgentHub(const AgentHub&) = delete;
  AgentHub& operator=(const AgentHub&) = delete;

  // Listens for the sandbox's agent at `socket_path` (idempotent).
  Status Listen(const std::string& sandbox_id, const std::string& socket_path);
  // Stops listening and drops the sandbox's connection.
  void Close(const std::string& sandbox_id);
  // The sandbox's agent session when an agent is connected and ready; nullptr otherwise.
  std::shared_ptr<AgentSession> Session(const std::string& sandbox_id);

 private:
  struct Listener;
  static void AcceptLoop(std::shared_ptr<Listener> listener);
  // Reads a new connection's first frame and makes it the session or a spawn's data stream.
  static void Introduce(std::shared_ptr<Listener> listener, os::UniqueFd conn);

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Listener>> listeners_;
};

}  // namespace adapt::runtime

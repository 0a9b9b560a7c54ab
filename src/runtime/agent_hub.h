// AgentHub: the host ends of the in-sandbox agents' channels. For each running sandbox
// adaptd listens on a Unix socket of its own (<sandbox dir>/session/agent.sock, mounted
// into that sandbox only), so an agent can only ever reach its own sandbox's session, and
// the listener speaks nothing but the agent protocol. The sandbox's root can connect too
// (gVisor connects on behalf of any process of the sandbox, so peer credentials tell nothing):
// only a hello carrying the agent's key, which adaptd hands the agent where the workload
// cannot read it, becomes the session (replacing the previous one: the agent reconnecting).
// Connections still to introduce themselves are capped per sandbox, and a thread that cannot
// be started drops its connection, never the daemon.
// Thread-safe.
#pragma once

#include <chrono>
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

  // At most this many connections of one sandbox wait to introduce themselves; more are
  // closed at once.
  static constexpr int kMaxPendingConnections = 8;

  // Listens for the sandbox's agent at `socket_path` (idempotent). `key_file` holds the
  // agent's key (then, on a second line, the one being handed over): only a hello with one
  // of them is taken for the agent's. Every new session hands the agent a fresh key, which
  // replaces the old one in `key_file` once the agent confirms it holds it.
  Status Listen(const std::string& sandbox_id, const std::string& socket_path,
                const std::string& key_file);
  // Stops listening and drops the sandbox's connection.
  void Close(const std::string& sandbox_id);
  // Close, returning once the agent has dropped its end of the connection too, or after
  // `timeout` (AgentSession::Hangup): what a checkpoint needs.
  void Hangup(const std::string& sandbox_id, std::chrono::milliseconds timeout);
  // The sandbox's agent session when an agent is connected and ready; nullptr otherwise.
  std::shared_ptr<AgentSession> Session(const std::string& sandbox_id);
  // Session, but within kFirstConnectWindow of Listen (a boot, or adaptd's restart) waits
  // for the agent to be ready until that window ends. Blocks the caller.
  std::shared_ptr<AgentSession> AwaitFirstSession(const std::string& sandbox_id);
  static constexpr std::chrono::milliseconds kFirstConnectWindow{3000};

 private:
  struct Listener;
  std::shared_ptr<Listener> Find(const std::string& sandbox_id);
  // Stops listening for the sandbox's agent; its session, if any, for the caller to end.
  std::shared_ptr<AgentSession> StopListening(const std::string& sandbox_id);
  static void AcceptLoop(std::shared_ptr<Listener> listener);
  // Reads a new connection's first frame and makes it the session or a spawn's data stream.
  static void Introduce(std::shared_ptr<Listener> listener, os::UniqueFd conn);

  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Listener>> listeners_;
};

}  // namespace adapt::runtime

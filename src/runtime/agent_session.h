// AgentSession: adaptd's end of one connection from a sandbox's agent (adapt-agent serve).
// It multiplexes many commands over the connection: Spawn hands out a channel and the
// reader thread delivers that channel's output and exit to its callbacks.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "agent/protocol.h"
#include "base/status.h"
#include "os/unique_fd.h"

namespace adapt::runtime {

struct AgentExit {
  int exit_code = -1;  // valid when signal == 0 and !lost
  int signal = 0;
  bool lost = false;  // the connection dropped before the process's end was reported
};

struct AgentCallbacks {
  // stream: 1 stdout, 2 stderr. Called on the reader thread; must not block for long.
  std::function<void(int stream, std::string_view data)> output;
  // Called exactly once per spawned channel.
  std::function<void(const AgentExit&)> exit;
};

class AgentSession : public std::enable_shared_from_this<AgentSession> {
 public:
  // How long a frame may wait for its turn and for room on the connection before the
  // session is dropped; a command's whole stdin has this long too, not each of its frames.
  static constexpr std::chrono::seconds kSendLimit{60};
  // The highest channel a hello may name for a process it still runs.
  static constexpr uint32_t kMaxHeldChannel = 1u << 30;

  AgentSession(std::string sandbox_id, os::UniqueFd fd);
  ~AgentSession();

  // Starts the reader thread; `hello` is the connection's first frame, already read (see
  // AgentHub), checked here like any later frame. False (the connection dropped) when no
  // thread could be started for it.
  bool Start(agent::Frame hello);
  // True once the agent said hello and until the connection ends.
  bool Ready() const { return ready_ && !closed_; }
  // Starts a process; the callbacks get its output and exit. The stdin of a request with
  // has_stdin must then be sent with SendStdin (and closed with an empty write).
  Result<uint32_t> Spawn(const agent::SpawnRequest& request, AgentCallbacks callbacks);
  Status SendStdin(uint32_t channel, std::string_view data);
  // Sends `sig` to the channel's whole process group; SignalBefore gives up (and drops the
  // session, as any send past its limit) at `deadline` instead of after kSendLimit.
  Status Signal(uint32_t channel, int sig);
  Status SignalBefore(uint32_t channel, int sig, std::chrono::steady_clock::time_point deadline);
  // Drops the connection; pending channels end as lost.
  void Close();
  // Close, after the agent has dropped its end too: adaptd stops writing, and waits up to
  // `timeout` for the agent to see that and close its socket. A sandbox checkpointed while
  // the agent still held a connected host socket would restore a dead connection.
  void Hangup(std::chrono::milliseconds timeout);
  // Tells the agent what of a command spawned with a tag is durably recorded
  // (agent::FrameType::kAck), so that it keeps only the rest across a reconnection. An
  // agent older than protocol version 4 keeps nothing: Ok, nothing sent.
  Status Acknowledge(uint32_t channel, const agent::Ack& ack);
  // Hands the agent `key` for its next hellos (agent::FrameType::kRekey).
  Status Rekey(const std::string& key);
  // Called (on the reader thread) when the agent confirms it holds the key of Rekey. Set
  // before Start.
  void SetRekeyed(std::function<void()> rekeyed) { rekeyed_ = std::move(rekeyed); }

  // Data connections (SpawnRequest::data_token): a spawn with a token expects the agent to
  // open a second connection announcing it. OfferData hands such a connection over (false:
  // no spawn expects that channel and token, the connection is to be dropped); TakeData
  // waits for it, and answers kUnavailable when the spawn ended without starting its process
  // (agent::kExitNotStarted), the session closed, or `timeout` passed.
  bool OfferData(uint32_t channel, std::string_view token, os::UniqueFd fd);

  // Takes up again the process spawned with SpawnRequest::tag `tag` by an earlier
  // connection, which the agent kept running (its hello listed it): the callbacks get what
  // it wrote meanwhile, the rest of its output and its exit. NotFound when the agent does
  // not hold it.
  Result<uint32_t> Attach(const std::string& tag, AgentCallbacks callbacks);
  Result<os::UniqueFd> TakeData(uint32_t channel, std::chrono::milliseconds timeout);

 private:
  struct DataSlot {
    std::string token;
    os::UniqueFd fd;
    bool ended = false;  // the spawn ended unstarted before the connection came
  };
  void ReadLoop(agent::Frame hello);
  // ReadLoop's reading and handling of the agent's frames, until the connection ends or a
  // frame is malformed.
  void ReadFrames(agent::Frame hello);
  bool HandleHello(const agent::Frame& frame);
  Status Send(agent::FrameType type, uint32_t channel, std::string_view payload);
  Status SendBefore(agent::FrameType type, uint32_t channel, std::string_view payload,
                    std::chrono::steady_clock::time_point deadline);
  void Deliver(const agent::Frame& frame);

  std::string sandbox_id_;
  os::UniqueFd fd_;
  std::atomic<bool> ready_{false};
  std::atomic<uint32_t> version_{0};  // the agent's protocol version, from its hello
  std::atomic<bool> closed_{false};
  std::timed_mutex write_mu_;  // timed: the wait for a turn counts against a frame's limit
  std::mutex mu_;
  std::map<uint32_t, AgentCallbacks> channels_;  // guarded by mu_
  uint32_t next_channel_ = 1;                    // guarded by mu_
  std::map<uint32_t, DataSlot> data_;            // guarded by mu_
  std::map<std::string, uint32_t> held_;         // tag -> channel, from the hello; mu_
  std::condition_variable data_cv_;
  bool reader_done_ = false;  // ReadLoop has returned; guarded by mu_
  std::condition_variable reader_done_cv_;
  std::function<void()> rekeyed_;  // set before Start, then read by the reader only
};

}  // namespace adapt::runtime

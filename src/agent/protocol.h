// The agent protocol: how adaptd and the in-sandbox agent (`adapt-agent serve`) talk over
// one stream socket. Every message is a frame:
//   u32 payload length (big endian) | u8 type | u32 channel (big endian) | payload
// A channel is one command, numbered by adaptd; channel 0 is the session itself.
// Plain C++ with no dependency, so that the static agent stays small.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace adapt::agent {

// 2: spawns may carry a data token (file operations on a data connection of their own).
// 3: the hello carries the agent's key (the sandbox's processes cannot pose as the agent).
// 4: adaptd acknowledges what it has recorded of a command (kAck), and the agent keeps the
//    rest, its exit included, across a reconnection.
inline constexpr uint32_t kProtocolVersion = 4;
// The oldest version adaptd still speaks: an agent of a sandbox that ran on across an upgrade
// of adaptd (or was restored from an older checkpoint). The hello of 3 and 4 is the same.
inline constexpr uint32_t kMinProtocolVersion = 3;
inline constexpr bool SpokenVersion(uint32_t version) {
  return version >= kMinProtocolVersion && version <= kProtocolVersion;
}
// The agent's key: random bytes adaptd makes per boot, at most this long.
inline constexpr size_t kMaxAgentKey = 128;
inline constexpr size_t kFrameHeaderSize = 9;
// Larger payloads are a protocol error: both sides split data into chunks below this.
inline constexpr size_t kMaxFramePayload = 1 << 20;
// The largest output chunk the agent sends.
inline constexpr size_t kOutputChunk = 256 * 1024;

enum class FrameType : uint8_t {
  kHello = 1,    // agent -> adaptd, channel 0: EncodeHello
  kSpawn = 2,    // adaptd -> agent: a SpawnRequest
  kStdin = 3,    // adaptd -> agent: bytes for the process's stdin; empty closes it
  kSignal = 4,   // adaptd -> agent: i32 signal, sent to the process's whole group
  kStarted = 5,  // agent -> adaptd: i32 pid of the started process
  kStdout = 6,   // agent -> adaptd: output bytes
  kStderr = 7,   // agent -> adaptd: output bytes
  kExit = 8,     // agent -> adaptd: i32 exit code, i32 signal (0 when it exited)
  // agent -> adaptd, the first and only frame of a data connection: the spawn's token.
  // What follows on that connection is the process's raw stdin (adaptd -> agent) and stdout
  // (agent -> adaptd), so a file moves at socket speed with the kernel's own flow control.
  kData = 9,
  // adaptd -> agent: take up again a channel the agent held across a reconnection (listed
  // in its hello): what the process wrote meanwhile follows, then its exit once it ends.
  // An agent that does not hold the channel answers kExit with an empty payload (lost).
  kAttach = 10,
  // adaptd -> agent, channel 0: the agent's key from now on (for its next hellos); the agent
  // answers kRekey with an empty payload once it holds it. Sent on every new session, so a
  // restored sandbox's agent, which comes back with the key it was checkpointed with, gets
  // a fresh one at once.
  kRekey = 11,
  // adaptd -> agent (version 4 on): EncodeAck. So much more of the process's stdout and
  // stderr is durably recorded (counted from the previous ack, or from the spawn or attach),
  // and with `ended`, its exit too. A process spawned with a tag keeps its output and exit
  // from the last ack on, and is held across a reconnection until its end is acknowledged:
  // an adaptd that dies between receiving an exit and recording it finds it again.
  kAck = 12,
};

struct Frame {
  FrameType type = FrameType::kHello;
  uint32_t channel = 0;
  std::string payload;
};

std::string EncodeFrame(FrameType type, uint32_t channel, std::string_view payload);

// Splits a byte stream into frames.
class FrameDecoder {
 public:
  enum class Next { kFrame, kNeedMore, kBad };
  void Feed(std::string_view bytes);
  // kBad: an unknown type or an oversized payload; the stream cannot be trusted any more.
  Next Pop(Frame& out);
  size_t buffered() const { return buffer_.size() - offset_; }

 private:
  std::string buffer_;
  size_t offset_ = 0;
};

// A process to start: argv[0] is looked up in PATH of `env`.
struct SpawnRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "K=V": the process's whole environment
  std::string cwd;               // empty: /
  uint32_t uid = 0;
  uint32_t gid = 0;
  bool has_stdin = false;  // false: stdin is /dev/null
  // Non-empty: the agent opens a new connection to adaptd, sends kData with this token on
  // it, and makes that connection the process's stdin and stdout (has_stdin is ignored).
  // The agent dials it before it starts the process: an exit other than kExitNotStarted
  // means the connection is on its way, even when the exit frame outruns it.
  std::string data_token;
  // adaptd's name for the process (a command id), listed in the agent's hello while the
  // process runs on across a reconnection.
  std::string tag;
};

// The exit status of a spawn the agent could not start (as a shell's "cannot execute").
constexpr int32_t kExitNotStarted = 126;

// A process the agent kept running while adaptd was away, listed in its hello.
struct HeldProcess {
  uint32_t channel = 0;
  std::string tag;
};

// The hello: the protocol version, the agent's key (which the adaptd that started the agent
// handed it, see AgentHub), then the processes held since the last connection.
std::string EncodeHello(std::string_view key, const std::vector<HeldProcess>& held);
bool DecodeHello(std::string_view payload, uint32_t& version, std::string& key,
                 std::vector<HeldProcess>& held);

std::string EncodeSpawn(const SpawnRequest& request);
bool DecodeSpawn(std::string_view payload, SpawnRequest& out);

// What a kAck says: bytes of each stream newly recorded, and whether the exit is.
struct Ack {
  uint64_t stdout_bytes = 0;
  uint64_t stderr_bytes = 0;
  bool ended = false;
};
std::string EncodeAck(const Ack& ack);
bool DecodeAck(std::string_view payload, Ack& out);

std::string EncodeInts(const std::vector<int32_t>& values);
// False unless `payload` holds exactly `count` integers.
bool DecodeInts(std::string_view payload, size_t count, std::vector<int32_t>& out);

}  // namespace adapt::agent

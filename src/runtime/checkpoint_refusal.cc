#include "runtime/checkpoint_refusal.h"

#include <cstdlib>

namespace adapt::runtime {
namespace {

// gVisor's tcp.EndpointState values (pkg/tcpip/transport/tcp/endpoint.go), as Linux numbers
// its TCP states.
const char* TcpStateName(unsigned long v) {
  switch (v) {
    case 1:
      return "ESTABLISHED";
    case 2:
      return "SYN_SENT";
    case 3:
      return "SYN_RECV";
    case 4:
      return "FIN_WAIT1";
    case 5:
      return "FIN_WAIT2";
    case 6:
      return "TIME_WAIT";
    case 8:
      return "CLOSE_WAIT";
    case 9:
      return "LAST_ACK";
    case 11:
      return "CLOSING";
    default:
      return "";
  }
}

bool ClosesByItself(const std::string& state) {
  return state == "FIN_WAIT1" || state == "FIN_WAIT2" || state == "TIME_WAIT" ||
         state == "LAST_ACK" || state == "CLOSING";
}

}  // namespace

std::optional<CheckpointRefusal> ParseCheckpointRefusal(const std::string& out) {
  constexpr std::string_view kRejected = "endpoint cannot be saved in connected state: ";
  size_t at = out.find(kRejected);
  if (at == std::string::npos) {
    // A Unix socket connected outside the sandbox: the only ones are adaptd's, a file
    // transfer's data connection through the agent (this runsc's save fails on it with a nil
    // dereference). A stop waits a moment for transfers to end (core/file_transfers.h).
    if (out.find("encoding error at object transport.connectionedEndpoint") == std::string::npos)
      return std::nullopt;
    CheckpointRefusal r;
    r.sentence =
        "a file transfer through the sandbox's agent was still in progress, and this runsc "
        "cannot checkpoint its connection; stop once transfers have ended to keep the processes";
    return r;
  }
  CheckpointRefusal r;
  size_t from = at + kRejected.size();
  size_t to = out.find(":\n", from);
  if (to == std::string::npos) to = out.find('\n', from);
  r.connection = out.substr(from, to == std::string::npos ? std::string::npos : to - from);
  if (r.connection.size() > 200) r.connection.resize(200);
  // The endpoint's own state field, the first atomic "state" of the dumped tcp.endpoint.
  constexpr std::string_view kState = "state:atomicbitops.Uint32{_:sync.NoCopy{}, value:0x";
  size_t object = out.find("object tcp.endpoint");
  size_t s = out.find(kState, object == std::string::npos ? 0 : object);
  if (s != std::string::npos && s < at)
    r.tcp_state = TcpStateName(std::strtoul(out.c_str() + s + kState.size(), nullptr, 16));
  r.closing = ClosesByItself(r.tcp_state);
  r.sentence = "this runsc cannot checkpoint a TCP connection over the sandbox's network (" +
               (r.tcp_state.empty() ? std::string() : r.tcp_state + ", ") + r.connection + ")";
  r.sentence += r.closing ? ": the sandbox closed it less than 60 s ago and gVisor keeps it until "
                            "then; stop a minute after the last connection closed to keep the "
                            "processes"
                          : ": a process holds it open; close network connections before stopping "
                            "to keep the processes";
  return r;
}

}  // namespace adapt::runtime

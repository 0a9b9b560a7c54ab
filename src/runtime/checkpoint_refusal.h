// Why `runsc checkpoint` refused to save a sandbox, read from its output. This runsc
// (20221219) refuses any TCP endpoint connected through the sandbox's network device: its
// link endpoint lacks the save/restore capability, and it has no --net-disconnect-ok. Its
// error is a Go struct dump thousands of characters long ("encoding error at object
// tcp.endpoint{...state:...value:0x6...}: save rejected due to unsupported networking state:
// endpoint cannot be saved in connected state: local A, remote B: goroutine ..."); this turns
// it into one sentence. An endpoint its process already closed (FIN_WAIT, CLOSING, LAST_ACK,
// TIME_WAIT) goes away by itself within the stack's 60 s, an open one (ESTABLISHED,
// CLOSE_WAIT) only when its process closes it. Retrying is no remedy here: a refused save
// tears the sandbox down. The closing endpoints cannot be seen beforehand either (gVisor's
// /proc/net/tcp lists sockets that still have a file, not those the stack keeps after
// close), so the sentence tells the user what to do. Loopback connections are saved (the
// loopback device has the capability).
#pragma once

#include <optional>
#include <string>

namespace adapt::runtime {

struct CheckpointRefusal {
  std::string tcp_state;   // "ESTABLISHED", "TIME_WAIT", ...; "" when not said
  std::string connection;  // "local 10.0.0.2:41234, remote 198.51.100.10:80"
  bool closing = false;    // true: the endpoint ends by itself within 60 s
  std::string sentence;    // why, in one sentence, for hibernation.note
};

// Unset unless `runsc_output` is a refusal because of a network endpoint.
std::optional<CheckpointRefusal> ParseCheckpointRefusal(const std::string& runsc_output);

}  // namespace adapt::runtime

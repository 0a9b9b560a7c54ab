#include "runtime/checkpoint_refusal.h"

#include <gtest/gtest.h>

namespace adapt::runtime {
namespace {

// runsc 20221219's output for a connection over the sandbox's network, shortened: the struct
// dump holds tens of fields before and after these.
std::string Refusal(const std::string& state_hex, const std::string& remote) {
  return "checkpoint failed: checkpointing container \"sbx_a\": encoding error at object "
         "tcp.endpoint{TCPEndpointStateInner:stack.TCPEndpointStateInner{SACKPermitted:true}, "
         "h:(*tcp.handshake)(0xc0004b0630), timer:tcp.timer{state:0, clock:(*kernel.Timekeeper)"
         "(0xc0000a5180)}, state:atomicbitops.Uint32{_:sync.NoCopy{}, value:0x" +
         state_hex +
         "}, origEndpointState:0x0}: save rejected due to unsupported networking state: endpoint "
         "cannot be saved in connected state: local 10.153.16.2:64449, remote " +
         remote + ":\ngoroutine 183 [running]:\ngvisor.dev/gvisor/pkg/state.safely.func1()\n";
}

TEST(CheckpointRefusal, AnOpenConnectionIsNamedWithItsStateAndIsNotWaitedFor) {
  auto r = ParseCheckpointRefusal(Refusal("1", "198.51.100.10:80"));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->tcp_state, "ESTABLISHED");
  EXPECT_EQ(r->connection, "local 10.153.16.2:64449, remote 198.51.100.10:80");
  EXPECT_FALSE(r->closing);
  EXPECT_EQ(r->sentence,
            "this runsc cannot checkpoint a TCP connection over the sandbox's network "
            "(ESTABLISHED, local 10.153.16.2:64449, remote 198.51.100.10:80): a process holds "
            "it open; close network connections before stopping to keep the processes");
  EXPECT_EQ(ParseCheckpointRefusal(Refusal("8", "198.51.100.20:7001"))->tcp_state, "CLOSE_WAIT");
  EXPECT_FALSE(ParseCheckpointRefusal(Refusal("8", "198.51.100.20:7001"))->closing);
}

TEST(CheckpointRefusal, AConnectionClosingByItselfIsNamedWithTheMinuteItTakes) {
  for (auto [hex, name] : {std::pair{"4", "FIN_WAIT1"},
                           {"5", "FIN_WAIT2"},
                           {"6", "TIME_WAIT"},
                           {"9", "LAST_ACK"},
                           {"b", "CLOSING"}}) {
    auto r = ParseCheckpointRefusal(Refusal(hex, "198.51.100.10:80"));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->tcp_state, name);
    EXPECT_TRUE(r->closing) << name;
    EXPECT_NE(r->sentence.find("less than 60 s ago"), std::string::npos);
  }
}

TEST(CheckpointRefusal, OtherFailuresAreNotNetworkRefusals) {
  EXPECT_FALSE(ParseCheckpointRefusal("checkpoint failed: container is not running").has_value());
  EXPECT_FALSE(ParseCheckpointRefusal("").has_value());
}

TEST(CheckpointRefusal, AFileTransfersConnectionIsNamedAsSuch) {
  // runsc 20221219's output, shortened, for a connected Unix socket to the host (a download's
  // data connection through the agent), as a chaos run met it.
  auto r = ParseCheckpointRefusal(
      "checkpoint failed: checkpointing container \"sbx_a\": encoding error at object "
      "transport.connectionedEndpoint{baseEndpoint:transport.baseEndpoint{Queue:(*waiter.Queue)"
      "(0xc0004832f0)}, id:0x14, stype:1, acceptedChan:(chan *transport.connectionedEndpoint)"
      "(nil), boundSocketFD:transport.BoundSocketFD(nil)}: runtime error: invalid memory address "
      "or nil pointer dereference:\ngoroutine 183 [running]:\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->tcp_state, "");
  EXPECT_FALSE(r->closing);
  EXPECT_NE(r->sentence.find("a file transfer through the sandbox's agent was still in progress"),
            std::string::npos);
  EXPECT_FALSE(ParseCheckpointRefusal("encoding error at object fs.Inode{}").has_value());
}

}  // namespace
}  // namespace adapt::runtime

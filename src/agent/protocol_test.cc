#include "agent/protocol.h"

#include <gtest/gtest.h>

namespace adapt::agent {
namespace {

TEST(AgentProtocol, FramesRoundTripAcrossArbitrarySplits) {
  std::string wire = EncodeFrame(FrameType::kStdout, 7, "hello") +
                     EncodeFrame(FrameType::kExit, 7, EncodeInts({3, 0})) +
                     EncodeFrame(FrameType::kStdin, 9, "");
  for (size_t step = 1; step <= wire.size(); ++step) {
    FrameDecoder d;
    std::vector<Frame> got;
    for (size_t i = 0; i < wire.size(); i += step) {
      d.Feed(std::string_view(wire).substr(i, step));
      Frame f;
      while (d.Pop(f) == FrameDecoder::Next::kFrame) got.push_back(f);
    }
    ASSERT_EQ(got.size(), 3u) << "step " << step;
    EXPECT_EQ(got[0].type, FrameType::kStdout);
    EXPECT_EQ(got[0].channel, 7u);
    EXPECT_EQ(got[0].payload, "hello");
    std::vector<int32_t> ints;
    ASSERT_TRUE(DecodeInts(got[1].payload, 2, ints));
    EXPECT_EQ(ints, (std::vector<int32_t>{3, 0}));
    EXPECT_EQ(got[2].type, FrameType::kStdin);
    EXPECT_EQ(got[2].channel, 9u);
    EXPECT_TRUE(got[2].payload.empty());
    EXPECT_EQ(d.buffered(), 0u);
  }
}

TEST(AgentProtocol, OversizedOrUnknownFramesAreBad) {
  std::string big = EncodeFrame(FrameType::kStdout, 1, "");
  big[0] = '\x7f';  // length far beyond kMaxFramePayload
  FrameDecoder d;
  d.Feed(big);
  Frame f;
  EXPECT_EQ(d.Pop(f), FrameDecoder::Next::kBad);

  std::string unknown = EncodeFrame(FrameType::kStdout, 1, "x");
  unknown[4] = 42;
  FrameDecoder d2;
  d2.Feed(unknown);
  EXPECT_EQ(d2.Pop(f), FrameDecoder::Next::kBad);

  FrameDecoder d3;
  d3.Feed(EncodeFrame(FrameType::kStdout, 1, "abc").substr(0, 10));
  EXPECT_EQ(d3.Pop(f), FrameDecoder::Next::kNeedMore);
}

TEST(AgentProtocol, SpawnRoundTrips) {
  SpawnRequest r;
  r.argv = {"/bin/sh", "-c", std::string("a\0b", 3)};
  r.env = {"PATH=/bin", "X="};
  r.cwd = "/tmp";
  r.uid = 1000;
  r.gid = 100;
  r.has_stdin = true;
  r.data_token = "tok3n";
  r.tag = "cmd_1";
  SpawnRequest back;
  ASSERT_TRUE(DecodeSpawn(EncodeSpawn(r), back));
  EXPECT_EQ(back.data_token, "tok3n");
  EXPECT_EQ(back.tag, "cmd_1");
  EXPECT_EQ(back.argv, r.argv);
  EXPECT_EQ(back.env, r.env);
  EXPECT_EQ(back.cwd, "/tmp");
  EXPECT_EQ(back.uid, 1000u);
  EXPECT_EQ(back.gid, 100u);
  EXPECT_TRUE(back.has_stdin);
}

TEST(AgentProtocol, HelloListsHeldProcesses) {
  uint32_t version = 0;
  std::string key;
  std::vector<HeldProcess> held;
  ASSERT_TRUE(DecodeHello(EncodeHello("k3y", {{7, "cmd_a"}, {9, "cmd_b"}}), version, key, held));
  EXPECT_EQ(version, kProtocolVersion);
  EXPECT_EQ(key, "k3y");
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[1].channel, 9u);
  EXPECT_EQ(held[1].tag, "cmd_b");
  std::string wire = EncodeHello("k3y", {{7, "cmd_a"}});
  EXPECT_FALSE(DecodeHello(wire.substr(0, wire.size() - 1), version, key, held));
  EXPECT_FALSE(DecodeHello(wire + "x", version, key, held));
  EXPECT_FALSE(
      DecodeHello(EncodeHello(std::string(kMaxAgentKey + 1, 'k'), {}), version, key, held));
}

TEST(AgentProtocol, AHelloOfVersionThreeIsReadAndOlderOrNewerOnesAreNot) {
  uint32_t version = 0;
  std::string key;
  std::vector<HeldProcess> held;
  std::string wire = EncodeHello("k3y", {{7, "cmd_a"}});
  wire[3] = 3;
  ASSERT_TRUE(DecodeHello(wire, version, key, held));
  EXPECT_EQ(version, 3u);
  EXPECT_EQ(key, "k3y");
  ASSERT_EQ(held.size(), 1u);
  for (char other : {char{2}, static_cast<char>(kProtocolVersion + 1)}) {
    wire[3] = other;
    held.clear();
    DecodeHello(wire, version, key, held);
    EXPECT_EQ(version, static_cast<uint32_t>(other));
    EXPECT_TRUE(key.empty());
    EXPECT_TRUE(held.empty());
  }
}

TEST(AgentProtocol, AnAckCarriesSixtyFourBitCountsAndRejectsOtherSizes) {
  Ack ack{(uint64_t{5} << 32) + 7, 9, true};
  Ack back;
  ASSERT_TRUE(DecodeAck(EncodeAck(ack), back));
  EXPECT_EQ(back.stdout_bytes, ack.stdout_bytes);
  EXPECT_EQ(back.stderr_bytes, 9u);
  EXPECT_TRUE(back.ended);
  ASSERT_TRUE(DecodeAck(EncodeAck({0, 0, false}), back));
  EXPECT_FALSE(back.ended);
  std::string wire = EncodeAck(ack);
  EXPECT_FALSE(DecodeAck(wire.substr(1), back));
  EXPECT_FALSE(DecodeAck(wire + "x", back));
  wire[19] = 2;  // ended is 0 or 1
  EXPECT_FALSE(DecodeAck(wire, back));
}

TEST(AgentProtocol, MalformedSpawnIsRejected) {
  SpawnRequest r;
  r.argv = {"true"};
  std::string wire = EncodeSpawn(r);
  SpawnRequest back;
  EXPECT_FALSE(DecodeSpawn(wire.substr(0, wire.size() - 1), back));  // truncated
  EXPECT_FALSE(DecodeSpawn(wire + "x", back));                       // trailing bytes
  SpawnRequest empty;
  EXPECT_FALSE(DecodeSpawn(EncodeSpawn(empty), back));  // no argv
  std::string lying = wire;
  lying[16] = '\x7f';  // argv count far beyond the payload
  EXPECT_FALSE(DecodeSpawn(lying, back));
  std::vector<int32_t> ints;
  EXPECT_FALSE(DecodeInts("abc", 1, ints));
}

}  // namespace
}  // namespace adapt::agent

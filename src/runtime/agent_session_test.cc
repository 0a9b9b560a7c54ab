#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "agent/protocol.h"
#include "os/files.h"
#include "os/process.h"
#include "os/temp_dir.h"
#include "os/unix_socket.h"
#include "runtime/agent_hub.h"

namespace adapt::runtime {
namespace {

using agent::FrameType;

// The far end of the socket, played by the test.
struct FakeAgent {
  os::UniqueFd fd;
  agent::FrameDecoder decoder;

  std::string next_key;  // from the hub's kRekey

  // The next frame; the hub's kRekey is noted (not confirmed) and skipped.
  agent::Frame Read() {
    for (;;) {
      agent::Frame f = ReadAny();
      if (f.type != FrameType::kRekey) return f;
      next_key = f.payload;
    }
  }
  agent::Frame ReadAny() {
    agent::Frame f;
    char buf[4096];
    while (decoder.Pop(f) != agent::FrameDecoder::Next::kFrame) {
      auto n = os::ReadSome(fd.get(), buf, sizeof buf);
      EXPECT_TRUE(n.ok() && *n > 0);
      if (!n.ok() || *n == 0) return f;
      decoder.Feed(std::string_view(buf, *n));
    }
    return f;
  }
  void Send(FrameType t, uint32_t ch, std::string_view payload) {
    ASSERT_TRUE(os::WriteAll(fd.get(), agent::EncodeFrame(t, ch, payload)).ok());
  }
};

// What one channel's callbacks saw.
struct Seen {
  std::mutex mu;
  std::condition_variable cv;
  std::string out, err;
  bool exited = false;
  int exits = 0;  // channels ended, when one Seen serves several
  AgentExit exit;

  AgentCallbacks Callbacks() {
    AgentCallbacks cb;
    cb.output = [this](int stream, std::string_view data) {
      std::lock_guard lock(mu);
      (stream == 1 ? out : err).append(data);
    };
    cb.exit = [this](const AgentExit& e) {
      std::lock_guard lock(mu);
      exit = e;
      exited = true;
      ++exits;
      cv.notify_all();
    };
    return cb;
  }
  bool WaitExit() {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return exited; });
  }
  bool WaitExits(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(10), [&] { return exits >= n; });
  }
};

class AgentSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ + "/agent.sock";
    key_file_ = dir_ + "/agent.key";
    ASSERT_TRUE(os::WriteFileAtomic(key_file_, kKey, 0600).ok());
    ASSERT_TRUE(hub_.Listen("sbx_test", path_, key_file_).ok());
  }
  void TearDown() override { hub_.Close("sbx_test"); }
  static constexpr const char* kKey = "the-agent-key-0123456789";
  FakeAgent Connect(int32_t version = agent::kProtocolVersion,
                    const std::vector<agent::HeldProcess>& held = {},
                    const std::string& key = kKey) {
    FakeAgent a;
    auto fd = os::ConnectUnix(path_);
    EXPECT_TRUE(fd.ok());
    a.fd = std::move(*fd);
    // A hello is the version, the key and the held processes (none: a zero count).
    a.Send(FrameType::kHello, 0,
           version == static_cast<int32_t>(agent::kProtocolVersion)
               ? agent::EncodeHello(key, held)
               : agent::EncodeInts({version, 0}));
    return a;
  }
  // A data connection announcing `token` for `channel`.
  os::UniqueFd Dial(uint32_t channel, const std::string& token) {
    auto fd = os::ConnectUnix(path_);
    EXPECT_TRUE(fd.ok());
    EXPECT_TRUE(os::WriteAll(fd->get(), agent::EncodeFrame(FrameType::kData, channel, token)).ok());
    return std::move(*fd);
  }
  std::shared_ptr<AgentSession> WaitSession() {
    for (int i = 0; i < 500; ++i) {
      if (auto s = hub_.Session("sbx_test")) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return nullptr;
  }

  AgentHub hub_;
  os::TempDir tmp_{"agent-test"};
  const std::string dir_ = tmp_.path();
  std::string path_, key_file_;
};

TEST_F(AgentSessionTest, MultiplexesCommandsAndReportsTheirExits) {
  EXPECT_EQ(hub_.Session("sbx_test"), nullptr);
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);

  agent::SpawnRequest req;
  req.argv = {"echo", "hi"};
  req.has_stdin = true;
  Seen one, two;
  auto ch1 = session->Spawn(req, one.Callbacks());
  auto ch2 = session->Spawn(req, two.Callbacks());
  ASSERT_TRUE(ch1.ok() && ch2.ok());
  EXPECT_NE(*ch1, *ch2);
  ASSERT_TRUE(session->SendStdin(*ch1, "input").ok());
  ASSERT_TRUE(session->Signal(*ch2, 9).ok());

  agent::Frame f = a.Read();
  EXPECT_EQ(f.type, FrameType::kSpawn);
  agent::SpawnRequest got;
  ASSERT_TRUE(agent::DecodeSpawn(f.payload, got));
  EXPECT_EQ(got.argv, req.argv);
  EXPECT_EQ(a.Read().type, FrameType::kSpawn);
  f = a.Read();
  EXPECT_EQ(f.type, FrameType::kStdin);
  EXPECT_EQ(f.channel, *ch1);
  EXPECT_EQ(f.payload, "input");
  f = a.Read();
  EXPECT_EQ(f.type, FrameType::kSignal);
  EXPECT_EQ(f.channel, *ch2);

  // Interleaved output of both channels, and frames for a channel nobody spawned.
  a.Send(FrameType::kStdout, *ch2, "two-out");
  a.Send(FrameType::kStdout, *ch1, "one-");
  a.Send(FrameType::kStdout, 999, "nobody");
  a.Send(FrameType::kStderr, *ch1, "err");
  a.Send(FrameType::kStdout, *ch1, "out");
  a.Send(FrameType::kExit, *ch1, agent::EncodeInts({3, 0}));
  ASSERT_TRUE(one.WaitExit());
  EXPECT_EQ(one.out, "one-out");
  EXPECT_EQ(one.err, "err");
  EXPECT_FALSE(one.exit.lost);
  EXPECT_EQ(one.exit.exit_code, 3);
  EXPECT_EQ(one.exit.signal, 0);

  a.Send(FrameType::kExit, *ch2, agent::EncodeInts({-1, 9}));
  ASSERT_TRUE(two.WaitExit());
  EXPECT_EQ(two.out, "two-out");
  EXPECT_EQ(two.exit.signal, 9);
}

TEST_F(AgentSessionTest, ADroppedConnectionLosesItsCommands) {
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  agent::SpawnRequest req;
  req.argv = {"sleep", "60"};
  Seen seen;
  ASSERT_TRUE(session->Spawn(req, seen.Callbacks()).ok());
  a.fd.reset();
  ASSERT_TRUE(seen.WaitExit());
  EXPECT_TRUE(seen.exit.lost);
  EXPECT_FALSE(session->Ready());
  EXPECT_FALSE(session->Spawn(req, Seen().Callbacks()).ok());
  // The agent reconnects: a new session takes over.
  FakeAgent b = Connect();
  auto again = WaitSession();
  ASSERT_NE(again, nullptr);
  EXPECT_NE(again, session);
}

// A checkpoint's hang-up: adaptd stops writing, the agent sees the end of the stream and
// closes its socket, and only then does Hangup return (a checkpoint must not hold the
// agent's connected socket).
TEST_F(AgentSessionTest, HangupReturnsOnceTheAgentHasDroppedItsEnd) {
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  agent::SpawnRequest req;
  req.argv = {"sleep", "60"};
  Seen seen;
  ASSERT_TRUE(session->Spawn(req, seen.Callbacks()).ok());
  std::atomic<bool> agent_closed{false};
  std::thread agent([&] {
    char buf[4096];
    for (;;) {  // the spawn's frame, the rekey, then the end of the stream
      auto n = os::ReadSome(a.fd.get(), buf, sizeof buf);
      if (!n.ok() || *n == 0) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // an agent slow to close
    agent_closed = true;
    a.fd.reset();
  });
  hub_.Hangup("sbx_test", std::chrono::seconds(30));
  EXPECT_TRUE(agent_closed);
  agent.join();
  EXPECT_FALSE(session->Ready());
  ASSERT_TRUE(seen.WaitExit());
  EXPECT_TRUE(seen.exit.lost);
  // The listener is gone: the agent cannot reconnect until the sandbox listens again.
  EXPECT_FALSE(os::ConnectUnix(path_).ok());
}

// An agent that never closes its end is not waited on past the timeout.
TEST_F(AgentSessionTest, HangupGivesUpOnAnAgentThatKeepsItsEnd) {
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  hub_.Hangup("sbx_test", std::chrono::milliseconds(50));
  EXPECT_FALSE(session->Ready());
  // adaptd's end is shut both ways: the agent reads the end of the stream.
  char buf[4096];
  for (;;) {
    auto n = os::ReadSome(a.fd.get(), buf, sizeof buf);
    ASSERT_TRUE(n.ok());
    if (*n == 0) break;
  }
}

TEST_F(AgentSessionTest, ADataConnectionReachesOnlyTheSpawnWithItsToken) {
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  agent::SpawnRequest req;
  req.argv = {"/.adapt/adapt-agent", "file", "get", "/x"};
  req.data_token = "secret-token";
  Seen seen;
  auto ch = session->Spawn(req, seen.Callbacks());
  ASSERT_TRUE(ch.ok());
  agent::SpawnRequest got;
  ASSERT_TRUE(agent::DecodeSpawn(a.Read().payload, got));
  EXPECT_EQ(got.data_token, "secret-token");
  // A wrong token, or another channel, is dropped; the session stays.
  os::UniqueFd wrong = Dial(*ch, "guessed");
  os::UniqueFd other = Dial(*ch + 1, "secret-token");
  EXPECT_FALSE(session->TakeData(*ch, std::chrono::milliseconds(300)).ok());
  EXPECT_TRUE(session->Ready());
  char c;
  auto n = os::ReadSome(wrong.get(), &c, 1);
  EXPECT_TRUE(!n.ok() || *n == 0);  // closed by adaptd
  // TakeData gave up on the channel above: a new spawn expects its connection.
  auto ch2 = session->Spawn(req, seen.Callbacks());
  ASSERT_TRUE(ch2.ok());
  os::UniqueFd right = Dial(*ch2, "secret-token");
  auto data = session->TakeData(*ch2, std::chrono::seconds(5));
  ASSERT_TRUE(data.ok()) << data.status().message();
  ASSERT_TRUE(os::WriteAll(right.get(), "bytes").ok());
  char buf[5];
  auto got_bytes = os::ReadSome(data->get(), buf, sizeof buf);
  ASSERT_TRUE(got_bytes.ok());
  EXPECT_EQ(std::string(buf, *got_bytes), "bytes");
  // A connection that never comes, then the channel's exit: TakeData answers at once.
  auto ch3 = session->Spawn(req, seen.Callbacks());
  ASSERT_TRUE(ch3.ok());
  a.Send(FrameType::kExit, *ch3, agent::EncodeInts({126, 0}));
  auto none = session->TakeData(*ch3, std::chrono::seconds(30));
  EXPECT_EQ(none.status().code(), Code::kUnavailable);
  // A tool that ran and exited at once: its exit may outrun the connection the agent dialed
  // before starting it, which is still taken.
  auto ch4 = session->Spawn(req, seen.Callbacks());
  ASSERT_TRUE(ch4.ok());
  a.Send(FrameType::kExit, *ch4, agent::EncodeInts({0, 0}));
  ASSERT_TRUE(seen.WaitExits(2));  // ch3's and ch4's
  os::UniqueFd late = Dial(*ch4, "secret-token");
  auto taken = session->TakeData(*ch4, std::chrono::seconds(5));
  EXPECT_TRUE(taken.ok()) << taken.status().message();
  // Every channel ends while `seen` lives: the session's reader would otherwise call into it
  // after the test's locals are gone (a lost exit when the agent's socket closes).
  a.Send(FrameType::kExit, *ch, agent::EncodeInts({0, 0}));
  a.Send(FrameType::kExit, *ch2, agent::EncodeInts({0, 0}));
  EXPECT_TRUE(seen.WaitExits(4));
}

TEST_F(AgentSessionTest, HeldCommandsAreAttachedAgain) {
  FakeAgent a = Connect(agent::kProtocolVersion, {{5, "cmd_kept"}});
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  Seen seen;
  EXPECT_EQ(session->Attach("cmd_other", seen.Callbacks()).status().code(), Code::kNotFound);
  auto ch = session->Attach("cmd_kept", seen.Callbacks());
  ASSERT_TRUE(ch.ok());
  EXPECT_EQ(*ch, 5u);
  agent::Frame f = a.Read();
  EXPECT_EQ(f.type, FrameType::kAttach);
  EXPECT_EQ(f.channel, 5u);
  // New channels never reuse a held one.
  agent::SpawnRequest req;
  req.argv = {"true"};
  Seen fresh;
  auto next = session->Spawn(req, fresh.Callbacks());
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, 5u);
  a.Send(FrameType::kStdout, 5, "while away");
  a.Send(FrameType::kExit, 5, agent::EncodeInts({7, 0}));
  ASSERT_TRUE(seen.WaitExit());
  EXPECT_EQ(seen.out, "while away");
  EXPECT_EQ(seen.exit.exit_code, 7);
  EXPECT_FALSE(seen.exit.lost);
  // Attached once only.
  EXPECT_FALSE(session->Attach("cmd_kept", Seen().Callbacks()).ok());
  // The fresh channel ends while `fresh` lives (see
  // ADataConnectionReachesOnlyTheSpawnWithItsToken).
  a.Send(FrameType::kExit, *next, agent::EncodeInts({0, 0}));
  EXPECT_TRUE(fresh.WaitExit());
}

// A hello (which takes the agent's key) naming one channel for two commands, or a channel past
// kMaxHeldChannel, attaches neither twice: one command's output never reaches another's
// callbacks, and new channels do not wrap round to 0.
TEST_F(AgentSessionTest, AHelloNamingAChannelTwiceOrOutOfRangeAttachesItOnce) {
  FakeAgent a = Connect(agent::kProtocolVersion, {{5, "cmd_a"},
                                                  {5, "cmd_b"},
                                                  {AgentSession::kMaxHeldChannel + 1, "cmd_far"},
                                                  {0xFFFFFFFEu, "cmd_farther"}});
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  Seen first;
  auto ch = session->Attach("cmd_a", first.Callbacks());
  ASSERT_TRUE(ch.ok()) << ch.status().message();
  EXPECT_EQ(*ch, 5u);
  EXPECT_EQ(session->Attach("cmd_b", Seen().Callbacks()).status().code(), Code::kNotFound);
  EXPECT_EQ(session->Attach("cmd_far", Seen().Callbacks()).status().code(), Code::kNotFound);
  EXPECT_EQ(session->Attach("cmd_farther", Seen().Callbacks()).status().code(), Code::kNotFound);
  agent::SpawnRequest req;
  req.argv = {"true"};
  Seen fresh;
  auto next = session->Spawn(req, fresh.Callbacks());
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, 5u);
  EXPECT_LE(*next, AgentSession::kMaxHeldChannel + 1);
  a.Send(FrameType::kExit, 5, agent::EncodeInts({3, 0}));
  ASSERT_TRUE(first.WaitExit());
  EXPECT_EQ(first.exit.exit_code, 3);
  a.Send(FrameType::kExit, *next, agent::EncodeInts({0, 0}));
  EXPECT_TRUE(fresh.WaitExit());
}

TEST_F(AgentSessionTest, AMisbehavingPeerIsDropped) {
  FakeAgent wrong = Connect(agent::kProtocolVersion + 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(hub_.Session("sbx_test"), nullptr);

  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  std::string garbage = agent::EncodeFrame(FrameType::kStdout, 1, "x");
  garbage[4] = 99;  // no such frame type
  ASSERT_TRUE(os::WriteAll(a.fd.get(), garbage).ok());
  for (int i = 0; i < 500 && session->Ready(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(session->Ready());
}

// An agent of version 3 (its sandbox ran on across an upgrade of adaptd) is still served; it
// knows no kAck, which would end its connection as a frame of an unknown type.
TEST_F(AgentSessionTest, AnAgentOfVersionThreeIsServedAndSentNoAcknowledgment) {
  for (uint32_t version : {3u, agent::kProtocolVersion}) {
    SCOPED_TRACE(version);
    FakeAgent a;
    auto fd = os::ConnectUnix(path_);
    ASSERT_TRUE(fd.ok());
    a.fd = std::move(*fd);
    std::string hello = agent::EncodeHello(kKey, {});
    hello[3] = static_cast<char>(version);  // the version, a big-endian u32, comes first
    a.Send(FrameType::kHello, 0, hello);
    std::shared_ptr<AgentSession> session;
    for (int i = 0; i < 500 && !(session && session->Ready()); ++i) {
      session = hub_.Session("sbx_test");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_NE(session, nullptr);
    ASSERT_TRUE(session->Ready());
    ASSERT_TRUE(session->Acknowledge(1, {5, 6, true}).ok());
    agent::SpawnRequest req;
    req.argv = {"true"};
    Seen seen;
    ASSERT_TRUE(session->Spawn(req, seen.Callbacks()).ok());
    agent::Frame f = a.Read();
    if (version != 3) {
      ASSERT_EQ(f.type, FrameType::kAck);
      EXPECT_EQ(f.channel, 1u);
      agent::Ack ack;
      ASSERT_TRUE(agent::DecodeAck(f.payload, ack));
      EXPECT_EQ(ack.stdout_bytes, 5u);
      EXPECT_EQ(ack.stderr_bytes, 6u);
      EXPECT_TRUE(ack.ended);
      f = a.Read();
    }
    ASSERT_EQ(f.type, FrameType::kSpawn);
    // Ended here, so that no callback of the session reaches `seen` after this iteration.
    a.Send(FrameType::kExit, f.channel, agent::EncodeInts({0, 0}));
    ASSERT_TRUE(seen.WaitExit());
  }
}

TEST_F(AgentSessionTest, AHelloWithoutTheAgentsKeyTakesNothingOver) {
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  // The sandbox's root poses as the agent: with no key, a wrong one, an older protocol.
  FakeAgent none = Connect(agent::kProtocolVersion, {}, "");
  FakeAgent wrong = Connect(agent::kProtocolVersion, {}, "the-agent-key-0123456780");
  FakeAgent older = Connect(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(session->Ready());
  EXPECT_EQ(hub_.Session("sbx_test"), session);
  agent::SpawnRequest req;
  req.argv = {"true"};
  Seen seen;
  auto ch = session->Spawn(req, seen.Callbacks());
  ASSERT_TRUE(ch.ok());
  EXPECT_EQ(a.Read().type, FrameType::kSpawn);
  // The channel ends while `seen` lives.
  a.Send(FrameType::kExit, *ch, agent::EncodeInts({0, 0}));
  EXPECT_TRUE(seen.WaitExit());
}

TEST_F(AgentSessionTest, EverySessionHandsTheAgentAFreshKey) {
  FakeAgent a = Connect();
  auto session = WaitSession();
  ASSERT_NE(session, nullptr);
  agent::Frame rekey = a.ReadAny();
  ASSERT_EQ(rekey.type, FrameType::kRekey);
  ASSERT_GE(rekey.payload.size(), 32u);
  EXPECT_NE(rekey.payload, kKey);
  // Until the agent confirms, both keys are kept (a crash then loses neither).
  EXPECT_EQ(*os::ReadFile(key_file_), std::string(kKey) + "\n" + rekey.payload);
  a.Send(FrameType::kRekey, 0, "");
  for (int i = 0; i < 500 && *os::ReadFile(key_file_) != rekey.payload; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(*os::ReadFile(key_file_), rekey.payload);
  // The old key opens nothing any more; the new one does.
  FakeAgent old = Connect(agent::kProtocolVersion, {}, kKey);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(hub_.Session("sbx_test"), session);
  FakeAgent b = Connect(agent::kProtocolVersion, {}, rekey.payload);
  for (int i = 0; i < 500 && hub_.Session("sbx_test") == session; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_NE(hub_.Session("sbx_test"), session);
}

TEST_F(AgentSessionTest, SilentConnectionsAreCappedAndTheAgentStillGetsIn) {
  std::vector<os::UniqueFd> silent;
  for (int i = 0; i < 200; ++i) {
    auto fd = os::ConnectUnix(path_);
    if (fd.ok()) silent.push_back(std::move(*fd));
  }
  // Beyond the cap the hub closes connections at once: they read end of file.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int closed = 0;
  for (auto& fd : silent) {
    auto ready = os::WaitReadable({fd.get()}, 0);
    if (ready.ok() && (*ready)[0]) ++closed;
  }
  EXPECT_GE(closed, static_cast<int>(silent.size()) - AgentHub::kMaxPendingConnections - 16);
  silent.clear();  // the pending ones end; the agent's hello is heard again
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  FakeAgent a = Connect();
  EXPECT_NE(WaitSession(), nullptr);
}

TEST_F(AgentSessionTest, JustAfterTheListenACallerWaitsForTheAgent) {
  // The agent says hello a moment after the listen: within the window the caller has it.
  std::thread late([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    FakeAgent a = Connect();
    std::this_thread::sleep_for(std::chrono::seconds(2));
  });
  EXPECT_EQ(hub_.Session("sbx_test"), nullptr);
  auto session = hub_.AwaitFirstSession("sbx_test");
  EXPECT_NE(session, nullptr);
  EXPECT_EQ(session, hub_.Session("sbx_test"));
  late.join();
  // A sandbox with no listener (no agent): nullptr at once, for `runsc exec`.
  hub_.Close("sbx_test");
  EXPECT_EQ(hub_.AwaitFirstSession("sbx_test"), nullptr);
}

}  // namespace
}  // namespace adapt::runtime

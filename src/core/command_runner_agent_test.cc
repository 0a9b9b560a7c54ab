// CommandRunner with commands served by a sandbox's agent (a fake one, played by the test over
// the agent hub's socket): the output so far is written to the command's record while it runs,
// bounded to the latest kSavedBytesPerStream of each stream, a command's stdin does not hold
// its caller, and a command attached again after a restart starts from what its record holds.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "agent/protocol.h"
#include "base/time.h"
#include "core/command_runner.h"
#include "os/files.h"
#include "os/process.h"
#include "os/temp_dir.h"
#include "os/unix_socket.h"
#include "runtime/agent_hub.h"
#include "runtime/fake_runtime.h"
#include "store/memory_store.h"

namespace adapt::core {
namespace {

using agent::FrameType;

constexpr char kSandbox[] = "sbx_test";
constexpr char kKey[] = "the-agent-key-0123456789";

// A command of sandbox kSandbox, running through its agent, as the store holds it.
store::CommandRecord RunningRecord(const std::string& id) {
  store::CommandRecord c;
  c.id = id;
  c.org_id = "org_a";
  c.sandbox_id = kSandbox;
  c.status = "running";
  c.served_by = "agent";
  c.timeout_seconds = 600;
  c.created_at = NowMillis();
  return c;
}

// The runtime whose sandbox's agent is the hub's session.
class AgentRuntime : public runtime::FakeRuntime {
 public:
  explicit AgentRuntime(runtime::AgentHub& hub) : hub_(hub) {}
  std::shared_ptr<runtime::AgentSession> Agent(const std::string& id) override {
    return hub_.Session(id);
  }

 private:
  runtime::AgentHub& hub_;
};

class CommandRunnerAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/agent.key", kKey, 0600).ok());
    ASSERT_TRUE(hub_.Listen(kSandbox, dir_ + "/agent.sock", dir_ + "/agent.key").ok());
  }
  void TearDown() override {
    runner_.reset();
    hub_.Close(kSandbox);
  }

  // Connects as the agent, holding `held` from an earlier connection; waits for the session.
  void Connect(const std::vector<agent::HeldProcess>& held = {}) {
    auto fd = os::ConnectUnix(dir_ + "/agent.sock");
    ASSERT_TRUE(fd.ok());
    agent_ = std::move(*fd);
    Send(FrameType::kHello, 0, agent::EncodeHello(kKey, held));
    for (int i = 0; i < 500 && !hub_.Session(kSandbox); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_NE(hub_.Session(kSandbox), nullptr);
  }
  void Send(FrameType t, uint32_t channel, std::string_view payload) {
    ASSERT_TRUE(os::WriteAll(agent_.get(), agent::EncodeFrame(t, channel, payload)).ok());
  }
  // The next frame adaptd sent that is not a rekey.
  agent::Frame Read() {
    agent::Frame f;
    char buf[4096];
    for (;;) {
      while (decoder_.Pop(f) != agent::FrameDecoder::Next::kFrame) {
        auto n = os::ReadSome(agent_.get(), buf, sizeof buf);
        EXPECT_TRUE(n.ok() && *n > 0);
        if (!n.ok() || *n == 0) return f;
        decoder_.Feed(std::string_view(buf, *n));
      }
      if (f.type != FrameType::kRekey) return f;
    }
  }

  // The next frame, which must be an acknowledgment.
  agent::Ack NextAck() {
    agent::Frame f = Read();
    agent::Ack ack;
    EXPECT_EQ(f.type, FrameType::kAck);
    EXPECT_TRUE(agent::DecodeAck(f.payload, ack));
    return ack;
  }

  store::CommandRecord Record(const std::string& id) { return RunningRecord(id); }
  // Command `id` started through the connected agent, as stored; its channel.
  uint32_t Started(const std::string& id, const std::vector<std::string>& secrets) {
    store::CommandRecord c = Record(id);
    EXPECT_TRUE(store_.PutCommand(c).ok());
    agent::SpawnRequest spawn;
    spawn.argv = {"sh", "-c", "anything"};
    EXPECT_TRUE(runner_->StartViaAgent(c, hub_.Session(kSandbox), spawn, "", 600, secrets).ok());
    agent::Frame f = Read();
    EXPECT_EQ(f.type, FrameType::kSpawn);
    return f.channel;
  }
  store::CommandRecord Stored(const std::string& id) {
    auto c = store_.GetCommand("org_a", kSandbox, id);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? *c : store::CommandRecord{};
  }
  // Polls the stored record until `done` holds (10 s at most).
  template <typename Fn>
  store::CommandRecord StoredWhen(const std::string& id, Fn done) {
    store::CommandRecord c;
    for (int i = 0; i < 1000; ++i) {
      c = Stored(id);
      if (done(c)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return c;
  }

  os::TempDir tmp_{"runner-test"};
  const std::string dir_ = tmp_.path();
  runtime::AgentHub hub_;
  AgentRuntime runtime_{hub_};
  store::MemoryStore store_;
  std::unique_ptr<CommandRunner> runner_ = std::make_unique<CommandRunner>(store_, runtime_);
  os::UniqueFd agent_;
  agent::FrameDecoder decoder_;
};

TEST_F(CommandRunnerAgentTest, ARunningCommandsOutputIsSavedBoundedAndRedacted) {
  Connect();
  store::CommandRecord c = Record("cmd_saved");
  const uint32_t channel = Started(c.id, {"s3cret"});

  Send(FrameType::kStdout, channel, "token s3cret\n");
  Send(FrameType::kStderr, channel, "warning\n");
  store::CommandRecord saved = StoredWhen(
      c.id, [](const auto& r) { return !r.stdout_text.empty() && !r.stderr_text.empty(); });
  EXPECT_EQ(saved.status, "running");
  EXPECT_EQ(saved.stdout_text, "token [REDACTED]\n");
  EXPECT_EQ(saved.stderr_text, "warning\n");
  EXPECT_FALSE(saved.truncated);

  // More than a save holds: the latest kSavedBytesPerStream, marked truncated.
  std::string flood(CommandRunner::kSavedBytesPerStream, 'x');
  Send(FrameType::kStdout, channel, flood);
  Send(FrameType::kStdout, channel, "end\n");
  saved = StoredWhen(c.id, [](const auto& r) { return r.stdout_text.ends_with("end\n"); });
  EXPECT_EQ(saved.status, "running");
  EXPECT_EQ(saved.stdout_text.size(), CommandRunner::kSavedBytesPerStream);
  EXPECT_TRUE(saved.truncated);

  // The end is written once, with everything kept (up to kKeptBytesPerStream).
  Send(FrameType::kExit, channel, agent::EncodeInts({0, 0}));
  store::CommandRecord done = StoredWhen(c.id, [](const auto& r) { return r.status != "running"; });
  EXPECT_EQ(done.status, "exited");
  EXPECT_EQ(done.stdout_text, "token [REDACTED]\n" + flood + "end\n");
  EXPECT_FALSE(done.truncated);
}

// The sandbox's root can have its agent take a command's stdin as slowly as it likes: the
// stdin goes from a thread of the command's, so the caller (an API worker) is not held.
TEST_F(CommandRunnerAgentTest, AStdinTheAgentDoesNotReadDoesNotHoldTheCaller) {
  Connect();
  store::CommandRecord c = Record("cmd_stdin");
  ASSERT_TRUE(store_.PutCommand(c).ok());
  agent::SpawnRequest spawn;
  spawn.argv = {"cat"};
  const std::string input(8 << 20, 'i');  // far more than the connection holds
  auto session = hub_.Session(kSandbox);
  ASSERT_TRUE(runner_->StartViaAgent(c, session, spawn, input, 600, {}).ok());
  // Returned while the agent has read nothing. Sent by the caller, the stdin held it until
  // the send's limit had passed, and the session was dropped then.
  EXPECT_TRUE(session->Ready());
  agent::Frame f = Read();
  ASSERT_EQ(f.type, FrameType::kSpawn);
  const uint32_t channel = f.channel;
  // Read now: the whole stdin, then its end.
  size_t got = 0;
  bool same = true;
  for (;;) {
    f = Read();
    ASSERT_EQ(f.type, FrameType::kStdin);
    ASSERT_EQ(f.channel, channel);
    if (f.payload.empty()) break;
    same = same && f.payload.find_first_not_of('i') == std::string::npos;
    got += f.payload.size();
  }
  EXPECT_EQ(got, input.size());
  EXPECT_TRUE(same);
  Send(FrameType::kExit, channel, agent::EncodeInts({0, 0}));
  store::CommandRecord done = StoredWhen(c.id, [](const auto& r) { return r.status != "running"; });
  EXPECT_EQ(done.status, "exited");
}

// The sandbox's root can stop its agent: a command killed at its timeout whose end never comes
// is recorded lost once the wait for it runs out (its watcher spun on the passed deadline).
TEST_F(CommandRunnerAgentTest, AKilledCommandWhoseEndTheAgentNeverTellsIsRecordedLost) {
  runner_->SetUnansweredKillLimit(std::chrono::milliseconds(300));
  Connect();
  store::CommandRecord c = Record("cmd_stalled");
  c.timeout_seconds = 1;
  ASSERT_TRUE(store_.PutCommand(c).ok());
  agent::SpawnRequest spawn;
  spawn.argv = {"sleep", "600"};
  ASSERT_TRUE(runner_->StartViaAgent(c, hub_.Session(kSandbox), spawn, "", 1, {}).ok());
  agent::Frame f = Read();
  ASSERT_EQ(f.type, FrameType::kSpawn);
  f = Read();  // at the timeout
  ASSERT_EQ(f.type, FrameType::kSignal);
  std::vector<int32_t> sig;
  ASSERT_TRUE(agent::DecodeInts(f.payload, 1, sig));
  EXPECT_EQ(sig[0], SIGKILL);
  // No exit frame: the agent is stopped.
  store::CommandRecord done = StoredWhen(c.id, [](const auto& r) { return r.status != "running"; });
  EXPECT_EQ(done.status, "lost");
  EXPECT_FALSE(done.exit_code.has_value());
  EXPECT_NE(done.error.find("did not report the command's end"), std::string::npos) << done.error;
}

// The agent's connection drops under a command: the answer says whether the sandbox's end
// took it, before that end's own reason reaches SandboxEnded (which rewrites it later).
TEST_F(CommandRunnerAgentTest, ACommandLostWithItsAgentSaysWhetherTheSandboxHadEnded) {
  for (std::string status : {"running", "completed"}) {
    SCOPED_TRACE(status);
    store::SandboxRecord sandbox;
    sandbox.id = kSandbox;
    sandbox.org_id = "org_a";
    sandbox.status = status;
    if (status == "running") {
      ASSERT_TRUE(store_.CreateOrg({"org_a", "acme", false, NowMillis()}).ok());
      auto created = store_.CreateSandbox(sandbox, std::nullopt);
      ASSERT_TRUE(created.ok()) << created.status().message();
      runtime_.AddRunning(kSandbox);
    } else {
      ASSERT_TRUE(store_.UpdateSandbox(sandbox, {"running"}).ok());
    }
    Connect();
    store::CommandRecord c = Record("cmd_" + status);
    ASSERT_TRUE(store_.PutCommand(c).ok());
    agent::SpawnRequest spawn;
    spawn.argv = {"sleep", "600"};
    ASSERT_TRUE(runner_->StartViaAgent(c, hub_.Session(kSandbox), spawn, "", 600, {}).ok());
    ASSERT_EQ(Read().type, FrameType::kSpawn);
    agent_.reset();  // the agent's connection drops
    store::CommandRecord done =
        StoredWhen(c.id, [](const auto& r) { return r.status != "running"; });
    EXPECT_EQ(done.status, "lost");
    EXPECT_EQ(done.error,
              status == "running"
                  ? "the connection to the sandbox's agent was lost while the command ran; its "
                    "outcome is unknown"
                  : "the sandbox stopped running while the command ran (it is completed now); its "
                    "outcome is unknown");
    decoder_ = agent::FrameDecoder();
  }
}

TEST_F(CommandRunnerAgentTest, AReattachedCommandStartsFromTheOutputItsRecordHolds) {
  // As the previous adaptd left it: running, with what it had saved.
  store::CommandRecord c = Record("cmd_kept");
  c.stdout_text = "before\n";
  c.stderr_text = "err before\n";
  ASSERT_TRUE(store_.PutCommand(c).ok());
  Connect({{5, c.id}});
  runner_->Reattach(c, {}, std::chrono::seconds(10));
  agent::Frame f = Read();
  ASSERT_EQ(f.type, FrameType::kAttach);
  ASSERT_EQ(f.channel, 5u);
  // A follower sees the saved output first.
  auto tap = runner_->Follow(c.id);
  ASSERT_NE(tap, nullptr);
  std::string out, err;
  ASSERT_TRUE(tap->Next(out, err, std::chrono::seconds(5)));
  EXPECT_EQ(out, "before\n");
  EXPECT_EQ(err, "err before\n");

  Send(FrameType::kStdout, 5, "after\n");
  Send(FrameType::kExit, 5, agent::EncodeInts({0, 0}));
  store::CommandRecord done = StoredWhen(c.id, [](const auto& r) { return r.status != "running"; });
  EXPECT_EQ(done.status, "exited");
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_EQ(done.stdout_text, "before\nafter\n");
  EXPECT_EQ(done.stderr_text, "err before\n");
  // Counted from the attach: the agent is told of what came since, and of the exit.
  agent::Ack ack = NextAck();
  EXPECT_EQ(ack.stdout_bytes, 6u);
  EXPECT_EQ(ack.stderr_bytes, 0u);
  EXPECT_TRUE(ack.ended);
}

// What is durable is acknowledged to the agent (which keeps the rest for an adaptd that
// attaches after a crash), and only that: the start of a secret held back from a save is not.
TEST_F(CommandRunnerAgentTest, TheAgentIsToldWhatOfTheOutputAndExitIsRecorded) {
  Connect();
  store::CommandRecord c = Record("cmd_acked");
  const uint32_t channel = Started(c.id, {"s3cret"});

  Send(FrameType::kStdout, channel, "abc s3c");
  StoredWhen(c.id, [](const auto& r) { return r.stdout_text == "abc "; });
  agent::Ack ack = NextAck();
  EXPECT_EQ(ack.stdout_bytes, 4u);  // "s3c" may begin the secret: not saved yet
  EXPECT_FALSE(ack.ended);

  Send(FrameType::kStdout, channel, "ret\n");
  Send(FrameType::kStderr, channel, "warning\n");
  StoredWhen(c.id, [](const auto& r) {
    return r.stdout_text == "abc [REDACTED]\n" && r.stderr_text == "warning\n";
  });
  uint64_t out = 0, err = 0;
  while (out < 7 || err < 8) {
    ack = NextAck();
    ASSERT_FALSE(ack.ended);
    out += ack.stdout_bytes;
    err += ack.stderr_bytes;
  }
  EXPECT_EQ(out, 7u);
  EXPECT_EQ(err, 8u);

  Send(FrameType::kExit, channel, agent::EncodeInts({3, 0}));
  store::CommandRecord done = StoredWhen(c.id, [](const auto& r) { return r.status != "running"; });
  EXPECT_EQ(done.exit_code, 3);
  ack = NextAck();
  EXPECT_EQ(ack.stdout_bytes, 0u);
  EXPECT_EQ(ack.stderr_bytes, 0u);
  EXPECT_TRUE(ack.ended);
}

// The child's part of the test below: its exit status says what went wrong.
[[noreturn]] void NoThreadChild() {
  store::MemoryStore store;
  runtime::FakeRuntime runtime;
  auto runner = std::make_unique<CommandRunner>(store, runtime);
  store::CommandRecord c = RunningRecord("cmd_nothread");
  if (!store.PutCommand(c).ok()) ::_exit(10);
  rlimit none{0, 0};
  if (::setgid(65534) != 0 || ::setuid(65534) != 0 || ::setrlimit(RLIMIT_NPROC, &none) != 0)
    ::_exit(11);
  runner->Reattach(c, {}, std::chrono::seconds(1));
  auto ended = store.GetCommand("org_a", kSandbox, c.id);
  if (!ended.ok() || ended->status != "lost") ::_exit(12);
  if (ended->error.find("no thread could be started") == std::string::npos) ::_exit(13);
  runner.reset();
  ::_exit(0);
}

// The real fault, in a child process: a user at its RLIMIT_NPROC gets no thread (root is
// exempt, so the child becomes nobody). A command whose watcher cannot start ends "lost" with
// the reason, and the runner still closes (it waits for every command it registered). The
// child runs this test binary afresh (exec right after fork): a lock another test's thread
// held at the fork (the logger's) would hang a plain forked child.
TEST(CommandRunnerThreads, ACommandWithNoThreadToFollowItEndsLostAndTheRunnerCloses) {
  if (std::getenv("ADAPT_NO_THREAD_CHILD")) NoThreadChild();
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to become nobody (CI and test.sh run as root)";
  char self[] = "/proc/self/exe";
  char filter[] =
      "--gtest_filter=CommandRunnerThreads."
      "ACommandWithNoThreadToFollowItEndsLostAndTheRunnerCloses";
  char* const argv[] = {self, filter, nullptr};
  char child_env[] = "ADAPT_NO_THREAD_CHILD=1";
  std::vector<char*> env{child_env};
  for (char** e = environ; *e; ++e) env.push_back(*e);
  env.push_back(nullptr);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::execve(argv[0], argv, env.data());
    ::_exit(14);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 2000 && done == 0; ++i) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "the runner never closed: the command stayed registered";
  }
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: no record, 11: no nobody, 12: not lost, 13: no reason, 14: no exec";
}

}  // namespace
}  // namespace adapt::core

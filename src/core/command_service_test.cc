// CommandService over a MemoryStore and a FakeRuntime whose exec runs the command as a host
// process: its verbs (Start, Get, List, Kill, AwaitEnd) and what they record, and the start-up
// reconciliation (the commands a previous adaptd left running are lost with it).
#include "core/command_service.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "core/core_test_fixture.h"
#include "core/operation.h"
#include "core/sandbox_operations.h"
#include "os/process.h"

namespace adapt::core {
namespace {

using namespace std::chrono_literals;
using Op = runtime::FakeRuntime::Op;

// A FakeRuntime whose exec starts `argv` on the host, its stdio on pipes, and whose KillExec
// kills it: the runner reads, times and kills a real process, in milliseconds.
class HostExecRuntime : public runtime::FakeRuntime {
 public:
  Result<runtime::ExecProcess> Exec(const runtime::ExecRequest& request) override {
    // The fake records the call, and fails it when a test scripted that; else Unsupported.
    auto scripted = FakeRuntime::Exec(request);
    if (scripted.status().code() != Code::kUnsupported) return scripted.status();
    last_exec_ = request;
    ASSIGN_OR_RETURN(os::Pipe in, os::MakePipe());
    ASSIGN_OR_RETURN(os::Pipe out, os::MakePipe());
    ASSIGN_OR_RETURN(os::Pipe err, os::MakePipe());
    os::SpawnOptions o;
    o.stdin_fd = in.read.get();
    o.stdout_fd = out.write.get();
    o.stderr_fd = err.write.get();
    ASSIGN_OR_RETURN(pid_t pid, os::Spawn(request.argv, o));
    runtime::ExecProcess p;
    p.pid = pid;
    p.stdin_fd = std::move(in.write);
    p.stdout_fd = std::move(out.read);
    p.stderr_fd = std::move(err.read);
    p.tree_id = std::to_string(pid);
    return p;
  }
  Status KillExec(const std::string& sandbox_id, const std::string& tree_id) override {
    RETURN_IF_ERROR(FakeRuntime::KillExec(sandbox_id, tree_id));
    return os::Signal(std::stoi(tree_id), SIGKILL);
  }
  Status TerminateExec(const std::string& /*sandbox_id*/, const std::string& tree_id) override {
    ++terminated_;
    return os::Signal(std::stoi(tree_id), SIGTERM);
  }

  runtime::ExecRequest last_exec_;
  std::atomic<int> terminated_{0};
};

class CommandServiceTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    waiter_ = std::make_unique<Waiter>(events_, workers_);
    service_ = std::make_unique<CommandService>(store_, exec_, *images_);
    service_->set_waiter(&events_, waiter_.get());
  }
  void TearDown() override {
    service_.reset();  // kills what still runs
    waiter_->Shutdown();
    workers_.join();
    CoreTest::TearDown();
  }

  Principal Caller() { return Principal{org_, "key_1", false}; }

  RunCommandRequest Shell(const std::string& line) {
    RunCommandRequest req;
    req.argv = {"/bin/sh", "-c", line};
    return req;
  }

  std::string Started(const std::string& sandbox_id, RunCommandRequest req) {
    auto started = service_->Start(Caller(), sandbox_id, std::move(req));
    EXPECT_TRUE(started.ok()) << started.status().message();
    return started.ok() ? started->id : "";
  }

  // Parks on the command's end as REST and MCP do, and blocks the test until it is over.
  Waiter::End AwaitEnd(const std::string& id, std::chrono::milliseconds within = 10s) {
    std::promise<Waiter::End> ended;
    service_->AwaitEnd(id, Waiter::Clock::now() + within,
                       [&ended](Waiter::End how) { ended.set_value(how); });
    return ended.get_future().get();
  }

  Command Finished(const std::string& sandbox_id, const std::string& id) {
    EXPECT_EQ(AwaitEnd(id), Waiter::End::kReady);
    auto outcome = service_->Outcome(Caller(), sandbox_id, id);
    EXPECT_TRUE(outcome.ok()) << outcome.status().message();
    EXPECT_TRUE(outcome.ok() && outcome->finished);
    return outcome.ok() ? outcome->command : Command{};
  }

  // A command as the service records it while it runs, served by `served_by`.
  store::CommandRecord RunningCommand(const std::string& sandbox_id,
                                      const std::string& served_by = "runsc-exec") {
    store::CommandRecord c;
    c.id = NewId("cmd");
    c.org_id = org_;
    c.sandbox_id = sandbox_id;
    c.status = "running";
    c.argv = {"sleep", "60"};
    c.served_by = served_by;
    c.created_at = NowMillis();
    EXPECT_TRUE(store_.PutCommand(c).ok());
    return c;
  }

  store::CommandRecord StoredCommand(const std::string& sandbox_id, const std::string& id) {
    auto got = store_.GetCommand(org_, sandbox_id, id);
    EXPECT_TRUE(got.ok()) << got.status().message();
    return got.ok() ? *got : store::CommandRecord{};
  }

  HostExecRuntime exec_;
  boost::asio::thread_pool workers_{2};
  std::unique_ptr<Waiter> waiter_;
  std::unique_ptr<CommandService> service_;
};

TEST_F(CommandServiceTest, ACommandRunsThenItsEndAndOutputAreRecorded) {
  auto sandbox = Insert(NewSandbox("running"));
  RunCommandRequest req = Shell("echo out; echo err >&2; exit 3");
  req.cwd = "/tmp";
  req.env = {{"GREETING", "hi"}};
  req.timeout_seconds = 30;
  std::string id = Started(sandbox.id, req);
  EXPECT_EQ(exec_.last_exec_.cwd, "/tmp");
  EXPECT_EQ(exec_.last_exec_.env, (std::vector<std::string>{"GREETING=hi"}));

  Command c = Finished(sandbox.id, id);
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.sandbox_id, sandbox.id);
  EXPECT_EQ(c.status, "exited");
  EXPECT_EQ(c.termination_reason, "exited");
  EXPECT_EQ(c.exit_code, 3);
  EXPECT_FALSE(c.signal.has_value());
  EXPECT_EQ(c.stdout_text, "out\n");
  EXPECT_EQ(c.stderr_text, "err\n");
  EXPECT_FALSE(c.truncated);
  EXPECT_EQ(c.argv, req.argv);
  EXPECT_EQ(c.cwd, "/tmp");
  EXPECT_EQ(c.timeout_seconds, 30);
  EXPECT_EQ(c.served_by, "runsc-exec");
  ASSERT_TRUE(c.finished_at.has_value());
  EXPECT_GE(*c.finished_at, c.started_at);

  auto stored = StoredCommand(sandbox.id, id);
  EXPECT_EQ(stored.status, "exited");
  EXPECT_EQ(stored.exit_code, 3);
  EXPECT_EQ(stored.stdout_text, "out\n");
  auto got = service_->Get(Caller(), sandbox.id, id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->status, "exited");
  EXPECT_EQ(got->stderr_text, "err\n");
}

// A watcher that throws (a bug) leaves nothing that could time the command out or kill it on
// request, so the command is killed as it is recorded lost with the error.
TEST_F(CommandServiceTest, AWatcherThatThrowsRecordsTheCommandLostAndKillsIt) {
  auto sandbox = Insert(NewSandbox("running"));
  const std::string pidfile = ::testing::TempDir() + "adapt-watch-fault-" + NewId("t") + ".pid";
  std::string id = Started(sandbox.id, Shell("echo $$ > " + pidfile + ".tmp; mv " + pidfile +
                                             ".tmp " + pidfile + "; exec sleep 60"));
  pid_t pid = 0;
  for (int i = 0; i < 500 && pid == 0; ++i) {
    std::ifstream(pidfile) >> pid;
    if (pid == 0) std::this_thread::sleep_for(10ms);
  }
  ASSERT_GT(pid, 0);
  std::remove(pidfile.c_str());
  exec_.ThrowNext(Op::kKillExec, "kill blew up");
  ASSERT_TRUE(service_->Kill(Caller(), sandbox.id, id).ok());
  Command c = Finished(sandbox.id, id);
  EXPECT_EQ(c.status, "lost");
  EXPECT_NE(c.error.find("kill blew up"), std::string::npos) << c.error;
  EXPECT_EQ(StoredCommand(sandbox.id, id).status, "lost");
  // The process was killed (and reaped by its waiter), not left to run its 60 s.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {
    gone = ::kill(pid, 0) != 0 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(gone);
}

TEST_F(CommandServiceTest, WhileItRunsGetShowsTheOutputSoFar) {
  auto sandbox = Insert(NewSandbox("running"));
  std::string id = Started(sandbox.id, Shell("echo early; sleep 60"));
  Command c;
  // A hang guard, well below the sleep: a loaded machine (ASan, parallel tests) can take
  // seconds to run the shell.
  for (int i = 0; i < 3000 && c.stdout_text.empty(); ++i) {
    std::this_thread::sleep_for(10ms);
    auto got = service_->Get(Caller(), sandbox.id, id);
    ASSERT_TRUE(got.ok()) << got.status().message();
    c = *got;
  }
  EXPECT_EQ(c.status, "running");
  EXPECT_EQ(c.stdout_text, "early\n");
  EXPECT_FALSE(c.exit_code.has_value());
  EXPECT_FALSE(c.finished_at.has_value());
  EXPECT_EQ(StoredCommand(sandbox.id, id).status, "running");
  auto outcome = service_->Outcome(Caller(), sandbox.id, id);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->finished);
  EXPECT_EQ(AwaitEnd(id, 50ms), Waiter::End::kDeadline);
}

TEST_F(CommandServiceTest, OnlyTheLatestMebibyteOfEachStreamIsKeptAndSecretsAreRedacted) {
  auto r = NewSandbox("running");
  r.env = {{"TOKEN", "hunter22"}};
  auto sandbox = Insert(r);
  std::string id =
      Started(sandbox.id, Shell("head -c 3000000 /dev/zero | tr '\\0' a; echo hunter22 >&2"));
  Command c = Finished(sandbox.id, id);
  EXPECT_EQ(c.stdout_text.size(), CommandRunner::kKeptBytesPerStream);
  EXPECT_EQ(c.stdout_text.find_first_not_of('a'), std::string::npos);
  EXPECT_TRUE(c.truncated);
  EXPECT_EQ(c.stderr_text, "[REDACTED]\n");
  EXPECT_TRUE(StoredCommand(sandbox.id, id).truncated);
}

// The answer that waits on a command's end is built from the final record its runner wrote,
// not read back from the store: a row changed after that write does not show in it (nothing
// else writes it; the change only tells where the answer came from). Get reads the store.
TEST_F(CommandServiceTest, TheAnswerToACommandThatJustEndedIsTheRecordItsRunnerWrote) {
  auto sandbox = Insert(NewSandbox("running"));
  auto other_sandbox = Insert(NewSandbox("running"));
  std::string id = Started(sandbox.id, Shell("echo out; exit 4"));
  ASSERT_EQ(AwaitEnd(id), Waiter::End::kReady);
  store::CommandRecord stored = StoredCommand(sandbox.id, id);
  ASSERT_EQ(stored.stdout_text, "out\n");
  stored.stdout_text = "changed in the store";
  ASSERT_TRUE(store_.PutCommand(stored).ok());

  auto outcome = service_->Outcome(Caller(), sandbox.id, id);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_TRUE(outcome->finished);
  EXPECT_EQ(outcome->command.status, "exited");
  EXPECT_EQ(outcome->command.exit_code, 4);
  EXPECT_EQ(outcome->command.stdout_text, "out\n");
  EXPECT_EQ(service_->Get(Caller(), sandbox.id, id)->stdout_text, "changed in the store");
  // Kept or not, it is another organization's or sandbox's command for nobody else.
  Principal stranger{"org_other", "key_2", false};
  EXPECT_EQ(service_->Outcome(stranger, sandbox.id, id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Outcome(Caller(), other_sandbox.id, id).status().code(), Code::kNotFound);
}

// A final record that could not be written is not answered from memory: the answer says what
// the store holds (still running), as a restarted adaptd would find it.
TEST_F(CommandServiceTest, AnEndTheStoreDidNotTakeIsNotAnswered) {
  auto sandbox = Insert(NewSandbox("running"));
  std::string id = Started(sandbox.id, Shell("sleep 30"));
  store_.FailWrites(Status(Code::kInternal, "disk full"));
  ASSERT_TRUE(service_->Kill(Caller(), sandbox.id, id).ok());
  ASSERT_EQ(AwaitEnd(id), Waiter::End::kReady);
  store_.FailWrites(std::nullopt);
  auto outcome = service_->Outcome(Caller(), sandbox.id, id);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  EXPECT_FALSE(outcome->finished);
  EXPECT_EQ(outcome->command.status, "running");
}

TEST_F(CommandServiceTest, KillEndsARunningCommandWithoutWaitingForIt) {
  auto sandbox = Insert(NewSandbox("running"));
  RunCommandRequest req;
  req.argv = {"sleep", "30"};
  std::string id = Started(sandbox.id, req);
  auto start = std::chrono::steady_clock::now();
  auto killed = service_->Kill(Caller(), sandbox.id, id);
  ASSERT_TRUE(killed.ok()) << killed.status().message();
  EXPECT_FALSE(killed->finished);
  EXPECT_EQ(killed->command.status, "running");
  EXPECT_EQ(AwaitEnd(id, CommandService::kKillWait), Waiter::End::kReady);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  auto outcome = service_->Outcome(Caller(), sandbox.id, id);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->finished);
  EXPECT_EQ(outcome->command.status, "killed");
  EXPECT_EQ(outcome->command.termination_reason, "killed");
  EXPECT_EQ(outcome->command.signal, SIGKILL);
  EXPECT_FALSE(outcome->command.exit_code.has_value());
  EXPECT_EQ(StoredCommand(sandbox.id, id).status, "killed");
  EXPECT_EQ(exec_.CountCalls(Op::kKillExec, sandbox.id), 1);
}

TEST_F(CommandServiceTest, AGracefulKillSendsTermAndACommandThatTrapsItEndsOnItsOwn) {
  auto sandbox = Insert(NewSandbox("running"));
  std::string id = Started(sandbox.id, Shell("trap 'echo term; exit 0' TERM; echo up; "
                                             "while true; do sleep 0.1; done"));
  // The trap is set once the command printed.
  for (int i = 0;
       i < 600 && service_->Outcome(Caller(), sandbox.id, id)->command.stdout_text != "up\n"; ++i)
    std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(service_->Kill(Caller(), sandbox.id, id, 600s).ok());
  EXPECT_EQ(AwaitEnd(id, 60s), Waiter::End::kReady);  // a hang guard, far below the grace
  auto outcome = service_->Outcome(Caller(), sandbox.id, id);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->command.status, "killed");
  EXPECT_EQ(outcome->command.exit_code, 0);
  EXPECT_FALSE(outcome->command.signal.has_value());
  EXPECT_EQ(outcome->command.stdout_text, "up\nterm\n");
  EXPECT_EQ(exec_.terminated_, 1);
  EXPECT_EQ(exec_.CountCalls(Op::kKillExec, sandbox.id), 0);
}

TEST_F(CommandServiceTest, AGracefulKillOfACommandIgnoringTermKillsItAfterTheGrace) {
  auto sandbox = Insert(NewSandbox("running"));
  std::string id =
      Started(sandbox.id, Shell("trap '' TERM; echo up; while true; do sleep 0.1; done"));
  for (int i = 0;
       i < 600 && service_->Outcome(Caller(), sandbox.id, id)->command.stdout_text != "up\n"; ++i)
    std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(service_->Kill(Caller(), sandbox.id, id, 300ms).ok());
  EXPECT_EQ(AwaitEnd(id, 60s), Waiter::End::kReady);
  auto outcome = service_->Outcome(Caller(), sandbox.id, id);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->command.status, "killed");
  EXPECT_EQ(outcome->command.signal, SIGKILL);
  EXPECT_EQ(exec_.terminated_, 1);
  EXPECT_EQ(exec_.CountCalls(Op::kKillExec, sandbox.id), 1);
}

TEST_F(CommandServiceTest, KillingAFinishedCommandReturnsItAsItIs) {
  auto sandbox = Insert(NewSandbox("running"));
  std::string id = Started(sandbox.id, Shell("echo done"));
  Finished(sandbox.id, id);
  auto killed = service_->Kill(Caller(), sandbox.id, id);
  ASSERT_TRUE(killed.ok()) << killed.status().message();
  EXPECT_TRUE(killed->finished);
  EXPECT_EQ(killed->command.status, "exited");
  EXPECT_EQ(killed->command.exit_code, 0);
  EXPECT_EQ(killed->command.stdout_text, "done\n");
  EXPECT_EQ(exec_.CountCalls(Op::kKillExec), 0);
  EXPECT_EQ(StoredCommand(sandbox.id, id).status, "exited");
}

TEST_F(CommandServiceTest, TheTimeoutKillsTheCommand) {
  auto sandbox = Insert(NewSandbox("running"));
  RunCommandRequest req;
  req.argv = {"sleep", "30"};
  req.timeout_seconds = 1;
  std::string id = Started(sandbox.id, req);
  Command c = Finished(sandbox.id, id);
  EXPECT_EQ(c.status, "timeout");
  EXPECT_EQ(c.signal, SIGKILL);
}

TEST_F(CommandServiceTest, AnotherOrganizationsOrSandboxsCommandIsNotFound) {
  auto sandbox = Insert(NewSandbox("running"));
  auto other_sandbox = Insert(NewSandbox("running"));
  RunCommandRequest req;
  req.argv = {"sleep", "30"};
  std::string id = Started(sandbox.id, req);
  Principal stranger{"org_other", "key_2", false};
  EXPECT_EQ(service_->Get(stranger, sandbox.id, id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Kill(stranger, sandbox.id, id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->List(stranger, sandbox.id, {}).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Follow(stranger, sandbox.id, id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Start(stranger, sandbox.id, Shell("true")).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Get(Caller(), other_sandbox.id, id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Kill(Caller(), other_sandbox.id, id).status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Get(Caller(), sandbox.id, "cmd_nope").status().code(), Code::kNotFound);
  EXPECT_EQ(service_->Get(Caller(), sandbox.id, "../x").status().code(), Code::kNotFound);
  // None of that touched it.
  EXPECT_EQ(exec_.CountCalls(Op::kKillExec), 0);
  auto got = service_->Get(Caller(), sandbox.id, id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "running");
}

TEST_F(CommandServiceTest, ListIsNewestFirstInPagesWithTheLiveOutputOfRunningCommands) {
  auto sandbox = Insert(NewSandbox("running"));
  std::vector<std::string> ids;
  for (const char* line : {"echo 1", "echo 2", "echo 3"}) {
    ids.push_back(Started(sandbox.id, Shell(line)));
    Finished(sandbox.id, ids.back());
  }
  ListCommandsRequest first;
  first.limit = 2;
  auto page = service_->List(Caller(), sandbox.id, first);
  ASSERT_TRUE(page.ok()) << page.status().message();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].id, ids[2]);
  EXPECT_EQ(page->items[0].stdout_text, "3\n");
  EXPECT_EQ(page->items[1].id, ids[1]);
  ASSERT_TRUE(page->next_cursor.has_value());
  ListCommandsRequest next = first;
  next.cursor = *page->next_cursor;
  auto rest = service_->List(Caller(), sandbox.id, next);
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].id, ids[0]);
  EXPECT_FALSE(rest->next_cursor.has_value());

  ListCommandsRequest bad;
  bad.limit = 0;
  EXPECT_EQ(service_->List(Caller(), sandbox.id, bad).status().field(), "limit");
}

TEST_F(CommandServiceTest, CommandsRunOnlyInARunningSandboxAndAreValidatedFirst) {
  auto stopped = Insert(NewSandbox("stopped"));
  EXPECT_EQ(service_->Start(Caller(), stopped.id, Shell("true")).status().code(), Code::kConflict);
  auto sandbox = Insert(NewSandbox("running"));
  RunCommandRequest bad = Shell("true");
  bad.cwd = "relative";
  EXPECT_EQ(service_->Start(Caller(), sandbox.id, bad).status().field(), "cwd");
  EXPECT_EQ(exec_.CountCalls(Op::kExec), 0);
  auto page = service_->List(Caller(), sandbox.id, {});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
}

TEST_F(CommandServiceTest, AnExecThatFailsToStartRecordsNothing) {
  auto sandbox = Insert(NewSandbox("running"));
  exec_.FailNext(Op::kExec, Status(Code::kUnavailable, "runsc exec failed"));
  auto started = service_->Start(Caller(), sandbox.id, Shell("true"));
  EXPECT_FALSE(started.ok());
  auto page = service_->List(Caller(), sandbox.id, {});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
}

// What runsc exec does once the sandbox's workload has ended: it says so and exits 128.
constexpr const char* kRunscRefusal =
    "sleep 0.2; echo 'cannot execute in container in state stopped' >&2; exit 128";

TEST_F(CommandServiceTest, ACommandRunscCouldNotRunInASandboxThatEndedIsLostNotExited) {
  // The stress run of 2026-12-06: commands sent as a startup command ended came back exited
  // 128 with runsc's complaint as their stderr, as if the program had said it.
  auto sandbox = Insert(NewSandbox("running"));
  exec_.AddRunning(sandbox.id);
  std::string id = Started(sandbox.id, Shell(kRunscRefusal));
  exec_.Exit(sandbox.id, 0);
  Command c = Finished(sandbox.id, id);
  EXPECT_EQ(c.status, "lost");
  EXPECT_FALSE(c.exit_code.has_value());
  EXPECT_EQ(c.error,
            "the sandbox stopped running as the command started, so runsc could not run it");
  // The sandbox's own end, once recorded, says why instead (as for a command lost with its
  // agent).
  service_->SandboxEnded(sandbox.id, "the startup command exited with 0", true);
  EXPECT_EQ(StoredCommand(sandbox.id, id).error, "the startup command exited with 0");
}

TEST_F(CommandServiceTest, AProgramThatExits128InASandboxThatRunsOnExited128) {
  auto sandbox = Insert(NewSandbox("running"));
  exec_.AddRunning(sandbox.id);
  Command c = Finished(sandbox.id, Started(sandbox.id, Shell(kRunscRefusal)));
  EXPECT_EQ(c.status, "exited");
  EXPECT_EQ(c.exit_code, 128);
  EXPECT_EQ(c.error, "");
}

TEST_F(CommandServiceTest, NoCommandStartsWhileACheckpointOrRollBackIsUnderWay) {
  auto sandbox = Insert(NewSandbox("running"));
  // A roll back's restore names its checkpoint.
  auto op = BeginSandboxOperation(store_, org_, sandbox.id, kRestoreOperation, "Pending", 0, "one");
  ASSERT_TRUE(op.ok());
  auto started = service_->Start(Caller(), sandbox.id, Shell("true"));
  EXPECT_EQ(started.status().code(), Code::kConflict);
  EXPECT_NE(started.status().message().find("busy with its restore operation " + *op),
            std::string::npos)
      << started.status().message();
  EXPECT_EQ(exec_.CountCalls(Op::kExec), 0);
  // A start's restore is settled a moment after the sandbox runs again: a command that waited
  // for it to run is not refused meanwhile.
  FinishSandboxOperation(store_, org_, *op, "", 0);
  ASSERT_TRUE(BeginSandboxOperation(store_, org_, sandbox.id, kRestoreOperation, "Running").ok());
  std::string id = Started(sandbox.id, Shell("true"));
  EXPECT_EQ(Finished(sandbox.id, id).exit_code, 0);
}

TEST_F(CommandServiceTest, ACommandRunscCouldNotRunDuringACheckpointIsLostSayingSo) {
  auto sandbox = Insert(NewSandbox("running"));
  exec_.AddRunning(sandbox.id);
  std::string id = Started(sandbox.id, Shell(kRunscRefusal));
  auto op = BeginSandboxOperation(store_, org_, sandbox.id, kCheckpointOperation, "Running");
  ASSERT_TRUE(op.ok());
  Command c = Finished(sandbox.id, id);
  EXPECT_EQ(c.status, "lost");
  EXPECT_EQ(c.error, "the sandbox was busy with its checkpoint operation " + *op +
                         " as the command started, so runsc could not run it");
}

TEST_F(CommandServiceTest, ReconcileMarksCommandsLeftRunningLost) {
  auto sandbox = Insert(NewSandbox("running"));
  auto c = RunningCommand(sandbox.id);
  service_->Reconcile();
  auto stored = StoredCommand(sandbox.id, c.id);
  EXPECT_EQ(stored.status, "lost");
  EXPECT_EQ(stored.termination_reason, "lost");
  EXPECT_TRUE(stored.finished_at.has_value());
  EXPECT_EQ(stored.error, "adaptd restarted while the command ran; its outcome is unknown");
  EXPECT_EQ(stored.argv, c.argv);
  auto running = store_.ListCommandsWithStatus("running");
  ASSERT_TRUE(running.ok());
  EXPECT_TRUE(running->empty());
}

TEST_F(CommandServiceTest, ALostCommandOfASandboxThatFailedSaysWhyTheSandboxEnded) {
  auto r = NewSandbox("provisioning");
  r = Insert(r);
  r.status = "failed";
  r.error = "the sandbox ran out of memory";
  ASSERT_TRUE(store_.UpdateSandbox(r, {"provisioning"}).ok());
  auto c = RunningCommand(r.id);
  service_->Reconcile();
  EXPECT_EQ(StoredCommand(r.id, c.id).status, "lost");
  EXPECT_EQ(StoredCommand(r.id, c.id).error, "the sandbox ran out of memory");
}

TEST_F(CommandServiceTest, ReconcileLeavesEndedCommandsAlone) {
  auto sandbox = Insert(NewSandbox("running"));
  auto c = RunningCommand(sandbox.id);
  c.status = "exited";
  c.exit_code = 0;
  ASSERT_TRUE(store_.PutCommand(c).ok());
  service_->Reconcile();
  EXPECT_EQ(StoredCommand(sandbox.id, c.id).status, "exited");
  EXPECT_EQ(StoredCommand(sandbox.id, c.id).error, "");
}

}  // namespace
}  // namespace adapt::core

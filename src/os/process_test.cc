#include "os/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "os/unique_fd.h"

namespace adapt::os {
namespace {

CommandResult MustRun(const std::vector<std::string>& argv, const SpawnOptions& o = {}) {
  auto r = RunCommand(argv, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : CommandResult{};
}

TEST(RunCommand, ReportsExitCodes) {
  EXPECT_EQ(MustRun({"true"}).status.exit_code, 0);
  CommandResult r = MustRun({"sh", "-c", "exit 3"});
  EXPECT_FALSE(r.status.signaled());
  EXPECT_EQ(r.status.exit_code, 3);
  EXPECT_EQ(MustRun({"sh", "-c", "exit 255"}).status.exit_code, 255);
}

TEST(RunCommand, ReportsTheTerminatingSignal) {
  CommandResult r = MustRun({"sh", "-c", "kill -TERM $$"});
  EXPECT_TRUE(r.status.signaled());
  EXPECT_EQ(r.status.signal, SIGTERM);
  r = MustRun({"sh", "-c", "kill -KILL $$"});
  EXPECT_EQ(r.status.signal, SIGKILL);
}

TEST(RunCommand, CapturesStdoutAndStderrTogether) {
  CommandResult r = MustRun({"sh", "-c", "echo out; echo err >&2; printf tail"});
  EXPECT_EQ(r.status.exit_code, 0);
  EXPECT_EQ(r.output, "out\nerr\ntail");
}

TEST(RunCommand, StdinIsDevNull) {
  CommandResult r = MustRun({"sh", "-c", "cat; echo done"});
  EXPECT_EQ(r.output, "done\n");
}

TEST(RunCommand, KeepsOnlyTheLast64KiBOfOutput) {
  // 200,000 bytes of 'a', then a marker line: only the final 65,536 bytes survive.
  CommandResult r =
      MustRun({"sh", "-c", "head -c 200000 /dev/zero | tr '\\0' a; printf 'END-MARKER\\n'"});
  EXPECT_EQ(r.status.exit_code, 0);
  ASSERT_EQ(r.output.size(), 65536u);
  std::string marker = "END-MARKER\n";
  EXPECT_EQ(r.output.substr(r.output.size() - marker.size()), marker);
  EXPECT_EQ(r.output.find_first_not_of('a'), 65536u - marker.size());
}

TEST(RunCommand, OutputUnderTheLimitIsKeptWhole) {
  CommandResult r = MustRun({"sh", "-c", "head -c 65536 /dev/zero | tr '\\0' b"});
  EXPECT_EQ(r.output, std::string(65536, 'b'));
}

TEST(RunCommand, MissingProgramExits127) {
  auto r = RunCommand({"/nonexistent/program"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status.exit_code, 127);
}

TEST(RunCommand, EmptyArgvIsInvalid) {
  auto r = RunCommand({});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(RunCommandWithin, AProgramWithinItsLimitIsReportedAsRunCommandReportsIt) {
  auto r =
      RunCommandWithin({"sh", "-c", "echo out; echo err >&2; exit 3"}, std::chrono::seconds(60));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->status.exit_code, 3);
  EXPECT_EQ(r->output, "out\nerr\n");
}

TEST(RunCommandWithin, AProgramPastItsLimitIsKilledAndWhatItPrintedIsKept) {
  auto r = RunCommandWithin({"sh", "-c", "echo started; exec sleep 600"},
                            std::chrono::milliseconds(300));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->timed_out);
  EXPECT_TRUE(r->status.signaled());
  EXPECT_EQ(r->status.signal, SIGKILL);
  EXPECT_EQ(r->output, "started\n");
}

TEST(RunCheckedWithin, AFailureCarriesTheLastLineAndAHangIsUnavailableNamingTheLimit) {
  EXPECT_TRUE(RunCheckedWithin({"true"}, std::chrono::seconds(30)).ok());
  Status failed =
      RunCheckedWithin({"sh", "-c", "echo first; echo last; exit 2"}, std::chrono::seconds(30));
  EXPECT_EQ(failed.code(), Code::kInternal);
  EXPECT_NE(failed.message().find("exit status 2"), std::string::npos) << failed.message();
  EXPECT_NE(failed.message().find(": last"), std::string::npos) << failed.message();
  Status hung = RunCheckedWithin({"sh", "-c", "exec sleep 600"}, std::chrono::seconds(1));
  EXPECT_EQ(hung.code(), Code::kUnavailable);
  EXPECT_NE(hung.message().find("within 1 s"), std::string::npos) << hung.message();
}

// A child left holding the output open does not make a program that exited look hung.
TEST(RunCommandWithin, AChildLeftHoldingTheOutputIsNotWaitedFor) {
  auto r =
      RunCommandWithin({"sh", "-c", "sleep 120 & echo $!; echo done"}, std::chrono::seconds(30));
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto newline = r->output.find('\n');
  ASSERT_NE(newline, std::string::npos) << r->output;
  pid_t child = static_cast<pid_t>(std::stol(r->output.substr(0, newline)));
  EXPECT_EQ(::kill(child, SIGKILL), 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->status.exit_code, 0);
  EXPECT_EQ(r->output.substr(newline + 1), "done\n");
}

TEST(RunChecked, SucceedsOnExitZero) { EXPECT_TRUE(RunChecked({"true"}).ok()); }

TEST(RunChecked, ErrorCarriesTheExitStatusAndLastOutputLine) {
  Status st = RunChecked({"sh", "-c", "echo first; echo 'mkfs: disk is full' >&2; exit 2"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_NE(st.message().find("exit status 2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("mkfs: disk is full"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("first"), std::string::npos) << st.message();
}

TEST(RunChecked, TrailingBlankLinesDoNotHideTheLastLine) {
  Status st = RunChecked({"sh", "-c", "echo 'real reason'; echo; echo; exit 1"});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("real reason"), std::string::npos) << st.message();
}

TEST(RunChecked, SignalAndUnstartableProgramAreNamed) {
  Status killed = RunChecked({"sh", "-c", "kill -KILL $$"});
  ASSERT_FALSE(killed.ok());
  EXPECT_NE(killed.message().find("signal 9"), std::string::npos) << killed.message();
  Status missing = RunChecked({"/nonexistent/program", "arg"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("could not be executed"), std::string::npos)
      << missing.message();
  EXPECT_NE(missing.message().find("/nonexistent/program"), std::string::npos) << missing.message();
}

TEST(Spawn, ReplacesTheEnvironmentWhenGiven) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  UniqueFd rd(p[0]), wr(p[1]);
  SpawnOptions o;
  o.stdout_fd = wr.get();
  o.env = std::vector<std::string>{"ADAPT_TEST_VAR=hello world", "OTHER=2"};
  auto pid = Spawn({"sh", "-c", "echo \"$ADAPT_TEST_VAR|$OTHER|${HOME:-unset}\""}, o);
  ASSERT_TRUE(pid.ok()) << pid.status().message();
  wr.reset();
  std::string out;
  char buf[256];
  for (ssize_t n; (n = ::read(rd.get(), buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  auto st = Wait(*pid);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->exit_code, 0);
  EXPECT_EQ(out, "hello world|2|unset\n");
}

TEST(Spawn, InheritsTheEnvironmentByDefault) {
  ASSERT_EQ(::setenv("ADAPT_INHERITED", "yes", 1), 0);
  CommandResult r = MustRun({"sh", "-c", "echo $ADAPT_INHERITED"});
  ::unsetenv("ADAPT_INHERITED");
  EXPECT_EQ(r.output, "yes\n");
}

TEST(Spawn, NewSessionMakesTheChildASessionLeader) {
  SpawnOptions o;
  o.new_session = true;
  // ps is not everywhere: read the session id from /proc/self/stat (field 6).
  CommandResult r = MustRun({"sh", "-c",
                             "read -r a b c d e sid rest < /proc/self/stat; "
                             "[ \"$sid\" = \"$$\" ] && echo leader || echo \"$sid $$\""},
                            o);
  EXPECT_EQ(r.output, "leader\n");
}

// The child shares the caller's memory until it executes (vfork): the caller's blocked signals
// and handlers must not reach the program, and the caller's own mask comes back unchanged.
TEST(Spawn, TheChildStartsWithNoBlockedSignalsAndTheCallersMaskIsKept) {
  struct sigaction caught {
  }, before{};
  caught.sa_handler = [](int) {};
  ASSERT_EQ(::sigaction(SIGUSR1, &caught, &before), 0);
  sigset_t blocked, old;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR2);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &blocked, &old), 0);
  CommandResult r = MustRun({"cat", "/proc/self/status"});
  sigset_t now;
  ::pthread_sigmask(SIG_SETMASK, &old, &now);
  ::sigaction(SIGUSR1, &before, nullptr);
  EXPECT_NE(r.output.find("\nSigBlk:\t0000000000000000\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nSigCgt:\t0000000000000000\n"), std::string::npos) << r.output;
  EXPECT_EQ(sigismember(&now, SIGUSR2), 1);
  EXPECT_EQ(sigismember(&now, SIGUSR1), 0);
}

// Spawns from many threads at once, while others allocate: a child that took a lock or
// allocated on the shared memory would hang or corrupt the parent here.
TEST(Spawn, ManyThreadsSpawnAtOnceWhileOthersAllocate) {
  std::atomic<bool> stop{false};
  std::thread churn([&] {
    while (!stop) {
      std::vector<std::string> garbage(64, std::string(512, 'x'));
      garbage.clear();
    }
  });
  std::atomic<int> ok{0};
  std::vector<std::thread> spawners;
  for (int t = 0; t < 4; ++t)
    spawners.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto r = RunCommand({"sh", "-c", "echo $0", "hi"});
        if (r.ok() && r->status.exit_code == 0 && r->output == "hi\n") ++ok;
      }
    });
  for (auto& t : spawners) t.join();
  stop = true;
  churn.join();
  EXPECT_EQ(ok.load(), 100);
}

TEST(ProcessMatches, FindsALiveProcessByItsCommandLine) {
  auto pid = Spawn({"sleep", "1000"}, {});
  ASSERT_TRUE(pid.ok());
  // Until the child has called exec, its command line is still this test's.
  bool matched = false;
  for (int i = 0; i < 200 && !matched; ++i) {
    matched = ProcessMatches(*pid, "sleep 1000");
    if (!matched) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(matched);
  EXPECT_TRUE(ProcessMatches(*pid, "1000"));
  EXPECT_FALSE(ProcessMatches(*pid, "sleep 999"));
  ASSERT_TRUE(Signal(*pid, SIGKILL).ok());
  auto st = Wait(*pid);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->signal, SIGKILL);
  EXPECT_FALSE(ProcessMatches(*pid, "sleep"));
}

TEST(ProcessMatches, RejectsNonPositivePids) {
  EXPECT_FALSE(ProcessMatches(0, ""));
  EXPECT_FALSE(ProcessMatches(-1, ""));
}

TEST(Signal, AGoneProcessIsNotAnError) {
  auto pid = Spawn({"true"}, {});
  ASSERT_TRUE(pid.ok());
  ASSERT_TRUE(Wait(*pid).ok());
  EXPECT_TRUE(Signal(*pid, SIGTERM).ok());
}

}  // namespace
}  // namespace adapt::os

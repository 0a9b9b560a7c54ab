// LaunchProcess on the host (the same Linux calls the agent makes inside gVisor): the child
// shares the agent's memory until it executes, so what it must do is checked from outside:
// the command's own PATH and environment, execvp's search (a script without #!, a file that
// cannot be executed), the exit codes and messages of a shell, the user switch, the
// capabilities a root command gives up, default signal handling and an empty mask, a new
// session, and the agent's own environment left as it was.
#include "agent/process_launch.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace adapt::agent {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out, err;
};

Ran Launch(std::vector<std::string> argv, std::vector<std::string> env = {"PATH=/usr/bin:/bin"},
           std::string cwd = "/", uint32_t uid = 0, uint32_t gid = 0) {
  SpawnRequest req;
  req.argv = std::move(argv);
  req.env = std::move(env);
  req.cwd = std::move(cwd);
  req.uid = uid;
  req.gid = gid;
  LaunchedProcess p;
  Ran ran;
  if (!LaunchProcess(req, p)) {
    ADD_FAILURE() << "nothing started: " << std::strerror(errno);
    return ran;
  }
  EXPECT_EQ(p.stdin_fd, -1);
  pollfd fds[2] = {{p.stdout_fd, POLLIN, 0}, {p.stderr_fd, POLLIN, 0}};
  std::string* into[2] = {&ran.out, &ran.err};
  int open = 2;
  while (open > 0 && ::poll(fds, 2, 10'000) > 0) {
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char buf[4096];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        into[i]->append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EAGAIN) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  EXPECT_EQ(::waitpid(p.pid, &status, 0), p.pid);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return ran;
}

class ProcessLaunchTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/process-launch-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { (void)!std::system(("rm -rf " + dir_).c_str()); }
  void Write(const std::string& name, const std::string& text, mode_t mode) {
    std::ofstream(dir_ + "/" + name) << text;
    ASSERT_EQ(::chmod((dir_ + "/" + name).c_str(), mode), 0);
  }
  std::string dir_;
};

TEST_F(ProcessLaunchTest, TheCommandHasItsOwnEnvironmentAndDirectory) {
  Ran r = Launch({"sh", "-c", "echo $FOO; pwd; echo oops >&2; exit 3"},
                 {"PATH=/usr/bin:/bin", "FOO=bar"}, "/tmp");
  EXPECT_EQ(r.out, "bar\n/tmp\n");
  EXPECT_EQ(r.err, "oops\n");
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(ProcessLaunchTest, ProgramsAreSearchedInTheCommandsPathNotTheAgents) {
  Write("mytool", "#!/bin/sh\necho found \"$@\"\n", 0755);
  Write("plain", "echo plain script \"$1\"\n", 0755);  // no #!: run by /bin/sh
  const std::string before = std::getenv("PATH") ? std::getenv("PATH") : "";
  Ran r = Launch({"mytool", "x"}, {"PATH=/nonexistent:" + dir_});
  EXPECT_EQ(r.out, "found x\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = Launch({"plain", "y"}, {"PATH=" + dir_});
  EXPECT_EQ(r.out, "plain script y\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Not in the command's PATH (though it is in the agent's).
  r = Launch({"sh", "-c", "true"}, {"PATH=" + dir_});
  EXPECT_EQ(r.exit_code, 127);
  // The agent's own environment is as it was.
  EXPECT_EQ(std::getenv("PATH") ? std::getenv("PATH") : "", before);
}

TEST_F(ProcessLaunchTest, FailuresInTheChildAreItsExitAndAMessageAsAShellGives) {
  Ran r = Launch({"no-such-program"});
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err, "adapt-agent: cannot run no-such-program: No such file or directory\n");
  Write("data.txt", "not a program\n", 0644);
  r = Launch({dir_ + "/data.txt"});
  EXPECT_EQ(r.exit_code, 126);
  EXPECT_NE(r.err.find("cannot run " + dir_ + "/data.txt: Permission denied"), std::string::npos)
      << r.err;
  // Found nowhere runnable, but one was there: permission denied wins, as in execvp.
  r = Launch({"data.txt"}, {"PATH=/nonexistent:" + dir_});
  EXPECT_EQ(r.exit_code, 126) << r.err;
  r = Launch({"true"}, {"PATH=/usr/bin:/bin"}, "/nonexistent");
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.err,
            "adapt-agent: cannot change directory to /nonexistent: No such file or "
            "directory\n");
}

TEST_F(ProcessLaunchTest, TheCommandRunsAsItsUserWithoutTheAgentsGroups) {
  Ran r = Launch({"sh", "-c", "id -u; id -g; id -G"}, {"PATH=/usr/bin:/bin"}, "/", 65534, 65534);
  EXPECT_EQ(r.out, "65534\n65534\n65534\n") << r.err;
  // As that user, nothing of root's is left.
  r = Launch({"sh", "-c", "grep CapEff /proc/self/status"}, {"PATH=/usr/bin:/bin"}, "/", 65534,
             65534);
  EXPECT_EQ(r.out, "CapEff:\t0000000000000000\n") << r.err;
}

TEST_F(ProcessLaunchTest, ARootCommandGivesUpTheUserSwitchingCapabilities) {
  Ran r = Launch({"sh", "-c", "grep -E '^Cap(Eff|Bnd)' /proc/self/status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* field : {"CapEff:\t", "CapBnd:\t"}) {
    auto at = r.out.find(field);
    ASSERT_NE(at, std::string::npos) << r.out;
    uint64_t caps = std::stoull(r.out.substr(at + 8, 16), nullptr, 16);
    EXPECT_EQ(caps & ((1u << 6) | (1u << 7) | (1u << 8)), 0u) << field << r.out;  // SETGID..SETPCAP
    EXPECT_NE(caps & 1u, 0u) << field << r.out;                                   // CAP_CHOWN stays
  }
}

TEST_F(ProcessLaunchTest, TheCommandHasDefaultSignalsAnEmptyMaskAndItsOwnSession) {
  // What the agent does to its own signals is not the command's.
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t usr2, old;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  ::pthread_sigmask(SIG_BLOCK, &usr2, &old);
  Ran r = Launch({"sh", "-c",
                  "grep -E '^Sig(Ign|Blk)' /proc/self/status; echo $$; "
                  "cut -d' ' -f6 /proc/$$/stat"});
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SigBlk:\t0000000000000000\n"), std::string::npos) << r.out;
  // The agent ignores SIGPIPE; the command must not (a pipeline's writer ends with its reader).
  auto ign = r.out.find("SigIgn:\t");
  ASSERT_NE(ign, std::string::npos);
  EXPECT_EQ(std::stoull(r.out.substr(ign + 8, 16), nullptr, 16) & (1u << (SIGPIPE - 1)), 0u)
      << r.out;
  // Its pid is its session's id (the last two lines).
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(r.out.substr(at, nl - at));
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[2], lines[3]) << r.out;
}

TEST_F(ProcessLaunchTest, ManyLaunchesLeaveTheAgentAsItWas) {
  for (int i = 0; i < 50; ++i) {
    Ran r = Launch({"true"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  sigset_t now;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &now);
  EXPECT_FALSE(sigismember(&now, SIGTERM));
}

}  // namespace
}  // namespace adapt::agent

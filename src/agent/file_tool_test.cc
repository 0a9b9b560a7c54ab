// RunFileTool on the host (the same calls the agent makes inside gVisor), each operation in a
// child of its own with its stdin, stdout and stderr on pipes, as adaptd runs it: a FIFO is
// refused at once by every read and by an upload (a FIFO with no writer used to hang the
// read forever, so a child still running after its deadline fails the test), a regular file
// still reads, and `get --header --opened-path` names the file it opened, symlinks resolved.
#include "agent/file_tool.h"

#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/file_util.h"
#include "base/hex.h"

namespace adapt::agent {
namespace {

struct ToolRun {
  int exit_code = -1;  // -1: still running at the deadline (killed)
  std::string out, err;
};

std::string DrainFd(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return text;
}

// Runs `adapt-agent file <args>` with `input` on stdin; a child still running after 10 s is
// killed. Inputs and outputs stay small, so the pipes never fill.
ToolRun RunTool(std::vector<std::string> args, const std::string& input = "") {
  int in[2], out[2], err[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0 || ::pipe(err) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return {};
  }
  // The input goes into the pipe before the child exists (it is small, well under the pipe's
  // buffer): a tool that refuses at once exits without reading, and a write after that would
  // kill this test with SIGPIPE.
  if (!input.empty()) {
    EXPECT_TRUE(WriteAllFd(in[1], input.data(), input.size()));
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::_exit(RunFileTool(static_cast<int>(args.size()), argv.data()));
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(in[1]);
  ToolRun run;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "adapt-agent file " << args[0] << " " << args[1] << " hung";
      DrainFd(out[0]);
      DrainFd(err[0]);
      return run;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.out = DrainFd(out[0]);
  run.err = DrainFd(err[0]);
  return run;
}

class FileToolTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/adapt-file-tool-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    fifo_ = dir_ + "/pipe";
    ASSERT_EQ(::mkfifo(fifo_.c_str(), 0644), 0);
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }

  std::string dir_, fifo_;
};

TEST_F(FileToolTest, EveryReadOfAFifoWithNoWriterIsRefusedAtOnce) {
  for (std::vector<std::string> args : {std::vector<std::string>{"get", fifo_},
                                        {"get", fifo_, "--header"},
                                        {"get", fifo_, "--header", "--opened-path"},
                                        {"read-text", fifo_, "1000"}}) {
    ToolRun run = RunTool(args);
    EXPECT_EQ(run.exit_code, kExitBadTarget) << args[0] << ": " << run.err;
    EXPECT_EQ(run.err, "adapt-agent: " + fifo_ + " is not a regular file\n");
    EXPECT_EQ(run.out, "");
  }
  ToolRun archive = RunTool({"archive-get", fifo_});
  EXPECT_EQ(archive.exit_code, kExitBadTarget) << archive.err;
}

TEST_F(FileToolTest, ASymlinkToAFifoIsRefusedToo) {
  ASSERT_EQ(::symlink(fifo_.c_str(), (dir_ + "/link").c_str()), 0);
  ToolRun run = RunTool({"get", dir_ + "/link", "--header"});
  EXPECT_EQ(run.exit_code, kExitBadTarget) << run.err;
  EXPECT_NE(run.err.find("is not a regular file"), std::string::npos) << run.err;
}

TEST_F(FileToolTest, AnUploadDoesNotReplaceAFifo) {
  ToolRun run = RunTool({"put", fifo_}, "data");
  EXPECT_EQ(run.exit_code, kExitBadTarget) << run.err;
  EXPECT_NE(run.err.find(fifo_ + " is not a regular file"), std::string::npos) << run.err;
  struct stat st {};
  ASSERT_EQ(::lstat(fifo_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  // A regular file is still replaced.
  Write("plain.txt", "old");
  EXPECT_EQ(RunTool({"put", dir_ + "/plain.txt"}, "new").exit_code, kExitOk);
  EXPECT_EQ(RunTool({"get", dir_ + "/plain.txt"}).out, "new");
}

TEST_F(FileToolTest, RegularFilesStillReadAndAFifoInATreeIsLeftOut) {
  Write("a.txt", "hello\n");
  ToolRun get = RunTool({"get", dir_ + "/a.txt", "--header"});
  EXPECT_EQ(get.exit_code, kExitOk) << get.err;
  EXPECT_EQ(get.out, "6\nhello\n");
  ToolRun text = RunTool({"read-text", dir_ + "/a.txt", "100"});
  EXPECT_EQ(text.exit_code, kExitOk) << text.err;
  EXPECT_EQ(text.out, "hello\n");
  ToolRun tree = RunTool({"archive-get", dir_});
  EXPECT_EQ(tree.exit_code, kExitOk) << tree.err;
  EXPECT_NE(tree.out.find("a.txt"), std::string::npos);
  EXPECT_EQ(tree.out.find("pipe"), std::string::npos);
  ToolRun dir = RunTool({"get", dir_});
  EXPECT_EQ(dir.exit_code, kExitBadTarget);
  EXPECT_EQ(dir.err, "adapt-agent: " + dir_ + " is a directory\n");
}

TEST_F(FileToolTest, OpenedPathNamesTheFileReadWithSymlinksResolved) {
  ::mkdir((dir_ + "/secrets").c_str(), 0755);
  Write("secrets/shadow", "root:x\n");
  ASSERT_EQ(::symlink((dir_ + "/secrets/shadow").c_str(), (dir_ + "/report.txt").c_str()), 0);
  ASSERT_EQ(::symlink("secrets", (dir_ + "/via").c_str()), 0);
  char real[PATH_MAX];
  ASSERT_NE(::realpath((dir_ + "/secrets/shadow").c_str(), real), nullptr);
  for (const std::string& path : {dir_ + "/report.txt", dir_ + "/via/shadow"}) {
    ToolRun run = RunTool({"get", path, "--header", "--opened-path"});
    EXPECT_EQ(run.exit_code, kExitOk) << run.err;
    EXPECT_EQ(run.out, "7 " + HexEncode(real) + "\nroot:x\n") << path;
  }
  // Without the flag, the header is the size alone.
  EXPECT_EQ(RunTool({"get", dir_ + "/report.txt", "--header"}).out, "7\nroot:x\n");
}

TEST_F(FileToolTest, AFileWithNoSizeOnDiskIsReadForWhatItHolds) {
  // /proc makes its files' text as they are read; stat says 0 bytes.
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/status", &st), 0);
  ASSERT_EQ(st.st_size, 0);
  ToolRun run = RunTool({"get", "/proc/self/status", "--header"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  size_t nl = run.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  std::string body = run.out.substr(nl + 1);
  EXPECT_EQ(run.out.substr(0, nl), std::to_string(body.size()));
  EXPECT_EQ(body.rfind("Name:", 0), 0u) << body;
  // A file that is empty is still empty.
  Write("empty", "");
  EXPECT_EQ(RunTool({"get", dir_ + "/empty", "--header"}).out, "0\n");
}

}  // namespace
}  // namespace adapt::agent

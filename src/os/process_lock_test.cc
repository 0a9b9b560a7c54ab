#include "os/process_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "os/temp_dir.h"

namespace adapt::os {
namespace {

// The holder locks the file, forks a child that sleeps without exec (as a process caught
// between fork and exec does), reports that child's pid, and exits when told to.
TEST(LockFileForProcess, IsRefusedWhileHeldAndFreedWhenTheHolderDiesEvenIfItsChildLives) {
  TempDir dir("lock");  // the forked processes leave by _exit: only this one removes it
  std::string path = dir.path() + "/adaptd.lock";
  int to_parent[2], to_holder[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  ASSERT_EQ(::pipe(to_holder), 0);
  pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    auto lock = LockFileForProcess(path);
    if (!lock.ok()) ::_exit(2);
    pid_t child = ::fork();
    if (child == 0) {
      ::sleep(30);
      ::_exit(0);
    }
    if (::write(to_parent[1], &child, sizeof child) != sizeof child) ::_exit(3);
    char go;
    if (::read(to_holder[0], &go, 1) != 1) ::_exit(4);
    ::_exit(0);
  }
  pid_t child = 0;
  ASSERT_EQ(::read(to_parent[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));

  auto refused = LockFileForProcess(path);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable) << refused.status().message();
  auto held = LockedByAnotherProcess(path);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_TRUE(*held);

  ASSERT_EQ(::write(to_holder[1], "x", 1), 1);
  int st = 0;
  ASSERT_EQ(::waitpid(holder, &st, 0), holder);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  ASSERT_EQ(::kill(child, 0), 0) << "the holder's child should still be alive";
  held = LockedByAnotherProcess(path);
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_FALSE(*held);
  held = LockedByAnotherProcess(path + ".missing");
  ASSERT_TRUE(held.ok()) << held.status().message();
  EXPECT_FALSE(*held);

  auto taken = LockFileForProcess(path);
  EXPECT_TRUE(taken.ok()) << taken.status().message();

  ::kill(child, SIGKILL);
  ::waitpid(child, &st, 0);
  for (int fd : {to_parent[0], to_parent[1], to_holder[0], to_holder[1]}) ::close(fd);
}

}  // namespace
}  // namespace adapt::os

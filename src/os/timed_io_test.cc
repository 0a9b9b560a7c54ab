// Timed reads and writes over a pipe and a socket pair whose other end stalls, then serves.
#include "os/timed_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "os/process.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

using namespace std::chrono_literals;

Deadline In(std::chrono::milliseconds d) { return std::chrono::steady_clock::now() + d; }

TEST(TimedIo, AReadOfAQuietPipeGivesUpAtItsDeadlineAndOneWithBytesReturnsThem) {
  auto p = MakePipe();
  ASSERT_TRUE(p.ok());
  char buf[16];
  auto quiet = ReadSomeBefore(p->read.get(), buf, sizeof buf, In(50ms));
  EXPECT_EQ(quiet.status().code(), Code::kUnavailable);
  ASSERT_TRUE(WriteAll(p->write.get(), "hi").ok());
  auto got = ReadSomeBefore(p->read.get(), buf, sizeof buf, In(5000ms));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(std::string(buf, *got), "hi");
  p->write.reset();
  auto end = ReadSomeBefore(p->read.get(), buf, sizeof buf, In(5000ms));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, 0u);
}

TEST(TimedIo, AWriteToAPipeNobodyReadsGivesUpAndLeavesTheDescriptorBlocking) {
  auto p = MakePipe();
  ASSERT_TRUE(p.ok());
  const std::string big(4 << 20, 'x');  // more than a pipe holds
  Status st = WriteAllBefore(p->write.get(), big, In(100ms));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.message();
  EXPECT_EQ(::fcntl(p->write.get(), F_GETFL) & O_NONBLOCK, 0);
}

TEST(TimedIo, AWriteToASocketCompletesWhileThePeerReadsAndGivesUpWhenItStops) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  UniqueFd ours(sv[0]), theirs(sv[1]);
  const std::string big(8 << 20, 'y');
  size_t read_total = 0;
  std::thread reader([&] {
    char buf[65536];
    while (read_total < big.size()) {
      auto n = ReadSome(theirs.get(), buf, sizeof buf);
      if (!n.ok() || *n == 0) return;
      read_total += *n;
    }
  });
  Status st = WriteAllBefore(ours.get(), big, In(30000ms));
  reader.join();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(read_total, big.size());
  // Nobody reads now: the socket's buffers fill and the write gives up.
  st = WriteAllBefore(ours.get(), big, In(100ms));
  EXPECT_EQ(st.code(), Code::kUnavailable) << st.message();
  theirs.reset();
  st = WriteAllBefore(ours.get(), "z", In(5000ms));
  EXPECT_FALSE(st.ok());  // the reader went: an error, not a wait
}

}  // namespace
}  // namespace adapt::os

#include "os/tcp_keepalive.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace adapt::os {
namespace {

int Option(int fd, int level, int name) {
  int value = -1;
  socklen_t size = sizeof value;
  EXPECT_EQ(::getsockopt(fd, level, name, &value, &size), 0);
  return value;
}

TEST(TcpKeepalive, SetsEveryTimingOnTheSocket) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  Status st = EnableTcpKeepalive(fd, {std::chrono::seconds(60), std::chrono::seconds(10), 3});
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(Option(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(Option(fd, IPPROTO_TCP, TCP_KEEPIDLE), 60);
  EXPECT_EQ(Option(fd, IPPROTO_TCP, TCP_KEEPINTVL), 10);
  EXPECT_EQ(Option(fd, IPPROTO_TCP, TCP_KEEPCNT), 3);
  ::close(fd);
}

TEST(TcpKeepalive, ANonSocketIsAnErrorThatSaysWhatFailed) {
  Status st = EnableTcpKeepalive(-1, {});
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("keepalive"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace adapt::os

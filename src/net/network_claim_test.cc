// NetworkClaim between processes (as between adaptds): a running claimant's name and any
// pool overlapping its pool are refused with a sentence naming them; a claimant that ended
// counts for nothing.
#include "net/network_claim.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "os/temp_dir.h"

namespace adapt::net {
namespace {

AddressPool Pool(const std::string& cidr) {
  auto pool = AddressPool::Parse(cidr);
  EXPECT_TRUE(pool.ok()) << cidr;
  return *pool;
}

TEST(NetworkClaim, ARunningAdaptdsNameAndPoolAreRefusedAndAnEndedOnesAreNot) {
  os::TempDir tmp("claims");  // the forked child leaves by _exit: only this process removes it
  const std::string dir = tmp.path() + "/networks";
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  pid_t other = ::fork();
  ASSERT_GE(other, 0);
  if (other == 0) {
    auto claim = NetworkClaim::Take(dir, "first", Pool("10.77.0.0/16"));
    char c = claim.ok() ? 'y' : 'n';
    if (::write(ready[1], &c, 1) != 1) ::_exit(3);
    if (::read(done[0], &c, 1) != 1) ::_exit(4);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');

  auto same_name = NetworkClaim::Take(dir, "first", Pool("10.78.0.0/16"));
  ASSERT_FALSE(same_name.ok());
  EXPECT_EQ(same_name.status().code(), Code::kConflict);
  EXPECT_NE(same_name.status().message().find("network name 'first'"), std::string::npos)
      << same_name.status().message();
  auto overlap = NetworkClaim::Take(dir, "second", Pool("10.77.16.0/20"));
  ASSERT_FALSE(overlap.ok());
  EXPECT_EQ(overlap.status().message(),
            "the network pool 10.77.16.0/20 overlaps 10.77.0.0/16 of the adaptd running with "
            "--network-name first; give this adaptd a --network-name and a --network-pool of "
            "its own");
  {
    auto apart = NetworkClaim::Take(dir, "third", Pool("10.79.0.0/16"));
    EXPECT_TRUE(apart.ok()) << apart.status().message();
  }

  ASSERT_EQ(::write(done[1], "x", 1), 1);
  int st = 0;
  ASSERT_EQ(::waitpid(other, &st, 0), other);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << st;
  // Its file is still there; nobody holds it.
  auto after = NetworkClaim::Take(dir, "second", Pool("10.77.16.0/20"));
  EXPECT_TRUE(after.ok()) << after.status().message();
  for (int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);
}

}  // namespace
}  // namespace adapt::net

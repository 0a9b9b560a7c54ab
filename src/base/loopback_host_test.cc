#include "base/loopback_host.h"

#include <gtest/gtest.h>

namespace adapt {
namespace {

TEST(IsLoopbackHost, LoopbackAddressesAndLocalhost) {
  for (const char* host :
       {"localhost", "LocalHost", "127.0.0.1", "127.1.2.3", "127.255.255.255", "::1", "[::1]",
        "[0:0:0:0:0:0:0:1]", "::ffff:127.0.0.1", "[::ffff:127.9.9.9]"})
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
}

TEST(IsLoopbackHost, NamesThatLookLikeLoopbackAreNot) {
  for (const char* host :
       {"127.evil.example", "127.0.0.1.evil.example", "127.0.0.1.", "127.1", "0127.0.0.1",
        "127.0.0.256", "localhost.evil.example", "evil-localhost", "localhost.", "[::2]",
        "::ffff:10.0.0.1", "128.0.0.1", "0.0.0.0", "", "[", "[]", "[127.0.0.1]", "::1%lo"})
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
}

}  // namespace
}  // namespace adapt

#include "image/registry_destination.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

namespace adapt::image {
namespace {

// A sockaddr for "1.2.3.4" or "::1" and `port`.
struct Address {
  sockaddr_storage storage{};
  Address(const std::string& ip, int port) {
    if (ip.find(':') == std::string::npos) {
      auto* in = reinterpret_cast<sockaddr_in*>(&storage);
      in->sin_family = AF_INET;
      in->sin_port = htons(static_cast<uint16_t>(port));
      EXPECT_EQ(inet_pton(AF_INET, ip.c_str(), &in->sin_addr), 1) << ip;
    } else {
      auto* in = reinterpret_cast<sockaddr_in6*>(&storage);
      in->sin6_family = AF_INET6;
      in->sin6_port = htons(static_cast<uint16_t>(port));
      EXPECT_EQ(inet_pton(AF_INET6, ip.c_str(), &in->sin6_addr), 1) << ip;
    }
  }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

std::string Kind(const std::string& ip) { return SpecialAddressKind(Address(ip, 443).get()); }

TEST(SpecialAddressKind, NamesEveryRangeAPullMustNotReach) {
  EXPECT_EQ(Kind("127.0.0.1"), "loopback");
  EXPECT_EQ(Kind("127.255.1.2"), "loopback");
  EXPECT_EQ(Kind("::1"), "loopback");
  EXPECT_EQ(Kind("0.0.0.0"), "unspecified");
  EXPECT_EQ(Kind("::"), "unspecified");
  EXPECT_EQ(Kind("169.254.169.254"), "link-local");
  EXPECT_EQ(Kind("fe80::1"), "link-local");
  EXPECT_EQ(Kind("10.1.2.3"), "private");
  EXPECT_EQ(Kind("172.16.0.1"), "private");
  EXPECT_EQ(Kind("172.31.255.255"), "private");
  EXPECT_EQ(Kind("192.168.1.1"), "private");
  EXPECT_EQ(Kind("fd00::1"), "private (unique local)");
  EXPECT_EQ(Kind("fc00::1"), "private (unique local)");
  EXPECT_EQ(Kind("100.64.0.1"), "shared (carrier-grade NAT)");
  EXPECT_EQ(Kind("224.0.0.1"), "multicast");
  EXPECT_EQ(Kind("ff02::1"), "multicast");
  EXPECT_EQ(Kind("255.255.255.255"), "reserved");
}

TEST(SpecialAddressKind, IPv4InIPv6FormsAreJudgedByTheirIPv4Address) {
  EXPECT_EQ(Kind("::ffff:127.0.0.1"), "loopback");
  EXPECT_EQ(Kind("::ffff:169.254.169.254"), "link-local");
  EXPECT_EQ(Kind("::ffff:10.0.0.1"), "private");
  EXPECT_EQ(Kind("64:ff9b::a9fe:a9fe"), "link-local");
  EXPECT_EQ(Kind("::ffff:8.8.8.8"), "");
}

TEST(SpecialAddressKind, PublicAddressesAreFine) {
  EXPECT_EQ(Kind("8.8.8.8"), "");
  EXPECT_EQ(Kind("172.32.0.1"), "");
  EXPECT_EQ(Kind("100.128.0.1"), "");
  EXPECT_EQ(Kind("2600:1f18::1"), "");
}

TEST(RegistryDestinations, ByDefaultOnlyPublicAddressesAreReached) {
  RegistryDestinations d;
  EXPECT_TRUE(d.Check("registry.example.com", 443, Address("93.184.216.34", 443).get()).ok());
  Status st = d.Check("localhost", 5000, Address("127.0.0.1", 5000).get());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kPermissionDenied);
  EXPECT_EQ(st.message(),
            "connecting to localhost:5000 (127.0.0.1) was refused: it is a loopback address, "
            "which pulls do not reach unless an operator allows that registry (adaptd "
            "--allow-registry)");
  st = d.Check("169.254.169.254", 80, Address("169.254.169.254", 80).get());
  EXPECT_NE(st.message().find("connecting to 169.254.169.254:80 was refused: it is a link-local"),
            std::string::npos)
      << st.message();
}

TEST(RegistryDestinations, AHostWithoutAPortIsAllowedOnEveryPort) {
  auto d = RegistryDestinations::Parse({"127.0.0.1"});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->Check("127.0.0.1", 5000, Address("127.0.0.1", 5000).get()).ok());
  EXPECT_TRUE(d->Check("127.0.0.1", 9000, Address("127.0.0.1", 9000).get()).ok());
  // By the address too: "localhost" connects to the allowed 127.0.0.1.
  EXPECT_TRUE(d->Check("localhost", 5000, Address("127.0.0.1", 5000).get()).ok());
  EXPECT_FALSE(d->Check("localhost", 5000, Address("::1", 5000).get()).ok());
  EXPECT_FALSE(d->Check("10.0.0.1", 5000, Address("10.0.0.1", 5000).get()).ok());
}

TEST(RegistryDestinations, ABareIPv6AddressIsAllowedOnEveryPort) {
  for (const char* entry : {"::1", "[::1]"}) {
    auto d = RegistryDestinations::Parse({entry});
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_TRUE(d->Check("[::1]", 5000, Address("::1", 5000).get()).ok()) << entry;
    EXPECT_TRUE(d->Check("localhost", 80, Address("::1", 80).get()).ok()) << entry;
    EXPECT_FALSE(d->Check("localhost", 80, Address("127.0.0.1", 80).get()).ok()) << entry;
  }
}

TEST(RegistryDestinations, AHostWithAPortIsAllowedOnThatPortOnly) {
  auto d = RegistryDestinations::Parse({"127.0.0.1:5000", "Registry.Internal:443", "[::1]:6000"});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_TRUE(d->Check("127.0.0.1", 5000, Address("127.0.0.1", 5000).get()).ok());
  EXPECT_FALSE(d->Check("127.0.0.1", 5001, Address("127.0.0.1", 5001).get()).ok());
  // A name the operator trusts may resolve to a private address.
  EXPECT_TRUE(d->Check("registry.internal", 443, Address("10.2.3.4", 443).get()).ok());
  EXPECT_FALSE(d->Check("registry.internal", 80, Address("10.2.3.4", 80).get()).ok());
  EXPECT_TRUE(d->Check("[::1]", 6000, Address("::1", 6000).get()).ok());
  EXPECT_FALSE(d->Check("[::1]", 6001, Address("::1", 6001).get()).ok());
}

TEST(RegistryDestinations, MalformedEntriesAreRefusedByName) {
  for (const char* bad : {"", ":5000", "host:", "host:0", "host:65536", "host:x", "[::1", "[zz]:1",
                          "a b", "host/path"}) {
    auto d = RegistryDestinations::Parse({bad});
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), Code::kInvalidArgument);
    EXPECT_NE(d.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << d.status().message();
  }
}

}  // namespace
}  // namespace adapt::image

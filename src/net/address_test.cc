#include "net/address.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace adapt::net {
namespace {

bool Blocked(const std::string& text) {
  auto ip = ParseIp(text);
  EXPECT_TRUE(ip.has_value()) << text;
  return ip && IsBlockedDestination(*ip);
}

TEST(Address, OnlyLiteralAddressesParse) {
  EXPECT_TRUE(ParseIp("1.1.1.1"));
  EXPECT_TRUE(ParseIp("2606:4700::1111"));
  for (const char* bad : {"", "1.1.1.1/32", "example.com", "1.1.1", "01.1.1.1x", "1.1.1.1 ",
                          "0x7f.0.0.1", "2130706433", "[::1]"})
    EXPECT_FALSE(ParseIp(bad)) << bad;
  EXPECT_EQ(ParseIp("2606:4700:0:0:0:0:0:1111")->text, "2606:4700::1111");
}

TEST(Address, PrivateAndHostRangesAreBlocked) {
  for (const char* a : {"10.1.2.3",
                        "172.16.0.1",
                        "172.31.255.255",
                        "192.168.1.1",
                        "100.64.0.1",
                        "169.254.169.254",
                        "127.0.0.1",
                        "0.0.0.0",
                        "224.0.0.1",
                        "239.1.1.1",
                        "240.0.0.1",
                        "255.255.255.255",
                        "::1",
                        "::",
                        "fc00::1",
                        "fd12::1",
                        "fe80::1",
                        "ff02::1",
                        "::ffff:169.254.169.254",
                        "::ffff:8.8.8.8",
                        "64:ff9b::a9fe:a9fe",
                        "::169.254.169.254",
                        "2002:a9fe:a9fe::1",
                        "2001:0:4136:e378:8000:63bf:3fff:fdd2"})  // Teredo
    EXPECT_TRUE(Blocked(a)) << a;
}

// The firewall's sets block what the address check refuses: every blocked IPv4 range in its
// 6to4 form (a host with a 6to4 route would send 2002:a00:1::1 on to 10.0.0.1), and Teredo.
TEST(Address, TheIpv6SetHoldsThe6to4FormOfEveryBlockedIpv4Range) {
  const auto& v6 = BlockedIpv6Ranges();
  auto has = [&](const std::string& range) {
    return std::find(v6.begin(), v6.end(), range) != v6.end();
  };
  EXPECT_TRUE(has("2002:a00::/24")) << "10.0.0.0/8";
  EXPECT_TRUE(has("2002:a9fe::/32")) << "169.254.0.0/16";
  EXPECT_TRUE(has("2002:c000::/45")) << "192.0.0.0/29";
  EXPECT_TRUE(has("2002:e000::/20")) << "224.0.0.0/4";
  EXPECT_TRUE(has("2001::/32"));
  EXPECT_EQ(v6.size(), 10 + BlockedIpv4Ranges().size());
}

TEST(Address, PublicAddressesAreNot) {
  for (const char* a : {"1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "198.51.100.7",
                        "203.0.113.9", "2606:4700::1111", "2a00:1450::1",
                        // documentation ranges: public like IPv4's (the e2e stand-in uses them)
                        "2001:db8::10"})
    EXPECT_FALSE(Blocked(a)) << a;
}

TEST(AddressPool, CutsSlash30Blocks) {
  auto p = AddressPool::Parse("10.88.0.0/16");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->slots(), 16384);
  EXPECT_EQ(p->HostAddress(0), "10.88.0.1");
  EXPECT_EQ(p->SandboxAddress(0), "10.88.0.2");
  EXPECT_EQ(p->SandboxAddress(64), "10.88.1.2");
  EXPECT_EQ(AddressPool::Parse("10.88.7.9/16")->cidr(), "10.88.0.0/16");
  for (const char* bad :
       {"10.88.0.0", "10.88.0.0/30", "10.88.0.0/4", "fd00::/64", "x/16", "10.88.0.0/1a"})
    EXPECT_FALSE(AddressPool::Parse(bad).ok()) << bad;
}

TEST(AddressPool, SandboxSlotIsOnlyForTheSandboxSideOfABlock) {
  auto p = AddressPool::Parse("10.88.0.0/16");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->SandboxSlot("10.88.0.2"), 0);
  EXPECT_EQ(p->SandboxSlot(p->SandboxAddress(1234)), 1234);
  EXPECT_EQ(p->SandboxSlot(p->HostAddress(7)), std::nullopt);
  EXPECT_EQ(p->SandboxSlot("10.88.0.3"), std::nullopt);
  EXPECT_EQ(p->SandboxSlot("10.89.0.2"), std::nullopt);
  EXPECT_EQ(p->SandboxSlot("127.0.0.1"), std::nullopt);
  EXPECT_EQ(p->SandboxSlot("fd00::2"), std::nullopt);
  EXPECT_EQ(p->SandboxSlot("not an address"), std::nullopt);
}

TEST(AddressPool, OverlapWithHostRoutes) {
  auto p = AddressPool::Parse("10.88.0.0/16");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->Overlaps("10.0.0.0/8"));
  EXPECT_TRUE(p->Overlaps("10.88.3.0/24"));
  EXPECT_TRUE(p->Overlaps("10.88.3.4"));
  EXPECT_FALSE(p->Overlaps("10.89.0.0/16"));
  EXPECT_FALSE(p->Overlaps("192.0.2.0/24"));
  EXPECT_FALSE(p->Overlaps("default"));
  EXPECT_FALSE(p->Overlaps("fd00::/64"));
}

TEST(AddressPool6, EmbedsTheIpv4PoolInAUniqueLocal96) {
  auto v4 = AddressPool::Parse("10.88.0.0/16");
  ASSERT_TRUE(v4.ok());
  auto p = AddressPool6::Parse("fd61:6461:7074::/96", *v4);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->cidr(), "fd61:6461:7074::a58:0/112");
  EXPECT_EQ(p->Embed(v4->SandboxAddress(64)), "fd61:6461:7074::a58:102");
  EXPECT_EQ(p->Embed(v4->HostAddress(0)), "fd61:6461:7074::a58:1");
  for (const char* bad : {"fd61:6461:7074::/64", "2001:db8::/96", "fd61::1/96", "10.0.0.0/8",
                          "fd61:6461:7074::", "x/96"})
    EXPECT_FALSE(AddressPool6::Parse(bad, *v4).ok()) << bad;
}

}  // namespace
}  // namespace adapt::net

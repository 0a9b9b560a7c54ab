#include "net/hostname_table.h"

#include <gtest/gtest.h>

namespace adapt::net {
namespace {

DnsAddress A(const std::string& ip, uint32_t ttl = 5) { return {*ParseIp(ip), ttl}; }

void Fill(HostnameTable& t) {
  t.Put({"sbx_a",
         "10.88.0.2",
         {{"api.example.com", 443}, {"files.example.com", 8443}},
         "1.1.1.1",
         false});
}

TEST(HostnameTable, PassesOnlyAListedNameOnItsPortToAnAnsweredAddress) {
  HostnameTable t;
  Fill(t);
  EXPECT_TRUE(t.Lists("10.88.0.2", "api.example.com"));
  EXPECT_FALSE(t.Lists("10.88.0.2", "other.example.com"));
  EXPECT_FALSE(t.Lists("10.88.0.6", "api.example.com"));
  // Not resolved yet: a hard-coded address alone is refused.
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "198.51.100.7", 443, 0), "");
  t.Record("10.88.0.2", "api.example.com", {A("198.51.100.7")}, 0);
  EXPECT_EQ(t.Check("10.88.0.2", "api.example.com", "198.51.100.7", 443, 1000), "");
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "198.51.100.8", 443, 1000), "");
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "198.51.100.7", 8443, 1000), "");
  EXPECT_NE(t.Check("10.88.0.2", "files.example.com", "198.51.100.7", 8443, 1000), "");
  EXPECT_NE(t.Check("10.88.0.2", "", "198.51.100.7", 443, 1000), "");
  EXPECT_NE(t.Check("10.88.0.6", "api.example.com", "198.51.100.7", 443, 1000), "");
  // Kept at least kMinAnswerMillis, then gone.
  EXPECT_EQ(t.Check("10.88.0.2", "api.example.com", "198.51.100.7", 443, kMinAnswerMillis - 1), "");
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "198.51.100.7", 443, kMinAnswerMillis), "");
}

TEST(HostnameTable, APrivateAnswerIsNeverADestination) {
  HostnameTable t;
  Fill(t);
  t.Record("10.88.0.2", "api.example.com", {A("169.254.169.254"), A("10.0.0.1")}, 0);
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "169.254.169.254", 443, 1), "");
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "10.0.0.1", 443, 1), "");
}

TEST(HostnameTable, AnAddressOfTheSandboxPoolIsNeverADestinationEvenWhenPublic) {
  HostnameTable t;
  Fill(t);
  // An operator's pool of public addresses: the blocked ranges do not cover it.
  auto pool = AddressPool::Parse("198.51.100.0/24");
  ASSERT_TRUE(pool.ok());
  t.Record("10.88.0.2", "api.example.com", {A("198.51.100.6"), A("203.0.113.9")}, 0);
  EXPECT_EQ(t.Check("10.88.0.2", "api.example.com", "198.51.100.6", 443, 1000), "");
  t.SetSandboxPool(*pool);
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "198.51.100.6", 443, 1000), "");
  EXPECT_EQ(t.Check("10.88.0.2", "api.example.com", "203.0.113.9", 443, 1000), "");
}

TEST(HostnameTable, RemovedOrReplacedSandboxesForgetTheirAnswers) {
  HostnameTable t;
  Fill(t);
  t.Record("10.88.0.2", "api.example.com", {A("198.51.100.7")}, 0);
  t.Put({"sbx_b", "10.88.0.2", {{"api.example.com", 443}}, "1.1.1.1", false});
  EXPECT_NE(t.Check("10.88.0.2", "api.example.com", "198.51.100.7", 443, 1), "");
  t.Remove("10.88.0.2");
  EXPECT_FALSE(t.Find("10.88.0.2"));
}

TEST(HostnameTable, AddressesPerNameAreBounded) {
  HostnameTable t;
  Fill(t);
  for (int i = 0; i < 100; ++i)
    t.Record("10.88.0.2", "api.example.com", {A("198.51.100." + std::to_string(i), i)}, 0);
  int kept = 0;
  for (int i = 0; i < 100; ++i)
    kept +=
        t.Check("10.88.0.2", "api.example.com", "198.51.100." + std::to_string(i), 443, 1).empty();
  EXPECT_EQ(kept, static_cast<int>(kMaxAddressesPerName));
}

}  // namespace
}  // namespace adapt::net

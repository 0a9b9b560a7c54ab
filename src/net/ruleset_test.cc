#include "net/ruleset.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "net/nftables.h"

namespace adapt::net {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

SandboxNet Sandbox(const std::string& egress) {
  SandboxNet sb;
  sb.sandbox_id = "sbx_abc";
  sb.slot = 7;
  sb.address = "10.88.0.30";
  sb.host_address = "10.88.0.29";
  sb.policy.egress = egress;
  return sb;
}

TEST(Ruleset, FullRulesetReplacesOnlyAdaptsTableAndBlocksThePool) {
  RulesetScope scope{"adapt", "10.88.0.0/16", 0, 0, 0, ""};
  std::string s = FullRuleset(scope, {Sandbox("open")});
  EXPECT_EQ(s.rfind("add table inet adapt\ndelete table inet adapt\nadd table inet adapt\n", 0),
            0u);
  EXPECT_NE(s.find("169.254.0.0/16"), std::string::npos);
  EXPECT_NE(s.find("10.88.0.0/16 }"), std::string::npos);
  EXPECT_NE(s.find("64:ff9b::/96"), std::string::npos);
  EXPECT_TRUE(Has(s, "add rule inet adapt input ip saddr 10.88.0.0/16 drop"));
  EXPECT_LT(s.find("input iifname \"lo\" accept"), s.find("input ip saddr 10.88.0.0/16 drop"));
  EXPECT_TRUE(Has(s, "add rule inet adapt forward ip saddr 10.88.0.0/16 jump from_sandbox"));
  EXPECT_TRUE(Has(s, "add rule inet adapt forward ip daddr 10.88.0.0/16 drop"));
  EXPECT_TRUE(Has(s,
                  "add rule inet adapt postrouting ip saddr 10.88.0.0/16 ip daddr != 10.88.0.0/16 "
                  "masquerade"));
  EXPECT_TRUE(Has(s, "add element inet adapt sandboxes { \"ad0a58001e\" : jump sbx_abc }"));
  // Every command names adapt's table: nothing else is touched.
  size_t pos = 0;
  while ((pos = s.find('\n', pos)) != std::string::npos && pos + 1 < s.size()) {
    std::string line = s.substr(pos + 1, s.find('\n', pos + 1) - pos - 1);
    EXPECT_NE(line.find(" inet adapt"), std::string::npos) << line;
    ++pos;
  }
}

TEST(Ruleset, TheStorageGatewayPortIsTheOneHostPortSandboxesReach) {
  RulesetScope none{"adapt", "10.88.0.0/16", 0, 0, 0, ""};
  EXPECT_EQ(FullRuleset(none, {}).find("dport"), std::string::npos);
  RulesetScope scope{"adapt", "10.88.0.0/16", 8082, 0, 0, ""};
  std::string s = FullRuleset(scope, {Sandbox("none")});
  const std::string allow =
      "add rule inet adapt input iifname @ifs ip saddr 10.88.0.0/16 ip daddr 10.88.0.0/16 tcp "
      "dport "
      "8082 accept";
  ASSERT_TRUE(Has(s, allow));
  // Before the drop, so it matters; only towards pool addresses (the veths' host ends).
  EXPECT_LT(s.find(allow), s.find("input ip saddr 10.88.0.0/16 drop"));
  EXPECT_EQ(s.find("dport 8082", s.find(allow) + allow.size()), std::string::npos);
}

TEST(Ruleset, TheDatabaseProxyPortIsReachedFromSandboxesAtTheirGatewayOnly) {
  RulesetScope scope{"adapt", "10.88.0.0/16", 8082, 0, 0, ""};
  scope.database_port = 5433;
  std::string s = FullRuleset(scope, {Sandbox("none")});
  const std::string allow =
      "add rule inet adapt input iifname @ifs ip saddr 10.88.0.0/16 ip daddr 10.88.0.0/16 tcp "
      "dport 5433 accept";
  ASSERT_TRUE(Has(s, allow));
  EXPECT_LT(s.find(allow), s.find("input ip saddr 10.88.0.0/16 drop"));
  EXPECT_EQ(s.find("dport 5433", s.find(allow) + allow.size()), std::string::npos);
}

TEST(Ruleset, AnythingElseFromASandboxInterfaceIsDroppedWhateverItsSource) {
  // A sandbox that forges a source outside the pool is still known by its interface.
  RulesetScope scope{"adapt", "10.88.0.0/16", 8082, 5353, 7443, ""};
  SandboxNet sb = Sandbox("allowlist");
  sb.policy.hostnames = {{"example.com", 443}};
  std::string s = FullRuleset(scope, {sb});
  const std::string drop = "add rule inet adapt input iifname @ifs drop";
  ASSERT_TRUE(Has(s, drop));
  // After every accept of the input chain: the proxies, the storage gateway and replies.
  size_t input_accepts = 0;
  for (size_t pos = 0; (pos = s.find("input ", pos)) != std::string::npos; ++pos) {
    size_t end = s.find('\n', pos);
    if (s.substr(pos, end - pos).ends_with(" accept")) input_accepts = pos;
  }
  EXPECT_LT(input_accepts, s.find(drop));
  EXPECT_TRUE(Has(s, "add element inet adapt ifs { \"ad0a58001e\" }"));
}

TEST(Ruleset, OpenBlocksRangesBeforeAccepting) {
  SandboxNet sb = Sandbox("open");
  sb.policy.dns = "1.1.1.1";
  std::string s = SandboxRules({"adapt", "10.88.0.0/16", 0, 0, 0, ""}, sb);
  auto dns = s.find("ip daddr 1.1.1.1 udp dport 53 accept");
  auto blocked = s.find("ip daddr @blocked4 drop");
  auto blocked6 = s.find("ip6 daddr @blocked6 drop");
  auto accept = s.find("add rule inet adapt sbx_abc accept\n");
  ASSERT_NE(accept, std::string::npos);
  EXPECT_LT(dns, blocked);
  EXPECT_LT(blocked, accept);
  EXPECT_LT(blocked6, accept);
}

// A public pool is in no blocked range: the resolver's early accept must not reach it.
TEST(Ruleset, TheResolversAcceptNeverReachesThePool) {
  SandboxNet sb = Sandbox("allowlist");
  sb.policy.dns = "198.18.0.6";
  std::string s = SandboxRules({"adapt", "198.18.0.0/24", 0, 0, 0, "fd61:6461:7074::/96"}, sb);
  auto pool = s.find("ip daddr 198.18.0.0/24 drop");
  auto pool6 = s.find("ip6 daddr fd61:6461:7074::/96 drop");
  auto dns = s.find("ip daddr 198.18.0.6 udp dport 53 accept");
  ASSERT_NE(dns, std::string::npos);
  EXPECT_LT(pool, dns);
  EXPECT_LT(pool6, dns);
}

TEST(Ruleset, AllowlistAcceptsExactlyItsRulesThenDrops) {
  SandboxNet sb = Sandbox("allowlist");
  sb.policy.allow = {{"tcp", "1.1.1.1", 443}, {"udp", "2606:4700::1111", 53}};
  std::string s = SandboxRules({"adapt", "10.88.0.0/16", 0, 0, 0, ""}, sb);
  EXPECT_TRUE(Has(s, "add rule inet adapt sbx_abc ip daddr 1.1.1.1 tcp dport 443 accept"));
  EXPECT_TRUE(Has(s, "add rule inet adapt sbx_abc ip6 daddr 2606:4700::1111 udp dport 53 accept"));
  EXPECT_TRUE(Has(s, "add rule inet adapt sbx_abc drop"));
  EXPECT_EQ(s.find("dport 53 accept\nadd rule inet adapt sbx_abc ip daddr @blocked4"),
            std::string::npos)
      << "no resolver without network.dns";
  EXPECT_EQ(s.find("sbx_abc accept\n"), std::string::npos);
}

TEST(Ruleset, InterfaceNamesComeFromTheAddressAndFitIfnamsiz) {
  EXPECT_EQ(HostInterface("10.88.0.30"), "ad0a58001e");
  EXPECT_LT(HostInterface("10.255.255.254").size(), 16u);
  EXPECT_EQ(NetnsName("adapt", "sbx_abc"), "adapt-sbx_abc");
}

// The kernel's nftables accepts what adapt generates (a dry run: nothing is applied).
TEST(Ruleset, TheKernelAcceptsTheRuleset) {
  ASSERT_EQ(::geteuid(), 0u) << "checking rules with the kernel needs root";
  SandboxNet open = Sandbox("open");
  open.policy.dns = "1.1.1.1";
  SandboxNet allow = Sandbox("allowlist");
  allow.sandbox_id = "sbx_def";
  allow.address = "10.88.0.34";
  allow.policy.allow = {{"tcp", "1.1.1.1", 443}, {"udp", "2606:4700::1111", 53}};
  Status st = CheckNft(FullRuleset({"adapt_dryrun", "10.88.0.0/16", 0, 0, 0, ""}, {open, allow}));
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(CheckNft("add rule inet adapt_dryrun nowhere bogus").ok());
}

TEST(Ruleset, RemovalDropsTheMapEntryBeforeTheChain) {
  std::string s = RemoveSandboxRules({"t2", "10.89.0.0/16", 0, 0, 0, ""}, Sandbox("open"));
  EXPECT_EQ(s,
            "delete element inet t2 ifs { \"ad0a58001e\" }\n"
            "delete element inet t2 sandboxes { \"ad0a58001e\" }\n"
            "delete chain inet t2 sbx_abc\n");
}

SandboxNet WithHostnames() {
  SandboxNet sb = Sandbox("allowlist");
  sb.sandbox_id = "sbx_tls";
  sb.address = "10.88.0.38";
  sb.host_address = "10.88.0.37";
  sb.policy.hostnames = {{"api.example.com", 443}, {"files.example.com", 8443}};
  sb.policy.allow = {{"tcp", "1.1.1.1", 443}, {"tcp", "1.0.0.1", 80}};
  sb.policy.dns_upstream = "1.1.1.1";
  return sb;
}

TEST(Ruleset, HostnameRulesRedirectDnsAndTheirPortsToTheProxies) {
  RulesetScope scope{"adapt", "10.88.0.0/16", 0, 5353, 7443, ""};
  std::string s = SandboxRules(scope, WithHostnames());
  const std::string c = "add rule inet adapt nat_sbx_tls ";
  EXPECT_TRUE(Has(s, c + "ip daddr 10.88.0.37 udp dport 53 redirect to :5353"));
  // The IP rule on a proxied port is an exception; the one on port 80 needs none.
  EXPECT_TRUE(Has(s, c + "ip daddr 1.1.1.1 tcp dport 443 return"));
  EXPECT_EQ(s.find("1.0.0.1 tcp dport 80 return"), std::string::npos);
  EXPECT_TRUE(Has(s, c + "meta nfproto ipv4 tcp dport { 443, 8443 } redirect to :7443"));
  EXPECT_LT(s.find("tcp dport 443 return"), s.find("redirect to :7443"));
  EXPECT_TRUE(Has(s, "add element inet adapt proxied { \"ad0a580026\" . 10.88.0.38 }"));
  EXPECT_TRUE(Has(s, "add element inet adapt proxied_nat { \"ad0a580026\" : jump nat_sbx_tls }"));
  // The sandbox's own chain has no resolver: DNS goes only to the proxy.
  EXPECT_EQ(s.find("dport 53 accept"), std::string::npos);
  std::string full = FullRuleset(scope, {});
  EXPECT_TRUE(
      Has(full, "add rule inet adapt input iifname . ip saddr @proxied udp dport 5353 accept"));
  EXPECT_TRUE(
      Has(full, "add rule inet adapt input iifname . ip saddr @proxied tcp dport 7443 accept"));
  EXPECT_LT(full.find("@proxied tcp dport 7443 accept"),
            full.find("input ip saddr 10.88.0.0/16 drop"));
  // DNS over TCP to the gateway: reset at once, not left to time out.
  EXPECT_TRUE(Has(full,
                  "add rule inet adapt input iifname . ip saddr @proxied tcp dport 53 reject with "
                  "tcp reset"));
  EXPECT_LT(full.find("tcp dport 53 reject"), full.find("input ip saddr 10.88.0.0/16 drop"));
  // Without the proxies running nothing is redirected.
  EXPECT_EQ(SandboxRules({"adapt", "10.88.0.0/16", 0, 0, 0, ""}, WithHostnames()).find("redirect"),
            std::string::npos);
}

TEST(Ruleset, TheKernelAcceptsHostnameRulesAndTheirRemoval) {
  ASSERT_EQ(::geteuid(), 0u) << "checking rules with the kernel needs root";
  RulesetScope scope{"adapt_dryrun2", "10.88.0.0/16", 0, 5353, 7443, ""};
  Status st = CheckNft(FullRuleset(scope, {WithHostnames(), Sandbox("open")}));
  EXPECT_TRUE(st.ok()) << st.message();
  std::string removal = RemoveSandboxRules(scope, WithHostnames());
  EXPECT_LT(removal.find("delete element inet adapt_dryrun2 proxied_nat"),
            removal.find("delete chain inet adapt_dryrun2 nat_sbx_tls"));
}

TEST(Ruleset, Ipv6GoesThroughTheSameChainsAndNeverIntoTheHost) {
  RulesetScope scope{"adapt", "10.88.0.0/16", 0, 0, 0, "fd61:6461:7074::a58:0/112"};
  SandboxNet sb = Sandbox("allowlist");
  sb.address6 = "fd61:6461:7074::a58:1e";
  sb.host_address6 = "fd61:6461:7074::a58:1d";
  sb.policy.allow = {{"tcp", "2001:db8::10", 80}};
  std::string s = FullRuleset(scope, {sb});
  const std::string p6 = "fd61:6461:7074::a58:0/112";
  EXPECT_TRUE(Has(s, "add rule inet adapt forward ip6 saddr " + p6 + " jump from_sandbox"));
  EXPECT_TRUE(Has(s, "add rule inet adapt forward ip6 daddr " + p6 + " drop"));
  EXPECT_TRUE(Has(s, "add rule inet adapt postrouting ip6 saddr " + p6 + " ip6 daddr != " + p6 +
                         " masquerade"));
  // The sandbox's own ULA block is inside fc00::/7, which its chain drops (other sandboxes,
  // the host's unique-local networks) before any accept.
  EXPECT_NE(s.find("fc00::/7"), std::string::npos);
  EXPECT_LT(s.find("add rule inet adapt sbx_abc ip6 daddr @blocked6 drop"),
            s.find("add rule inet adapt sbx_abc ip6 daddr 2001:db8::10 tcp dport 80 accept"));
  // Into the host over IPv6 (its ULA or any link-local address): neighbour discovery only.
  EXPECT_TRUE(Has(s, "add element inet adapt ifs { \"ad0a58001e\" }"));
  EXPECT_TRUE(Has(s, "add rule inet adapt input iifname @ifs meta nfproto ipv6 drop"));
  EXPECT_LT(s.find("nd-neighbor-advert } accept"), s.find("@ifs meta nfproto ipv6 drop"));
  // Nothing from a sandbox interface with a source outside the pool is forwarded.
  EXPECT_LT(s.find("forward ip6 daddr " + p6 + " drop"), s.find("forward iifname @ifs drop"));
  EXPECT_TRUE(
      Has(RemoveSandboxRules(scope, sb), "delete element inet adapt ifs { \"ad0a58001e\" }"));
  // Without an IPv6 pool no IPv6 forwarding rule exists, but the host is still closed.
  std::string v4 = FullRuleset({"adapt", "10.88.0.0/16", 0, 0, 0, ""}, {sb});
  EXPECT_EQ(v4.find("forward ip6"), std::string::npos);
  EXPECT_TRUE(Has(v4, "add rule inet adapt input iifname @ifs meta nfproto ipv6 drop"));
}

TEST(Ruleset, TheKernelAcceptsIpv6Rules) {
  ASSERT_EQ(::geteuid(), 0u) << "checking rules with the kernel needs root";
  RulesetScope scope{
      "adapt_dryrun3", "10.88.0.0/16", 8082, 5353, 7443, "fd61:6461:7074::a58:0/112"};
  SandboxNet sb = Sandbox("open");
  sb.address6 = "fd61:6461:7074::a58:1e";
  Status st = CheckNft(FullRuleset(scope, {sb, WithHostnames()}));
  EXPECT_TRUE(st.ok()) << st.message();
}

}  // namespace
}  // namespace adapt::net

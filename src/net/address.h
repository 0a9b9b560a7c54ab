// IP addresses as egress rules see them: strict parsing (no CIDR, no names) and the ranges
// that are never a sandbox's destination (private, loopback, link-local, multicast, ...).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::net {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 uses the first 4
  std::string text;                 // canonical form
};

// Parses one literal address (dotted IPv4 or IPv6); nullopt for anything else.
std::optional<IpAddress> ParseIp(const std::string& text);

// True when `ip` is in a range egress never reaches: RFC 1918, CGNAT, loopback, link-local
// (metadata), "this network", multicast, reserved, broadcast, unique-local and link-local
// IPv6, and IPv4-mapped / IPv4-compatible / NAT64 forms of blocked IPv4 addresses.
bool IsBlockedDestination(const IpAddress& ip);

// The blocked ranges in nftables' notation (the ruleset's sets).
const std::vector<std::string>& BlockedIpv4Ranges();
const std::vector<std::string>& BlockedIpv6Ranges();

// An IPv4 pool "a.b.c.d/len" cut into /30 blocks: block `slot` gives the host side .1
// and the sandbox .2 of its four addresses.
class AddressPool {
 public:
  static Result<AddressPool> Parse(const std::string& cidr);
  int64_t slots() const { return slots_; }
  std::string cidr() const { return cidr_; }
  std::string HostAddress(int64_t slot) const { return Nth(slot * 4 + 1); }
  std::string SandboxAddress(int64_t slot) const { return Nth(slot * 4 + 2); }
  // True when the IPv4 block `cidr` ("a.b.c.d/len", or one address) shares an address with
  // the pool; false for anything unparsable.
  bool Overlaps(const std::string& cidr) const;
  // The slot whose sandbox address `address` is (the .2 of its /30); nullopt for any other
  // address, the pool's host sides included.
  std::optional<int64_t> SandboxSlot(const std::string& address) const;

 private:
  std::string Nth(int64_t n) const;
  uint32_t base_ = 0;
  int len_ = 32;
  int64_t slots_ = 0;
  std::string cidr_;
};

// The IPv6 side of the pool: a unique-local /96 prefix with each address of the IPv4 pool
// in its last 32 bits, so that a sandbox's IPv6 address mirrors its IPv4 one (its /30 is a
// /126) and two adaptds with disjoint IPv4 pools have disjoint IPv6 ones too.
class AddressPool6 {
 public:
  // `prefix` is "<ULA prefix>::/96" (inside fc00::/7).
  static Result<AddressPool6> Parse(const std::string& prefix, const AddressPool& v4);
  // The IPv6 address of the IPv4 pool address `v4`.
  std::string Embed(const std::string& v4) const;
  // The IPv6 block of the IPv4 pool: "<prefix>:<v4 base>/<96 + v4 length>".
  std::string cidr() const { return cidr_; }

 private:
  std::array<uint8_t, 16> prefix_{};
  std::string cidr_;
};

}  // namespace adapt::net

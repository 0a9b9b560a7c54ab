// The little of the DNS wire format (RFC 1035) the sandbox DNS proxy needs: the question of
// a query, an error reply to it, and the addresses in an answer. Everything is parsed
// defensively: the bytes come from a sandbox or from the network.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/address.h"

namespace adapt::net {

struct DnsQuestion {
  uint16_t id = 0;
  std::string name;  // lower case, no trailing dot ("" for the root)
  uint16_t type = 0;
  uint16_t klass = 0;
  size_t end = 0;  // offset just past the question
};

inline constexpr int kDnsServFail = 2;
inline constexpr uint16_t kDnsTypeAaaa = 28;
inline constexpr int kDnsNxDomain = 3;

// A standard query with exactly one question (an EDNS OPT record may follow); nullopt for
// anything else (responses, other opcodes, compression in the question, truncation).
std::optional<DnsQuestion> ParseDnsQuery(std::span<const uint8_t> query);

// A reply to `query` carrying only its question and `rcode`.
std::vector<uint8_t> DnsErrorReply(std::span<const uint8_t> query, const DnsQuestion& q, int rcode);

struct DnsAddress {
  IpAddress ip;
  uint32_t ttl = 0;
};

// The A and AAAA records of the answer section of a response with id `id`; nullopt when the
// response is malformed or not a response to that id.
std::optional<std::vector<DnsAddress>> ParseDnsAnswers(std::span<const uint8_t> response,
                                                       uint16_t id);

// Whether a response has the TC bit: the answer did not fit in the datagram.
bool DnsTruncated(std::span<const uint8_t> response);

// The largest UDP reply the client of `query` accepts: the payload size of its EDNS OPT
// record (clamped to 512..4096), else 512 (RFC 1035).
size_t DnsUdpLimit(std::span<const uint8_t> query, const DnsQuestion& q);

// A reply to `query` with those `answers` of the question's type (A or AAAA) as records of
// the question's name, as many as fit in `limit` bytes, never truncated: what the DNS proxy
// sends when the full answer (fetched over TCP) is too big for the client's datagram.
std::vector<uint8_t> DnsAddressReply(std::span<const uint8_t> query, const DnsQuestion& q,
                                     const std::vector<DnsAddress>& answers, size_t limit);

}  // namespace adapt::net

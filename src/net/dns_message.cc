#include "net/dns_message.h"

#include <algorithm>
#include <cstdio>

namespace adapt::net {
namespace {

uint16_t U16(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint16_t>(b[at] << 8 | b[at + 1]);
}

// Skips a (possibly compressed) name starting at `at`; the offset after it, or nullopt.
std::optional<size_t> SkipName(std::span<const uint8_t> b, size_t at) {
  for (int labels = 0; labels < 128; ++labels) {
    if (at >= b.size()) return std::nullopt;
    uint8_t len = b[at];
    if ((len & 0xC0) == 0xC0)
      return at + 2 <= b.size() ? std::optional<size_t>(at + 2) : std::nullopt;
    if (len & 0xC0) return std::nullopt;
    if (len == 0) return at + 1;
    at += 1 + len;
  }
  return std::nullopt;
}

}  // namespace

std::optional<DnsQuestion> ParseDnsQuery(std::span<const uint8_t> b) {
  if (b.size() < 12 || b.size() > 4096) return std::nullopt;
  uint16_t flags = U16(b, 2);
  bool response = flags & 0x8000;
  int opcode = (flags >> 11) & 0xF;
  if (response || opcode != 0) return std::nullopt;
  if (U16(b, 4) != 1 || U16(b, 6) != 0 || U16(b, 8) != 0 || U16(b, 10) > 1) return std::nullopt;
  DnsQuestion q;
  q.id = U16(b, 0);
  size_t at = 12;
  while (true) {
    if (at >= b.size()) return std::nullopt;
    uint8_t len = b[at++];
    if (len == 0) break;
    if (len > 63 || at + len > b.size()) return std::nullopt;  // no compression in a question
    if (!q.name.empty()) q.name += '.';
    for (size_t i = 0; i < len; ++i) {
      char c = static_cast<char>(b[at + i]);
      q.name += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (q.name.size() > 253) return std::nullopt;
    at += len;
  }
  if (at + 4 > b.size()) return std::nullopt;
  q.type = U16(b, at);
  q.klass = U16(b, at + 2);
  q.end = at + 4;
  return q;
}

std::vector<uint8_t> DnsErrorReply(std::span<const uint8_t> query, const DnsQuestion& q,
                                   int rcode) {
  std::vector<uint8_t> r(query.begin(), query.begin() + static_cast<std::ptrdiff_t>(q.end));
  uint8_t rd = query[2] & 0x01;
  r[2] = static_cast<uint8_t>(0x80 | rd);              // QR, opcode 0, RD as asked
  r[3] = static_cast<uint8_t>(0x80 | (rcode & 0x0F));  // RA, rcode
  r[4] = 0, r[5] = 1;                                  // one question
  for (int i = 6; i < 12; ++i) r[i] = 0;               // no records
  return r;
}

std::optional<std::vector<DnsAddress>> ParseDnsAnswers(std::span<const uint8_t> b, uint16_t id) {
  if (b.size() < 12 || U16(b, 0) != id || !(b[2] & 0x80)) return std::nullopt;
  size_t qd = U16(b, 4), an = U16(b, 6);
  size_t at = 12;
  for (size_t i = 0; i < qd; ++i) {
    auto next = SkipName(b, at);
    if (!next || *next + 4 > b.size()) return std::nullopt;
    at = *next + 4;
  }
  std::vector<DnsAddress> out;
  for (size_t i = 0; i < an; ++i) {
    auto next = SkipName(b, at);
    if (!next || *next + 10 > b.size()) return std::nullopt;
    at = *next;
    uint16_t type = U16(b, at), klass = U16(b, at + 2);
    uint32_t ttl = static_cast<uint32_t>(U16(b, at + 4)) << 16 | U16(b, at + 6);
    uint16_t len = U16(b, at + 8);
    at += 10;
    if (at + len > b.size()) return std::nullopt;
    if (klass == 1 && ((type == 1 && len == 4) || (type == 28 && len == 16))) {
      char text[64];
      if (type == 1) {
        std::snprintf(text, sizeof text, "%u.%u.%u.%u", b[at], b[at + 1], b[at + 2], b[at + 3]);
      } else {
        std::snprintf(text, sizeof text, "%x:%x:%x:%x:%x:%x:%x:%x", U16(b, at), U16(b, at + 2),
                      U16(b, at + 4), U16(b, at + 6), U16(b, at + 8), U16(b, at + 10),
                      U16(b, at + 12), U16(b, at + 14));
      }
      if (auto ip = ParseIp(text)) out.push_back({*ip, ttl > 0x7FFFFFFF ? 0 : ttl});
    }
    at += len;
  }
  return out;
}

bool DnsTruncated(std::span<const uint8_t> b) { return b.size() >= 12 && (b[2] & 0x02); }

size_t DnsUdpLimit(std::span<const uint8_t> query, const DnsQuestion& q) {
  // The OPT record follows the question: root name (0), type 41, class = payload size.
  if (query.size() >= 12 && U16(query, 10) == 1 && q.end + 5 <= query.size() && query[q.end] == 0 &&
      U16(query, q.end + 1) == 41)
    return std::clamp<size_t>(U16(query, q.end + 3), 512, 4096);
  return 512;
}

std::vector<uint8_t> DnsAddressReply(std::span<const uint8_t> query, const DnsQuestion& q,
                                     const std::vector<DnsAddress>& answers, size_t limit) {
  std::vector<uint8_t> r = DnsErrorReply(query, q, 0);
  uint16_t count = 0;
  for (const auto& a : answers) {
    const bool fits_type = a.ip.v6 ? q.type == 28 : q.type == 1;
    const size_t len = a.ip.v6 ? 16 : 4;
    if (!fits_type || r.size() + 12 + len > limit || count == 0xFFFF) continue;
    // The name is a pointer to the question's (offset 12).
    r.insert(r.end(),
             {0xC0, 12, 0, static_cast<uint8_t>(q.type), 0, 1, static_cast<uint8_t>(a.ttl >> 24),
              static_cast<uint8_t>(a.ttl >> 16), static_cast<uint8_t>(a.ttl >> 8),
              static_cast<uint8_t>(a.ttl), 0, static_cast<uint8_t>(len)});
    r.insert(r.end(), a.ip.bytes.begin(), a.ip.bytes.begin() + static_cast<std::ptrdiff_t>(len));
    ++count;
  }
  r[6] = static_cast<uint8_t>(count >> 8), r[7] = static_cast<uint8_t>(count);
  return r;
}

}  // namespace adapt::net

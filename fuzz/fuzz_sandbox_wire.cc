// Everything a sandbox's root can send adaptd before any key or signature is checked, and what
// adaptd reads from the network on a sandbox's behalf: a DNS query to the DNS proxy (and an
// upstream answer to it), the first bytes of a TLS connection to the hostname proxy, the
// first message of a PostgreSQL client to the database proxy, the agent protocol's frames on
// the agent socket (the hello before its key is checked, every payload), an aws-chunked body
// and the SigV4 credentials of a storage gateway request. The first byte picks the parser.
// Invariants: nothing crashes, reads out of bounds or throws; what a parser accepts is within
// the bytes it was given; replies stay within the sizes they promise; frames and payloads
// that decode encode back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/protocol.h"
#include "net/client_hello.h"
#include "net/dns_message.h"
#include "net/pg_startup.h"
#include "storage/aws_chunked.h"
#include "storage/sigv4.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void DnsQuery(std::span<const uint8_t> data) {
  auto q = adapt::net::ParseDnsQuery(data);
  if (!q) return;
  Check(q->end <= data.size());
  auto error = adapt::net::DnsErrorReply(data, *q, adapt::net::kDnsServFail);
  Check(error.size() >= 12 && error[0] == data[0] && error[1] == data[1]);
  size_t limit = adapt::net::DnsUdpLimit(data, *q);
  Check(limit >= 512 && limit <= 4096);
  std::vector<adapt::net::DnsAddress> answers;
  for (const char* ip : {"192.0.2.1", "198.51.100.7", "2001:db8::1"})
    answers.push_back({*adapt::net::ParseIp(ip), 60});
  for (int i = 0; i < 300; ++i) answers.push_back({*adapt::net::ParseIp("203.0.113.9"), 5});
  auto reply = adapt::net::DnsAddressReply(data, *q, answers, limit);
  Check(reply.size() <= limit);
}

void DnsAnswer(std::span<const uint8_t> data) {
  if (data.size() < 2) return;
  uint16_t id = static_cast<uint16_t>(data[0] << 8 | data[1]);
  auto answers = adapt::net::ParseDnsAnswers(data, id);
  if (answers) Check(answers->size() <= data.size() / 4);
  (void)adapt::net::DnsTruncated(data);
}

void TlsHello(std::span<const uint8_t> data) {
  adapt::net::ClientHello hello;
  auto status = adapt::net::ParseClientHello(data, &hello);
  if (status != adapt::net::HelloStatus::kOk) return;
  Check(hello.server_name.size() <= data.size());
  for (char c : hello.server_name) Check(!(c >= 'A' && c <= 'Z'));
}

void PgStartup(std::string_view data) {
  auto m = adapt::net::ParseStartup(data);
  using adapt::net::StartupKind;
  if (m.kind == StartupKind::kNeedMore || m.kind == StartupKind::kInvalid) return;
  Check(m.length <= data.size() && m.length <= adapt::net::kMaxStartupBytes);
  // The names come from the message's own bytes (the database is the user's when unnamed).
  Check(m.user.size() < m.length && m.database.size() < m.length);
}

void AgentFrames(std::string_view data) {
  // The second byte splits the stream into pieces of that many bytes (1..256).
  if (data.empty()) return;
  size_t piece = static_cast<uint8_t>(data[0]) + 1;
  data.remove_prefix(1);
  adapt::agent::FrameDecoder decoder;
  size_t fed = 0;
  for (;;) {
    adapt::agent::Frame f;
    auto next = decoder.Pop(f);
    if (next == adapt::agent::FrameDecoder::Next::kBad) return;
    if (next == adapt::agent::FrameDecoder::Next::kNeedMore) {
      if (fed >= data.size()) return;
      size_t n = std::min(piece, data.size() - fed);
      decoder.Feed(data.substr(fed, n));
      fed += n;
      continue;
    }
    Check(f.payload.size() <= fed);
    std::string again = adapt::agent::EncodeFrame(f.type, f.channel, f.payload);
    adapt::agent::FrameDecoder redo;
    redo.Feed(again);
    adapt::agent::Frame g;
    Check(redo.Pop(g) == adapt::agent::FrameDecoder::Next::kFrame);
    Check(g.type == f.type && g.channel == f.channel && g.payload == f.payload);
    uint32_t version = 0;
    std::string key;
    std::vector<adapt::agent::HeldProcess> held;
    if (adapt::agent::DecodeHello(f.payload, version, key, held))
      Check(key.size() <= f.payload.size() && held.size() <= f.payload.size());
    adapt::agent::SpawnRequest spawn;
    if (adapt::agent::DecodeSpawn(f.payload, spawn)) {
      adapt::agent::SpawnRequest back;
      Check(adapt::agent::DecodeSpawn(adapt::agent::EncodeSpawn(spawn), back));
      Check(back.argv == spawn.argv && back.env == spawn.env && back.cwd == spawn.cwd &&
            back.uid == spawn.uid && back.gid == spawn.gid && back.tag == spawn.tag &&
            back.data_token == spawn.data_token && back.has_stdin == spawn.has_stdin);
    }
    std::vector<int32_t> ints;
    for (size_t count : {1, 2, 3})
      if (adapt::agent::DecodeInts(f.payload, count, ints)) Check(ints.size() == count);
  }
}

void AwsChunked(std::string_view data) {
  adapt::storage::SigV4Authorization auth;
  auth.access_key = "stk_fuzz";
  auth.date = "20261204";
  auth.region = "us-east-1";
  auth.service = "s3";
  auth.signed_headers = "host;x-amz-content-sha256;x-amz-date";
  auth.signature = std::string(64, 'a');
  size_t off = 0;
  adapt::storage::ObjectSource raw = [&](char* buf, size_t n) -> long {
    // At most 7 bytes a read, so that every boundary of the framing is crossed.
    size_t take = std::min({n, data.size() - off, size_t{7}});
    std::memcpy(buf, data.data() + off, take);
    off += take;
    return static_cast<long>(take);
  };
  adapt::storage::AwsChunkedDecoder decoder(raw, auth, "secret", "20261204T120000Z");
  char buf[64];
  uint64_t total = 0;
  for (;;) {
    long n = decoder.Read(buf, sizeof buf);
    Check(n >= -1 && n <= static_cast<long>(sizeof buf));
    if (n <= 0) break;
    total += static_cast<uint64_t>(n);
  }
  Check(total <= data.size() && total == decoder.decoded_bytes());
}

void SigV4(std::string_view data) {
  std::string text(data);
  (void)adapt::storage::ParseSigV4Authorization(text);
  (void)adapt::storage::ParseAmzDate(text);
  // The same bytes as a query: name=value pairs split on '&'.
  std::map<std::string, std::string> query;
  size_t start = 0;
  while (start <= text.size()) {
    size_t amp = text.find('&', start);
    std::string pair =
        text.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    size_t eq = pair.find('=');
    query[pair.substr(0, eq)] = eq == std::string::npos ? "" : pair.substr(eq + 1);
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  auto parsed = adapt::storage::ParseSigV4Query(query);
  if (parsed.ok()) Check(parsed->expires_seconds >= 1 && parsed->expires_seconds <= 604800);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::span<const uint8_t> rest(data + 1, size - 1);
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 7) {
    case 0:
      DnsQuery(rest);
      break;
    case 1:
      DnsAnswer(rest);
      break;
    case 2:
      TlsHello(rest);
      break;
    case 3:
      PgStartup(text);
      break;
    case 4:
      AgentFrames(text);
      break;
    case 5:
      AwsChunked(text);
      break;
    case 6:
      SigV4(text);
      break;
  }
  return 0;
}

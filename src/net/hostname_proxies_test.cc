// The two proxies on loopback: a stand-in resolver on 127.0.0.77:53, the "sandbox" is
// 127.0.0.1. (Redirects, SO_ORIGINAL_DST and real TLS through the proxy are in
// tests/e2e/test_network_hostnames.py.)
#include "net/hostname_proxies.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <thread>

#include "net/dns_message.h"
#include "net/dns_proxy.h"

namespace adapt::net {
namespace {

namespace asio = boost::asio;
using asio::ip::udp;

std::vector<uint8_t> Query(const std::string& name, uint16_t id) {
  std::vector<uint8_t> q = {
      static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  size_t start = 0;
  while (start <= name.size()) {
    size_t dot = std::min(name.find('.', start), name.size());
    q.push_back(static_cast<uint8_t>(dot - start));
    q.insert(q.end(), name.begin() + static_cast<long>(start),
             name.begin() + static_cast<long>(dot));
    start = dot + 1;
  }
  q.insert(q.end(), {0, 0, 1, 0, 1});
  return q;
}

// The answer to `query` with 40 addresses, 198.51.100.1 to .40: more than 512 bytes.
std::vector<uint8_t> BigAnswer(std::vector<uint8_t> r) {
  r[2] = 0x81, r[3] = 0x80, r[7] = 40;
  for (uint8_t i = 1; i <= 40; ++i)
    r.insert(r.end(), {0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 51, 100, i});
  return r;
}

// Answers every query with 198.51.100.7 (TTL 60), except names starting with "big", which
// get an empty truncated (TC) answer, until a datagram shorter than a header.
void FakeResolver(udp::socket& s) {
  std::array<uint8_t, 512> buf;
  udp::endpoint peer;
  boost::system::error_code ec;
  while (true) {
    size_t n = s.receive_from(asio::buffer(buf), peer, 0, ec);
    if (ec || n < 12) return;  // a short datagram: the test is over
    std::vector<uint8_t> r(buf.begin(), buf.begin() + n);
    if (r.size() > 13 && r[13] == 'b') {
      r[2] = 0x83, r[3] = 0x80;  // QR, TC, RD; RA
      s.send_to(asio::buffer(r), peer, 0, ec);
      continue;
    }
    r[2] = 0x81, r[3] = 0x80, r[7] = 1;
    r.insert(r.end(), {0xC0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 51, 100, 7});
    s.send_to(asio::buffer(r), peer, 0, ec);
  }
}

// DNS over TCP: BigAnswer to every query, until a connection that sends nothing.
void FakeTcpResolver(asio::ip::tcp::acceptor& acceptor) {
  while (true) {
    asio::ip::tcp::socket c(acceptor.get_executor());
    boost::system::error_code ec;
    acceptor.accept(c, ec);
    if (ec) return;
    std::array<uint8_t, 2> len;
    asio::read(c, asio::buffer(len), ec);
    if (ec) return;
    std::vector<uint8_t> q(static_cast<size_t>(len[0] << 8 | len[1]));
    asio::read(c, asio::buffer(q), ec);
    auto r = BigAnswer(q);
    std::vector<uint8_t> out = {static_cast<uint8_t>(r.size() >> 8),
                                static_cast<uint8_t>(r.size())};
    out.insert(out.end(), r.begin(), r.end());
    asio::write(c, asio::buffer(out), ec);
  }
}

// Sends `q` from `from` to the proxy; the reply, or empty after a second of silence.
std::vector<uint8_t> Ask(uint16_t port, const std::vector<uint8_t>& q, const char* from) {
  asio::io_context io;
  udp::socket s(io, udp::endpoint(asio::ip::make_address(from), 0));
  s.send_to(asio::buffer(q), udp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  timeval tv{1, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::array<uint8_t, 512> buf;
  // A plain recv(): Asio's blocking receive would wait past SO_RCVTIMEO (it polls on EAGAIN).
  ssize_t n = ::recv(s.native_handle(), buf.data(), buf.size(), 0);
  if (n < 0) return {};
  return {buf.begin(), buf.begin() + n};
}

TEST(HostnameProxies, DnsProxyResolvesListedNamesRecordsThemAndRefusesTheRest) {
  ASSERT_EQ(::geteuid(), 0u) << "the stand-in resolver binds port 53";
  asio::io_context io;
  udp::socket resolver(io, udp::endpoint(asio::ip::make_address("127.0.0.77"), 53));
  std::thread fake([&] { FakeResolver(resolver); });
  HostnameProxies proxies;
  ASSERT_TRUE(proxies.Start().ok());
  proxies.table().Put({"sbx_a", "127.0.0.1", {{"api.example.com", 443}}, "127.0.0.77", false});

  auto listed = Ask(proxies.dns_port(), Query("API.example.com", 0x4242), "127.0.0.1");
  auto answers = ParseDnsAnswers(listed, 0x4242);
  ASSERT_TRUE(answers);
  ASSERT_EQ(answers->size(), 1u);
  EXPECT_EQ((*answers)[0].ip.text, "198.51.100.7");
  EXPECT_EQ(proxies.table().Check("127.0.0.1", "api.example.com", "198.51.100.7", 443, 0), "");

  auto other = Ask(proxies.dns_port(), Query("other.example.com", 7), "127.0.0.1");
  ASSERT_GE(other.size(), 12u);
  EXPECT_EQ(other[3] & 0x0F, kDnsNxDomain);
  // A source with no hostname rules gets no answer at all; garbage neither.
  EXPECT_TRUE(Ask(proxies.dns_port(), Query("api.example.com", 8), "127.0.0.2").empty());
  EXPECT_TRUE(Ask(proxies.dns_port(), {1, 2, 3}, "127.0.0.1").empty());

  proxies.Stop();
  udp::socket stop(io, udp::v4());
  stop.send_to(asio::buffer("x", 1), udp::endpoint(asio::ip::make_address("127.0.0.77"), 53));
  fake.join();
}

TEST(HostnameProxies, ATruncatedAnswerIsAskedAgainOverTcpAndNeverRelayedTruncated) {
  ASSERT_EQ(::geteuid(), 0u) << "the stand-in resolver binds port 53";
  asio::io_context io;
  const auto at = asio::ip::make_address("127.0.0.78");
  udp::socket resolver(io, udp::endpoint(at, 53));
  asio::ip::tcp::acceptor tcp_resolver(io, asio::ip::tcp::endpoint(at, 53));
  std::thread fake([&] { FakeResolver(resolver); });
  std::thread fake_tcp([&] { FakeTcpResolver(tcp_resolver); });
  HostnameProxies proxies;
  ASSERT_TRUE(proxies.Start().ok());
  proxies.table().Put({"sbx_b", "127.0.0.1", {{"big.example.com", 443}}, "127.0.0.78", false});

  auto query = Query("big.example.com", 0x0909);
  auto reply = Ask(proxies.dns_port(), query, "127.0.0.1");
  ASSERT_GE(reply.size(), 12u);
  EXPECT_EQ(reply[2] & 0x02, 0) << "relayed with TC: the sandbox's resolver would try TCP";
  EXPECT_LE(reply.size(), 512u);
  auto answers = ParseDnsAnswers(reply, 0x0909);
  ASSERT_TRUE(answers);
  // The 40 addresses came over TCP; as many as fit a 512-byte datagram go to the sandbox.
  EXPECT_EQ(answers->size(), (512 - query.size()) / 16);
  EXPECT_EQ(answers->front().ip.text, "198.51.100.1");
  EXPECT_EQ(proxies.table().Check("127.0.0.1", "big.example.com", "198.51.100.1", 443, 0), "");
  // Only what the sandbox was given is recorded: the 40th address never reached it.
  EXPECT_NE(proxies.table().Check("127.0.0.1", "big.example.com", "198.51.100.40", 443, 0), "");

  proxies.Stop();
  udp::socket stop(io, udp::v4());
  stop.send_to(asio::buffer("x", 1), udp::endpoint(at, 53));
  asio::ip::tcp::socket stop_tcp(io);
  stop_tcp.connect({at, 53});
  stop_tcp.close();
  fake.join();
  fake_tcp.join();
}

// The reply's RCODE, or -1 when there was none.
int Rcode(const std::vector<uint8_t>& reply) { return reply.size() >= 12 ? reply[3] & 0x0F : -1; }

// How many addresses the reply to query `id` carries (0: none, or no valid reply).
size_t AddressesIn(const std::vector<uint8_t>& reply, uint16_t id) {
  auto answers = ParseDnsAnswers(reply, id);
  return answers ? answers->size() : 0;
}

TEST(HostnameProxies, ASandboxWhoseResolverNeverAnswersCannotStarveTheOthers) {
  ASSERT_EQ(::geteuid(), 0u) << "the stand-in resolvers bind port 53";
  asio::io_context io;
  udp::socket resolver(io, udp::endpoint(asio::ip::make_address("127.0.0.77"), 53));
  udp::socket silent(io, udp::endpoint(asio::ip::make_address("127.0.0.79"), 53));
  std::thread fake([&] { FakeResolver(resolver); });
  HostnameProxies proxies;
  ASSERT_TRUE(proxies.Start().ok());
  proxies.table().Put({"sbx_slow", "127.0.0.3", {{"api.example.com", 443}}, "127.0.0.79", false});
  proxies.table().Put({"sbx_b", "127.0.0.2", {{"api.example.com", 443}}, "127.0.0.77", false});

  // Its own cap of queries waiting on its resolver...
  udp::socket flood(io, udp::endpoint(asio::ip::make_address("127.0.0.3"), 0));
  for (uint16_t id = 1; id <= DnsProxy::kMaxInFlightPerSource; ++id)
    flood.send_to(asio::buffer(Query("api.example.com", id)),
                  udp::endpoint(asio::ip::make_address("127.0.0.1"), proxies.dns_port()));
  // ...one more is SERVFAIL at once rather than waiting for a place...
  auto over = Ask(proxies.dns_port(), Query("api.example.com", 500), "127.0.0.3");
  EXPECT_EQ(Rcode(over), kDnsServFail);
  // ...and another sandbox is answered meanwhile.
  EXPECT_EQ(AddressesIn(Ask(proxies.dns_port(), Query("api.example.com", 9), "127.0.0.2"), 9), 1u);

  proxies.Stop();
  udp::socket stop(io, udp::v4());
  stop.send_to(asio::buffer("x", 1), udp::endpoint(asio::ip::make_address("127.0.0.77"), 53));
  fake.join();
}

TEST(HostnameProxies, AResolverTheTenantNamedAtAnAddressOfTheHostIsNotAsked) {
  ASSERT_EQ(::geteuid(), 0u) << "the stand-in resolver binds port 53";
  asio::io_context io;
  // 127.0.0.1 is an address of the host (lo); 127.0.0.77 is not (only routed to lo).
  boost::system::error_code ec;
  udp::socket on_host(io);
  on_host.open(udp::v4());
  on_host.bind(udp::endpoint(asio::ip::make_address("127.0.0.1"), 53), ec);
  if (ec) GTEST_SKIP() << "127.0.0.1:53 is taken on this machine: " << ec.message();
  udp::socket resolver(io, udp::endpoint(asio::ip::make_address("127.0.0.77"), 53));
  std::thread fake_host([&] { FakeResolver(on_host); });
  std::thread fake([&] { FakeResolver(resolver); });
  HostnameProxies proxies;
  ASSERT_TRUE(proxies.Start().ok());
  proxies.table().Put({"sbx_h", "127.0.0.4", {{"api.example.com", 443}}, "127.0.0.1", true});
  proxies.table().Put({"sbx_p", "127.0.0.5", {{"api.example.com", 443}}, "127.0.0.77", true});
  // The operator's default resolver (no network.dns: all_names false) is asked wherever it is.
  proxies.table().Put({"sbx_d", "127.0.0.6", {{"api.example.com", 443}}, "127.0.0.1", false});

  EXPECT_EQ(Rcode(Ask(proxies.dns_port(), Query("api.example.com", 1), "127.0.0.4")), kDnsServFail);
  EXPECT_NE(proxies.table().Check("127.0.0.4", "api.example.com", "198.51.100.7", 443, 0), "");
  EXPECT_EQ(AddressesIn(Ask(proxies.dns_port(), Query("api.example.com", 2), "127.0.0.5"), 2), 1u);
  EXPECT_EQ(AddressesIn(Ask(proxies.dns_port(), Query("api.example.com", 3), "127.0.0.6"), 3), 1u);

  proxies.Stop();
  udp::socket stop(io, udp::v4());
  stop.send_to(asio::buffer("x", 1), udp::endpoint(asio::ip::make_address("127.0.0.77"), 53));
  stop.send_to(asio::buffer("x", 1), udp::endpoint(asio::ip::make_address("127.0.0.1"), 53));
  fake.join();
  fake_host.join();
}

TEST(HostnameProxies, SniProxyClosesConnectionsItCannotPlace) {
  HostnameProxies proxies;
  ASSERT_TRUE(proxies.Start().ok());
  proxies.table().Put({"sbx_a", "127.0.0.1", {{"api.example.com", 443}}, "127.0.0.77", false});
  asio::io_context io;
  asio::ip::tcp::socket c(io);
  c.connect({asio::ip::make_address("127.0.0.1"), proxies.sni_port()});
  std::string http = "GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n";
  asio::write(c, asio::buffer(http));
  std::array<char, 64> buf;
  boost::system::error_code ec;
  c.read_some(asio::buffer(buf), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

}  // namespace
}  // namespace adapt::net

// The DNS proxy of sandboxes with TLS hostname rules. The sandbox's resolv.conf names its
// gateway; nftables redirects its UDP port 53 there to this socket. A query for a listed
// name (or any name when network.dns was set too) goes to the sandbox's resolver from a fresh
// socket; the answer is relayed and, for a listed name, its addresses recorded in the
// HostnameTable (the SNI proxy lets TLS go only to those). Any other name is NXDOMAIN at
// once. The sandbox is known by the datagram's source address (which the firewall ties to
// its interface); anything else is dropped. Non-blocking, bounded: at most
// kMaxInFlight upstream queries, kMaxInFlightPerSource of them one sandbox's (so that a
// sandbox whose resolver never answers cannot starve the others), each given up after
// kUpstreamTimeout (SERVFAIL).
// The proxy asks from the host: a resolver the tenant named (network.dns) that is one of the
// host's own addresses (HostAddressWatch) gets no query, SERVFAIL instead, as the SNI proxy
// refuses them. The operator's default resolver is asked wherever it is.
//
// DNS over TCP: the sandbox never gets it (the firewall resets TCP to its gateway's port 53
// at once, so a resolver fails fast rather than waiting). So that no sandbox resolver ever
// needs it, the proxy never relays a truncated answer: when the resolver sets TC, the proxy
// asks again over TCP itself and answers with the full reply if it fits the client's
// datagram (512 bytes, or its EDNS size), else with as many of the addresses as fit.
#pragma once

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "net/accept_retry.h"
#include "net/host_address_watch.h"
#include "net/hostname_table.h"

namespace adapt::net {

class DnsProxy {
 public:
  static constexpr int kMaxInFlight = 256;
  static constexpr int kMaxInFlightPerSource = 32;
  static constexpr std::chrono::seconds kUpstreamTimeout{4};

  DnsProxy(boost::asio::io_context& io, HostnameTable& table, const HostAddressWatch& host);
  // Binds 0.0.0.0:`port` (0: any free port) and starts serving.
  Status Start(uint16_t port = 0);
  uint16_t port() const { return port_; }
  void Stop();

 private:
  void Receive();
  void Handle(std::vector<uint8_t> query, boost::asio::ip::udp::endpoint from);
  void Reply(std::vector<uint8_t> bytes, boost::asio::ip::udp::endpoint to);
  // One query forwarded upstream.
  struct Exchange {
    explicit Exchange(boost::asio::io_context& io) : socket(io), tcp(io), timer(io) {}
    boost::asio::ip::udp::socket socket;
    boost::asio::ip::tcp::socket tcp;  // the retry of a truncated answer
    boost::asio::ip::address upstream;
    std::array<uint8_t, 2> length{};
    std::vector<uint8_t> tcp_reply;
    boost::asio::steady_timer timer;
    std::array<uint8_t, 4096> buf{};
    std::vector<uint8_t> query;
    DnsQuestion question;
    boost::asio::ip::udp::endpoint client;
    std::string source;
    bool listed = false;
    bool done = false;
  };
  void AwaitAnswer(std::shared_ptr<Exchange> x);
  void AskOverTcp(std::shared_ptr<Exchange> x);
  void Answered(std::shared_ptr<Exchange> x, std::span<const uint8_t> reply, bool over_tcp);
  void Finish(std::shared_ptr<Exchange> x, std::vector<uint8_t> reply);

  boost::asio::io_context& io_;
  HostnameTable& table_;
  const HostAddressWatch& host_;
  boost::asio::ip::udp::socket socket_;
  boost::asio::ip::udp::endpoint from_;
  std::array<uint8_t, 4096> buf_{};
  AcceptRetry receive_retry_;  // a receive that failed is not re-armed at once
  int in_flight_ = 0;          // touched only on the io thread
  std::unordered_map<std::string, int> in_flight_by_source_;  // likewise
  uint16_t port_ = 0;
};

}  // namespace adapt::net

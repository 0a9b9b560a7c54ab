#include "net/dns_proxy.h"

#include <algorithm>
#include <memory>

#include "base/log.h"
#include "base/time.h"
#include "net/address.h"

namespace adapt::net {

namespace asio = boost::asio;
using asio::ip::udp;

DnsProxy::DnsProxy(asio::io_context& io, HostnameTable& table, const HostAddressWatch& host)
    : io_(io),
      table_(table),
      host_(host),
      socket_(io),
      receive_retry_(io.get_executor(), "sandbox DNS proxy", "receiving a query") {}

Status DnsProxy::Start(uint16_t port) {
  boost::system::error_code ec;
  socket_.open(udp::v4(), ec);
  if (!ec) socket_.bind({asio::ip::address_v4::any(), port}, ec);
  if (ec) return Internal("binding the sandbox DNS proxy: " + ec.message());
  port_ = socket_.local_endpoint().port();
  Receive();
  return Status::Ok();
}

void DnsProxy::Stop() {
  boost::system::error_code ec;
  socket_.close(ec);
}

void DnsProxy::Receive() {
  socket_.async_receive_from(asio::buffer(buf_), from_, [this](auto ec, size_t n) {
    if (ec == asio::error::operation_aborted || !socket_.is_open()) return;
    // ENOBUFS, ENOMEM and the like persist for a while: re-armed at once, this would spin.
    if (ec) return receive_retry_.After(ec, [this] { Receive(); });
    Handle(std::vector<uint8_t>(buf_.begin(), buf_.begin() + n), from_);
    Receive();
  });
}

void DnsProxy::Reply(std::vector<uint8_t> bytes, udp::endpoint to) {
  auto data = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  socket_.async_send_to(asio::buffer(*data), to, [data](auto, size_t) {});
}

void DnsProxy::Handle(std::vector<uint8_t> query, udp::endpoint from) {
  if (!from.address().is_v4()) return;
  const std::string source = from.address().to_string();
  auto sandbox = table_.Find(source);
  if (!sandbox) return;  // not a sandbox with hostname rules: no answer at all
  auto q = ParseDnsQuery(query);
  if (!q) return;
  const bool listed = table_.Lists(source, q->name);
  if (!listed && !sandbox->all_names) return Reply(DnsErrorReply(query, *q, kDnsNxDomain), from);
  // The SNI proxy takes IPv4 only: a listed name has no IPv6 address for the sandbox, so its
  // clients connect over IPv4 at once instead of trying an address that is dropped.
  if (listed && q->type == kDnsTypeAaaa) return Reply(DnsErrorReply(query, *q, 0), from);
  boost::system::error_code ec;
  auto upstream_ip = asio::ip::make_address(sandbox->upstream, ec);
  if (ec) return Reply(DnsErrorReply(query, *q, kDnsServFail), from);
  // A resolver the tenant named must not be a service of the host (the operator's is trusted),
  // nor another sandbox (an operator's pool of public addresses passes network.dns's check):
  // the proxy asks from the host, which no sandbox chain filters.
  if (auto canonical = ParseIp(sandbox->upstream);
      sandbox->all_names &&
      (!canonical || host_.Contains(canonical->text) || table_.InSandboxPool(canonical->text))) {
    spdlog::info(
        "DNS proxy: {} names a resolver at an address of the host or of a sandbox; "
        "answered SERVFAIL",
        source);
    return Reply(DnsErrorReply(query, *q, kDnsServFail), from);
  }
  int& source_in_flight = in_flight_by_source_[source];
  if (in_flight_ >= kMaxInFlight || source_in_flight >= kMaxInFlightPerSource) {
    if (source_in_flight == 0) in_flight_by_source_.erase(source);
    return Reply(DnsErrorReply(query, *q, kDnsServFail), from);
  }

  auto x = std::make_shared<Exchange>(io_);
  x->query = std::move(query);
  x->question = *q;
  x->client = from;
  x->source = source;
  x->listed = listed;
  x->upstream = upstream_ip;
  // A fresh socket (a new random port) per query, connected: only the resolver's replies reach it.
  x->socket.open(upstream_ip.is_v4() ? udp::v4() : udp::v6(), ec);
  if (!ec) x->socket.connect({upstream_ip, 53}, ec);
  if (ec) {
    if (source_in_flight == 0) in_flight_by_source_.erase(source);
    return Reply(DnsErrorReply(x->query, *q, kDnsServFail), from);
  }
  ++in_flight_;
  ++source_in_flight;
  x->timer.expires_after(kUpstreamTimeout);
  x->timer.async_wait([this, x](auto ec) {
    if (!ec) Finish(x, {});
  });
  x->socket.async_send(asio::buffer(x->query), [](auto, size_t) {});
  AwaitAnswer(x);
}

void DnsProxy::AwaitAnswer(std::shared_ptr<Exchange> x) {
  x->socket.async_receive(asio::buffer(x->buf), [this, x](auto ec, size_t n) {
    if (x->done) return;
    if (ec) return Finish(x, {});
    std::span<const uint8_t> reply(x->buf.data(), n);
    if (!ParseDnsAnswers(reply, x->question.id)) return AwaitAnswer(x);  // keep waiting
    if (DnsTruncated(reply)) return AskOverTcp(x);
    Answered(x, reply, false);
  });
}

void DnsProxy::AskOverTcp(std::shared_ptr<Exchange> x) {
  boost::system::error_code ignored;
  x->socket.close(ignored);
  x->tcp.async_connect({x->upstream, 53}, [this, x](auto ec) {
    if (x->done) return;
    if (ec) return Finish(x, {});
    // Two length bytes, then the query (RFC 1035 4.2.2).
    auto out = std::make_shared<std::vector<uint8_t>>(x->query.size() + 2);
    (*out)[0] = static_cast<uint8_t>(x->query.size() >> 8);
    (*out)[1] = static_cast<uint8_t>(x->query.size());
    std::copy(x->query.begin(), x->query.end(), out->begin() + 2);
    asio::async_write(x->tcp, asio::buffer(*out), [this, x, out](auto ec, size_t) {
      if (x->done) return;
      if (ec) return Finish(x, {});
      asio::async_read(x->tcp, asio::buffer(x->length), [this, x](auto ec, size_t) {
        if (x->done) return;
        if (ec) return Finish(x, {});
        x->tcp_reply.resize(static_cast<size_t>(x->length[0] << 8 | x->length[1]));
        asio::async_read(x->tcp, asio::buffer(x->tcp_reply), [this, x](auto ec, size_t) {
          if (x->done) return;
          if (ec || !ParseDnsAnswers(x->tcp_reply, x->question.id)) return Finish(x, {});
          Answered(x, x->tcp_reply, true);
        });
      });
    });
  });
}

void DnsProxy::Answered(std::shared_ptr<Exchange> x, std::span<const uint8_t> reply,
                        bool over_tcp) {
  auto answers = ParseDnsAnswers(reply, x->question.id);
  if (!answers) return Finish(x, {});
  std::vector<uint8_t> out(reply.begin(), reply.end());
  const size_t limit = DnsUdpLimit(x->query, x->question);
  if (over_tcp && (out.size() > limit || DnsTruncated(out))) {
    out = DnsAddressReply(x->query, x->question, *answers, limit);
    answers = ParseDnsAnswers(out, x->question.id);  // what the sandbox gets: what it may use
  }
  if (x->listed && answers) table_.Record(x->source, x->question.name, *answers, NowMillis());
  Finish(x, std::move(out));
}

void DnsProxy::Finish(std::shared_ptr<Exchange> x, std::vector<uint8_t> reply) {
  if (x->done) return;
  x->done = true;
  --in_flight_;
  if (auto it = in_flight_by_source_.find(x->source);
      it != in_flight_by_source_.end() && --it->second <= 0)
    in_flight_by_source_.erase(it);
  x->timer.cancel();
  boost::system::error_code ignored;
  x->socket.close(ignored);
  x->tcp.close(ignored);
  Reply(reply.empty() ? DnsErrorReply(x->query, x->question, kDnsServFail) : std::move(reply),
        x->client);
}

}  // namespace adapt::net

// The ingress's bounds on loopback: a proxied connection that carries nothing is closed after
// the idle timeout, one that stays busy is not; a full listener closes a connection still
// waiting for its head to make room for a new one, never a proxied one; a backend that does
// not accept a connection is given up for the next one, or answered with a 504; a lookup that
// hangs holds no I/O thread. (Caps, head
// deadlines and TLS are in tests/e2e/test_connection_limits.py.)
#include "net/ingress.h"

#include <gtest/gtest.h>

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <future>
#include <string_view>
#include <thread>

namespace adapt::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using namespace std::string_view_literals;

// Accepts the next connection, or gives up after `limit` (a test fails, not hangs).
bool AcceptWithin(tcp::acceptor& acceptor, tcp::socket& s, std::chrono::milliseconds limit) {
  acceptor.non_blocking(true);
  for (auto start = Clock::now(); Clock::now() - start < limit;) {
    boost::system::error_code ec;
    acceptor.accept(s, ec);
    if (!ec) return true;
    if (ec != asio::error::would_block) return false;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

class IngressIdleTest : public testing::Test {
 protected:
  void SetUp() override { Start(1s, {}); }

  void Start(std::chrono::seconds idle_timeout, ConnectionLimits limits) {
    ingress_.reset();
    backend_ = tcp::acceptor(io_);
    backend_.open(tcp::v4());
    backend_.bind({asio::ip::make_address("127.0.0.1"), 0});
    backend_.listen();
    IngressOptions options;
    options.idle_timeout = idle_timeout;
    options.header_timeout = 5s;
    options.limits = limits;
    const uint16_t port = backend_.local_endpoint().port();
    ingress_ = std::make_unique<IngressServer>(options, [port](const std::string& host) {
      return host == "app.test" ? std::optional<IngressBackend>({"127.0.0.1", port, {}, {}, {}})
                                : std::nullopt;
    });
    ASSERT_TRUE(ingress_->Start().ok());
  }

  // A client of the ingress from `source` (any of 127.0.0.0/8), that has sent nothing yet.
  void Open(tcp::socket& client, const char* source) {
    client.open(tcp::v4());
    client.bind({asio::ip::make_address(source), 0});
    client.connect({asio::ip::make_address("127.0.0.1"), ingress_->http_port()});
  }

  // A client through the ingress, and the backend's end of its connection.
  void Connect(tcp::socket& client, tcp::socket& server, const char* source = "127.0.0.1") {
    Open(client, source);
    std::string head = "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n";
    asio::write(client, asio::buffer(head));
    ASSERT_TRUE(AcceptWithin(backend_, server, 5s)) << "the ingress passed nothing on";
    std::string got(head.size(), '\0');
    asio::read(server, asio::buffer(got));
    ASSERT_EQ(got, head);
  }

  // Seconds until `s` reads end of file (or an error), -1 when it stays open for `limit`.
  static double ClosedAfter(tcp::socket& s, std::chrono::milliseconds limit) {
    auto start = Clock::now();
    s.non_blocking(true);
    while (Clock::now() - start < limit) {
      char c;
      boost::system::error_code ec;
      s.read_some(asio::buffer(&c, 1), ec);
      if (ec != asio::error::would_block)
        return std::chrono::duration<double>(Clock::now() - start).count();
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

  asio::io_context io_;
  tcp::acceptor backend_{io_};
  std::unique_ptr<IngressServer> ingress_;
};

TEST_F(IngressIdleTest, AProxiedConnectionThatCarriesNothingIsClosedAfterTheIdleTimeout) {
  tcp::socket client(io_), server(io_);
  Connect(client, server);
  double took = ClosedAfter(client, 4000ms);
  EXPECT_GT(took, 0.8);
  EXPECT_LT(took, 3.0);
}

TEST_F(IngressIdleTest, ABusyProxiedConnectionStaysOpenPastTheIdleTimeout) {
  tcp::socket client(io_), server(io_);
  Connect(client, server);
  for (int i = 0; i < 8; ++i) {  // 2 s of traffic, a byte every 250 ms
    std::this_thread::sleep_for(250ms);
    asio::write(server, asio::buffer("x", 1));
    char c;
    asio::read(client, asio::buffer(&c, 1));
  }
  EXPECT_LT(ClosedAfter(client, 300ms), 0);
}

TEST_F(IngressIdleTest, ARequestWhoseBackendIsGoneBeforeItAnswersIsA502) {
  // A stopped sandbox keeps its address and nothing there answers: the request waited for
  // the idle timeout (900 s by default) and then closed without a word.
  Start(60s, {});
  tcp::socket client(io_), server(io_);
  Connect(client, server);
  ingress_->BackendGone("127.0.0.2");  // another sandbox's
  EXPECT_LT(ClosedAfter(client, 300ms), 0);
  ingress_->BackendGone("127.0.0.1");
  client.non_blocking(false);
  std::string reply;
  boost::system::error_code ec;
  asio::read(client, asio::dynamic_buffer(reply), ec);
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << reply;
  EXPECT_NE(reply.find("the sandbox stopped before it answered the request"), std::string::npos);
  // The backend's end was reset, not left half-closed.
  char c;
  server.read_some(asio::buffer(&c, 1), ec);
  EXPECT_EQ(ec, asio::error::connection_reset) << ec.message();
}

TEST_F(IngressIdleTest, AnAnswerUnderWayWhenTheBackendGoesIsCutNotFollowedByA502) {
  Start(60s, {});
  tcp::socket client(io_), server(io_);
  Connect(client, server);
  std::string begun = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc";
  asio::write(server, asio::buffer(begun));
  std::string got(begun.size(), '\0');
  asio::read(client, asio::buffer(got));
  ingress_->BackendGone("127.0.0.1");
  client.non_blocking(false);
  std::string rest;
  boost::system::error_code ec;
  asio::read(client, asio::dynamic_buffer(rest), ec);
  EXPECT_EQ(rest, "");
}

TEST_F(IngressIdleTest, AFullListenerClosesAConnectionWaitingForItsHeadNotAProxiedOne) {
  Start(60s, {3, 2});
  tcp::socket proxied(io_), proxied_server(io_);
  Connect(proxied, proxied_server, "127.0.0.2");  // the oldest, but busy
  if (HasFatalFailure()) return;
  tcp::socket first(io_), second(io_);
  Open(first, "127.0.0.2");
  // Each session marks itself waiting when it starts, on whichever of the ingress's threads
  // runs it: opened at once, the second could be marked first (and was, once, in a full run).
  std::this_thread::sleep_for(200ms);
  Open(second, "127.0.0.3");
  // The ingress accepts in order: these two count before the next one does.
  tcp::socket newcomer(io_), newcomer_server(io_);
  Connect(newcomer, newcomer_server, "127.0.0.4");
  if (HasFatalFailure()) return;
  EXPECT_GE(ClosedAfter(first, 5000ms), 0) << "the connection waiting longest was kept";
  EXPECT_LT(ClosedAfter(second, 300ms), 0);
  asio::write(proxied_server, asio::buffer("x", 1));
  char c = 0;
  asio::read(proxied, asio::buffer(&c, 1));
  EXPECT_EQ(c, 'x');
}

TEST_F(IngressIdleTest, AFullListenerWithNoConnectionWaitingForItsHeadRefusesANewOne) {
  Start(60s, {2, 0});
  tcp::socket one(io_), one_server(io_), two(io_), two_server(io_);
  Connect(one, one_server, "127.0.0.2");
  Connect(two, two_server, "127.0.0.3");
  if (HasFatalFailure()) return;
  tcp::socket refused(io_);
  Open(refused, "127.0.0.4");
  EXPECT_GE(ClosedAfter(refused, 5000ms), 0);
  asio::write(two_server, asio::buffer("y", 1));
  char c = 0;
  asio::read(two, asio::buffer(&c, 1));
  EXPECT_EQ(c, 'y');
}

// A listener whose accept queue is full: the kernel drops further SYNs, so a connect to it
// neither succeeds nor fails (as with a sandbox that drops them).
class SilentBackend {
 public:
  explicit SilentBackend(asio::io_context& io) : acceptor_(io), filler_(io) {
    acceptor_.open(tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen(0);  // a queue of one connection, never accepted
    filler_.connect(acceptor_.local_endpoint());
  }
  uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  tcp::acceptor acceptor_;
  tcp::socket filler_;
};

class IngressConnectTest : public testing::Test {
 protected:
  void Start(IngressBackend backend) {
    IngressOptions options;
    options.connect_timeout = 300ms;
    options.header_timeout = 30s;
    ingress_ = std::make_unique<IngressServer>(options, [backend](const std::string& host) {
      return host == "app.test" ? std::optional<IngressBackend>(backend) : std::nullopt;
    });
    ASSERT_TRUE(ingress_->Start().ok());
  }

  void Send(tcp::socket& client) {
    client.connect({asio::ip::make_address("127.0.0.1"), ingress_->http_port()});
    asio::write(client, asio::buffer(kHead));
  }

  static constexpr std::string_view kHead = "GET / HTTP/1.1\r\nHost: app.test\r\n\r\n";
  asio::io_context io_;
  std::unique_ptr<IngressServer> ingress_;
};

TEST_F(IngressConnectTest, ABackendThatNeverAcceptsIsSkippedForTheNextReplica) {
  SilentBackend silent(io_);
  tcp::acceptor live(io_, {asio::ip::make_address("127.0.0.1"), 0});
  Start({"127.0.0.1",
         silent.port(),
         {{"127.0.0.1", live.local_endpoint().port(), {}, {}, {}}},
         {},
         {}});
  tcp::socket client(io_), server(io_);
  Send(client);
  live.accept(server);
  std::string got(kHead.size(), '\0');
  asio::read(server, asio::buffer(got));
  EXPECT_EQ(got, kHead);
  asio::write(server, asio::buffer("HTTP/1.1 204 No Content\r\n\r\n"sv));
  std::string line(12, '\0');
  asio::read(client, asio::buffer(line));
  EXPECT_EQ(line, "HTTP/1.1 204");
}

TEST_F(IngressConnectTest, ABackendThatNeverAcceptsIsA504) {
  SilentBackend silent(io_);
  Start({"127.0.0.1", silent.port(), {}, {}, {}});
  tcp::socket client(io_);
  Send(client);
  std::string reply;
  boost::system::error_code ec;
  asio::read(client, asio::dynamic_buffer(reply), ec);  // to the end: the ingress closes
  EXPECT_EQ(ec, asio::error::eof);
  EXPECT_EQ(reply.rfind("HTTP/1.1 504 Gateway Timeout\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("did not accept the connection within 300 ms"), std::string::npos) << reply;
}

// The router reads adaptd's store, which may wait behind another transaction: a lookup that
// hangs holds no I/O thread, so a connection already proxied keeps moving and another host is
// still answered (one I/O thread here).
// The first `n` bytes `s` reads within `limit` (fewer when it did not get them: a test
// fails, not hangs).
std::string ReadWithin(tcp::socket& s, size_t n, std::chrono::milliseconds limit) {
  std::string got;
  s.non_blocking(true);
  for (auto start = Clock::now(); got.size() < n && Clock::now() - start < limit;) {
    char buf[64];
    boost::system::error_code ec;
    size_t k = s.read_some(asio::buffer(buf, std::min(sizeof buf, n - got.size())), ec);
    if (ec && ec != asio::error::would_block) break;
    got.append(buf, k);
    if (k == 0) std::this_thread::sleep_for(10ms);
  }
  return got;
}

TEST(IngressLookups, ALookupThatHangsHoldsNoIoThread) {
  asio::io_context io;
  tcp::acceptor backend(io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = backend.local_endpoint().port();
  std::promise<void> released;
  std::shared_future<void> release = released.get_future().share();
  IngressOptions options;
  options.threads = 1;
  options.header_timeout = 30s;
  IngressServer ingress(options, [port, release](const std::string& host) {
    if (host == "slow.test") release.wait();
    return host == "app.test" ? std::optional<IngressBackend>({"127.0.0.1", port, {}, {}, {}})
                              : std::nullopt;
  });
  ASSERT_TRUE(ingress.Start().ok());
  // Whatever fails below, the hanging lookup ends before the ingress stops.
  struct Release {
    std::promise<void>& promise;
    ~Release() {
      try {
        promise.set_value();
      } catch (const std::future_error&) {  // released already
      }
    }
  } release_at_end{released};
  auto send = [&](tcp::socket& client, std::string_view host) {
    client.connect({asio::ip::make_address("127.0.0.1"), ingress.http_port()});
    std::string head = "GET / HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n";
    asio::write(client, asio::buffer(head));
  };
  tcp::socket proxied(io), server(io);
  send(proxied, "app.test");
  backend.accept(server);
  tcp::socket slow(io);
  send(slow, "slow.test");
  std::this_thread::sleep_for(200ms);  // its lookup has begun, and hangs
  // A proxied connection's bytes still move, both ways.
  asio::write(server, asio::buffer("pong"sv));
  EXPECT_EQ(ReadWithin(proxied, 4, 5000ms), "pong");
  // An unknown host is still answered.
  tcp::socket other(io);
  send(other, "nobody.test");
  EXPECT_EQ(ReadWithin(other, 12, 5000ms), "HTTP/1.1 404");
  released.set_value();
  EXPECT_EQ(ReadWithin(slow, 12, 5000ms), "HTTP/1.1 404");
}

// A tenant whose backend accepts and never answers could fill the ingress for every tenant:
// one organization's routes hold at most a quarter of its connections.
TEST(IngressOwners, AnOrganizationsRoutesHoldAtMostAQuarterOfTheConnections) {
  asio::io_context io;
  tcp::acceptor backend(io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = backend.local_endpoint().port();
  IngressOptions options;
  options.limits = {8, 0};  // 2 per organization
  ASSERT_EQ(IngressServer::PerOwnerLimit(options.limits), 2);
  IngressServer ingress(options, [port](const std::string& host) -> std::optional<IngressBackend> {
    if (host == "a.test") return IngressBackend{"127.0.0.1", port, {}, {}, "org_a"};
    if (host == "b.test") return IngressBackend{"127.0.0.1", port, {}, {}, "org_b"};
    return std::nullopt;
  });
  ASSERT_TRUE(ingress.Start().ok());
  auto send = [&](tcp::socket& client, std::string_view host) {
    client.connect({asio::ip::make_address("127.0.0.1"), ingress.http_port()});
    std::string head = "GET / HTTP/1.1\r\nHost: " + std::string(host) + "\r\n\r\n";
    asio::write(client, asio::buffer(head));
  };
  tcp::socket a1(io), a2(io), s1(io), s2(io);
  send(a1, "a.test");
  ASSERT_TRUE(AcceptWithin(backend, s1, 5000ms));
  send(a2, "a.test");
  ASSERT_TRUE(AcceptWithin(backend, s2, 5000ms));
  // A third of org_a's is refused, and reaches no backend.
  tcp::socket a3(io);
  send(a3, "a.test");
  std::string refused = ReadWithin(a3, 1024, 5000ms);
  EXPECT_TRUE(refused.starts_with("HTTP/1.1 429 Too Many Requests\r\n")) << refused;
  EXPECT_NE(refused.find("hold 2 connections"), std::string::npos) << refused;
  // Another organization's still reaches its backend.
  tcp::socket b1(io), s3(io);
  send(b1, "b.test");
  EXPECT_TRUE(AcceptWithin(backend, s3, 5000ms));
  // A place given back is taken again: once both ends of a proxied connection have closed (a
  // client's end alone half-closes it).
  a1.close();
  s1.close();
  tcp::socket a4(io), s4(io);
  for (int i = 0; i < 100; ++i) {  // the close reaches the ingress a moment later
    send(a4, "a.test");
    std::string got = ReadWithin(a4, 12, 200ms);
    if (got.empty()) break;  // passed on: nothing comes back until the backend answers
    ASSERT_EQ(got, "HTTP/1.1 429");
    a4 = tcp::socket(io);
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(AcceptWithin(backend, s4, 5000ms));
  ingress.Stop();
}

}  // namespace
}  // namespace adapt::net

// The database proxy's connection cap on loopback: a full proxy closes the connection that has
// waited longest for its startup packet to make room for a new one, never a spliced session,
// and refuses the new one when every session is spliced. A login the server has not finished
// within the start-up timeout is closed at both ends; one database gets at most its role's
// connection limit plus a margin, and every database together the server's session limit. (Who may
// open which database is in tests/e2e/test_database.py.)
#include "net/database_proxy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "os/temp_dir.h"

namespace adapt::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using local_socket = asio::local::stream_protocol::socket;
using namespace std::chrono_literals;

// A StartupMessage for user and database `name` (protocol 3.0).
std::string StartupPacketFor(const std::string& name) {
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string body = be32(196608) + "user" + std::string(1, '\0') + name + std::string(1, '\0') +
                     "database" + std::string(1, '\0') + name + std::string(2, '\0');
  return be32(static_cast<uint32_t>(body.size() + 4)) + body;
}

class DatabaseProxyLimitsTest : public testing::Test {
 protected:
  ~DatabaseProxyLimitsTest() override { ReleaseLookups(); }

  void Start(ConnectionLimits limits, int64_t connection_limit = 0,
             std::chrono::milliseconds startup_timeout = DatabaseProxy::kStartupTimeout,
             std::optional<AddressPool> pool = std::nullopt) {
    const std::string path = dir_.path() + "/.s.PGSQL.5432";
    upstream_.open();
    upstream_.bind({path});
    upstream_.listen();
    proxy_ = std::make_unique<DatabaseProxy>(
        [this, connection_limit](const std::string& source) {
          ++lookups_;
          if (source == held_source_) released_.wait();
          return std::optional<DatabaseGrant>(DatabaseGrant{"adapt_org_a", connection_limit});
        },
        DatabaseUpstream{path, "", 0, session_limit_}, limits, std::move(pool), startup_timeout);
    ASSERT_TRUE(proxy_->Start("127.0.0.1", 0).ok());
  }

  // A client of the proxy from `source` (any of 127.0.0.0/8), that has sent nothing yet.
  void Open(tcp::socket& client, const char* source) {
    client.open(tcp::v4());
    client.bind({asio::ip::make_address(source), 0});
    client.connect({asio::ip::make_address("127.0.0.1"), proxy_->port()});
  }

  // The byte `b`, written on `from`, as read on `to` (the session is still spliced, in that
  // direction, when they match).
  template <typename From, typename To>
  static char Relayed(From& from, To& to, char b) {
    asio::write(from, asio::buffer(&b, 1));
    char c = 0;
    asio::read(to, asio::buffer(&c, 1));
    return c;
  }

  // The server's side of the next session the proxy passes on, waited for up to 5 s (a hang
  // guard); the error when none came.
  boost::system::error_code AcceptAtServer(local_socket& server) {
    upstream_.non_blocking(true);
    boost::system::error_code ec = asio::error::would_block;
    for (int i = 0; i < 500 && ec == asio::error::would_block; ++i) {
      if (i) std::this_thread::sleep_for(10ms);
      ec.clear();
      upstream_.accept(server, ec);
    }
    return ec;
  }

  // A session the proxy has spliced to the server: the server read its startup packet.
  void Splice(tcp::socket& client, local_socket& server, const char* source) {
    Open(client, source);
    const std::string packet = StartupPacketFor("adapt_org_a");
    asio::write(client, asio::buffer(packet));
    boost::system::error_code ec = AcceptAtServer(server);
    ASSERT_FALSE(ec) << "the proxy passed nothing on: " << ec.message();
    std::string got(packet.size(), '\0');
    asio::read(server, asio::buffer(got));
    ASSERT_EQ(got, packet);
  }

  // Whether the proxy closes `s` within `limit` (anything it sends first is dropped).
  static bool ClosedWithin(tcp::socket& s, std::chrono::milliseconds limit) {
    s.non_blocking(true);
    for (auto waited = 0ms; waited < limit; waited += 10ms) {
      char c;
      boost::system::error_code ec;
      s.read_some(asio::buffer(&c, 1), ec);
      if (ec && ec != asio::error::would_block) return true;
      if (!ec) continue;
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

  // Whether a new session from `source` reaches the server before long: the proxy sees a
  // session's close a moment after it happens, and until then may still refuse a newcomer.
  bool ANewSessionReachesTheServer(const char* source) {
    const std::string packet = StartupPacketFor("adapt_org_a");
    local_socket server(io_);
    upstream_.non_blocking(true);
    for (int attempt = 0; attempt < 100; ++attempt) {
      tcp::socket probe(io_);
      Open(probe, source);
      asio::write(probe, asio::buffer(packet));
      probe.non_blocking(true);
      for (int i = 0; i < 500; ++i) {
        boost::system::error_code ec;
        upstream_.accept(server, ec);
        if (!ec) return true;
        char first = 0;
        probe.read_some(asio::buffer(&first, 1), ec);
        if (ec != asio::error::would_block) break;  // refused: try again
        std::this_thread::sleep_for(10ms);
      }
    }
    return false;
  }

  // All the proxy sends `client` until it closes it (what came within 10 s, if it never does).
  static std::string ReadUntilClosed(tcp::socket& client) {
    std::string got;
    client.non_blocking(true);
    for (int i = 0; i < 1000; ++i) {
      char buf[256];
      boost::system::error_code ec;
      size_t n = client.read_some(asio::buffer(buf), ec);
      got.append(buf, n);
      if (ec == asio::error::would_block)
        std::this_thread::sleep_for(10ms);
      else if (ec)
        break;
    }
    return got;
  }

  // The first bytes the proxy sends `client`, if any come within `limit`.
  static std::string FirstBytesWithin(tcp::socket& client, std::chrono::milliseconds limit) {
    client.non_blocking(true);
    for (auto waited = 0ms; waited < limit; waited += 10ms) {
      char buf[256];
      boost::system::error_code ec;
      size_t n = client.read_some(asio::buffer(buf), ec);
      if (n > 0) return std::string(buf, n);
      if (ec != asio::error::would_block) break;
      std::this_thread::sleep_for(10ms);
    }
    return "";
  }

  // The lookups of held_source_ wait until ReleaseLookups.
  void ReleaseLookups() {
    if (!released_now_.exchange(true)) release_.set_value();
  }

  int64_t session_limit_ = 0;  // the upstream's, for the next Start
  std::string held_source_;    // set before Start
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
  std::atomic<bool> released_now_{false};
  os::TempDir dir_{"database-proxy"};
  asio::io_context io_;
  asio::local::stream_protocol::acceptor upstream_{io_};
  std::atomic<int> lookups_{0};
  std::unique_ptr<DatabaseProxy> proxy_;
};

TEST_F(DatabaseProxyLimitsTest, AFullProxyClosesTheConnectionWaitingLongestForItsStartup) {
  Start({3, 0});
  tcp::socket spliced(io_);
  local_socket spliced_server(io_);
  Splice(spliced, spliced_server, "127.0.0.2");  // the oldest, but spliced
  if (HasFatalFailure()) return;
  tcp::socket first(io_), second(io_);
  Open(first, "127.0.0.2");
  Open(second, "127.0.0.3");
  // The proxy accepts in order: these two count before the next one does.
  tcp::socket newcomer(io_);
  local_socket newcomer_server(io_);
  Splice(newcomer, newcomer_server, "127.0.0.4");
  if (HasFatalFailure()) return;
  EXPECT_TRUE(ClosedWithin(first, 5000ms)) << "the connection waiting longest was kept";
  EXPECT_FALSE(ClosedWithin(second, 300ms));
  EXPECT_EQ(Relayed(spliced_server, spliced, 'x'), 'x');
}

TEST_F(DatabaseProxyLimitsTest, AFullProxyOfSplicedSessionsRefusesANewConnection) {
  Start({2, 0});
  tcp::socket one(io_), two(io_);
  local_socket one_server(io_), two_server(io_);
  Splice(one, one_server, "127.0.0.2");
  Splice(two, two_server, "127.0.0.3");
  if (HasFatalFailure()) return;
  tcp::socket refused(io_);
  Open(refused, "127.0.0.4");
  EXPECT_TRUE(ClosedWithin(refused, 5000ms));
  EXPECT_EQ(Relayed(two_server, two, 'y'), 'y');
}

// AuthenticationOk, BackendKeyData (pid 7) and ReadyForQuery: the server's end of a login.
std::string LoginFinished() {
  const std::string auth_ok{'R', 0, 0, 0, 8, 0, 0, 0, 0};
  const std::string key{'K', 0, 0, 0, 12, 0, 0, 0, 7, 0, 0, 0, 9};
  const std::string ready{'Z', 0, 0, 0, 5, 'I'};
  return auth_ok + key + ready;
}

TEST_F(DatabaseProxyLimitsTest, ALoginTheServerHasNotFinishedIsClosedAtBothEndsInTime) {
  Start({0, 0}, 0, 300ms);
  tcp::socket client(io_);
  local_socket server(io_);
  Splice(client, server, "127.0.0.2");
  if (HasFatalFailure()) return;
  // The server asks for a password (AuthenticationCleartextPassword) that never comes.
  const std::string ask{'R', 0, 0, 0, 8, 0, 0, 0, 3};
  asio::write(server, asio::buffer(ask));
  EXPECT_TRUE(ClosedWithin(client, 10000ms)) << "a stalled login kept its client";
  server.non_blocking(true);
  bool server_closed = false;
  for (int i = 0; i < 1000 && !server_closed; ++i) {
    char c;
    boost::system::error_code ec;
    server.read_some(asio::buffer(&c, 1), ec);
    if (ec && ec != asio::error::would_block) server_closed = true;
    if (ec == asio::error::would_block) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(server_closed) << "a stalled login kept its server connection (a backend slot)";
}

TEST_F(DatabaseProxyLimitsTest, AnAuthenticatedSessionOutlivesTheStartupTimeout) {
  Start({0, 0}, 0, 200ms);
  tcp::socket client(io_);
  local_socket server(io_);
  Splice(client, server, "127.0.0.2");
  if (HasFatalFailure()) return;
  const std::string done = LoginFinished();
  asio::write(server, asio::buffer(done));
  std::string got(done.size(), '\0');
  asio::read(client, asio::buffer(got));
  EXPECT_EQ(got, done);
  // Well past the timeout, the session still carries bytes both ways.
  EXPECT_FALSE(ClosedWithin(client, 1000ms));
  client.non_blocking(false);
  EXPECT_EQ(Relayed(client, server, 'q'), 'q');
  EXPECT_EQ(Relayed(server, client, 'r'), 'r');
}

TEST_F(DatabaseProxyLimitsTest, ADatabaseGetsItsConnectionLimitPlusTheMarginAndNoMore) {
  Start({0, 0}, 1);
  constexpr int kAllowed = 1 + DatabaseProxy::kSessionMargin;
  std::vector<std::unique_ptr<tcp::socket>> clients;
  std::vector<std::unique_ptr<local_socket>> servers;
  for (int i = 0; i < kAllowed; ++i) {
    clients.push_back(std::make_unique<tcp::socket>(io_));
    servers.push_back(std::make_unique<local_socket>(io_));
    Splice(*clients.back(), *servers.back(), "127.0.0.2");
    if (HasFatalFailure()) return;
  }
  tcp::socket refused(io_);
  Open(refused, "127.0.0.3");  // another sandbox of the same organization
  const std::string packet = StartupPacketFor("adapt_org_a");
  asio::write(refused, asio::buffer(packet));
  std::string reply(1, '\0');
  asio::read(refused, asio::buffer(reply));
  EXPECT_EQ(reply[0], 'E') << "the server was reached past the limit";
  // A session that ends gives its place back.
  clients.front()->close();
  servers.front()->close();
  EXPECT_TRUE(ANewSessionReachesTheServer("127.0.0.3"))
      << "a closed session did not give its place back";
}

TEST_F(DatabaseProxyLimitsTest, TheServerGetsItsSessionLimitInAllAndANewcomerIsToldToTryAgain) {
  session_limit_ = 2;
  Start({0, 0});  // the database has no limit of its own
  tcp::socket one(io_), two(io_);
  local_socket one_server(io_), two_server(io_);
  Splice(one, one_server, "127.0.0.2");
  Splice(two, two_server, "127.0.0.3");
  if (HasFatalFailure()) return;
  tcp::socket refused(io_);
  Open(refused, "127.0.0.4");
  asio::write(refused, asio::buffer(StartupPacketFor("adapt_org_a")));
  const std::string reply = ReadUntilClosed(refused);
  ASSERT_FALSE(reply.empty()) << "the proxy closed the newcomer without a word";
  EXPECT_EQ(reply[0], 'E') << "the server was reached past the limit";
  EXPECT_NE(reply.find("53300"), std::string::npos) << reply;
  EXPECT_NE(reply.find("too many connections on this server, try again"), std::string::npos)
      << reply;
  // A session that ends gives its place back; the refused one held none.
  one.close();
  one_server.close();
  EXPECT_TRUE(ANewSessionReachesTheServer("127.0.0.4"))
      << "a closed session did not give its place back";
  EXPECT_EQ(Relayed(two_server, two, 't'), 't');
}

TEST_F(DatabaseProxyLimitsTest, DisconnectClosesEveryConnectionOfThatAddressAndNoOther) {
  Start({0, 0});
  tcp::socket released(io_), kept(io_), waiting(io_);
  local_socket released_server(io_), kept_server(io_);
  Splice(released, released_server, "127.0.0.2");
  Splice(kept, kept_server, "127.0.0.3");
  if (HasFatalFailure()) return;
  Open(waiting, "127.0.0.2");  // not begun yet
  // The proxy accepts in order: this one counts once the next one is spliced.
  tcp::socket probe(io_);
  local_socket probe_server(io_);
  Splice(probe, probe_server, "127.0.0.4");
  if (HasFatalFailure()) return;
  proxy_->Disconnect("127.0.0.2");
  EXPECT_TRUE(ClosedWithin(released, 5000ms));
  EXPECT_TRUE(ClosedWithin(waiting, 5000ms));
  char c = 0;
  boost::system::error_code ec;
  asio::read(released_server, asio::buffer(&c, 1), ec);
  EXPECT_TRUE(ec) << "the released sandbox's server connection stayed open";
  EXPECT_EQ(Relayed(kept_server, kept, 'k'), 'k');
}

TEST_F(DatabaseProxyLimitsTest, OnlySandboxAddressesAreLookedUpAndOnlyOnceTheirStartupIsComplete) {
  auto pool = AddressPool::Parse("127.0.0.0/24");  // sandboxes at .2, .6, .10, ...
  ASSERT_TRUE(pool.ok());
  Start({0, 0}, 0, DatabaseProxy::kStartupTimeout, *pool);
  tcp::socket outsider(io_);
  Open(outsider, "127.0.0.3");  // a host side of the pool's first block
  const std::string packet = StartupPacketFor("adapt_org_a");
  asio::write(outsider, asio::buffer(packet));
  EXPECT_TRUE(ClosedWithin(outsider, 5000ms));
  tcp::socket waiting(io_);
  Open(waiting, "127.0.0.2");
  asio::write(waiting, asio::buffer(packet.substr(0, 10)));  // half a StartupMessage
  EXPECT_FALSE(ClosedWithin(waiting, 300ms));
  EXPECT_EQ(lookups_, 0) << "the store was read before a startup packet was complete";
  tcp::socket client(io_);
  local_socket server(io_);
  Splice(client, server, "127.0.0.6");
  EXPECT_EQ(lookups_, 1);
}

TEST_F(DatabaseProxyLimitsTest, ALookupThatWaitsHoldsUpNoSessionsBytes) {
  held_source_ = "127.0.0.3";  // its store read waits, as on a busy SQLite
  Start({0, 0});
  tcp::socket client(io_);
  local_socket server(io_);
  Splice(client, server, "127.0.0.2");
  if (HasFatalFailure()) return;
  tcp::socket held(io_);
  Open(held, "127.0.0.3");
  asio::write(held, asio::buffer(StartupPacketFor("adapt_org_a")));
  for (int i = 0; i < 1000 && lookups_ < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(lookups_, 2) << "the held lookup did not begin";
  // Meanwhile the spliced session carries the server's bytes.
  asio::write(server, asio::buffer("s", 1));
  EXPECT_EQ(FirstBytesWithin(client, 5000ms), "s") << "a waiting lookup held up a spliced session";
  ReleaseLookups();
  // Then the held one goes on where it stopped.
  local_socket held_server(io_);
  boost::system::error_code ec = AcceptAtServer(held_server);
  EXPECT_FALSE(ec) << "the held session never reached the server: " << ec.message();
}

TEST_F(DatabaseProxyLimitsTest, ASessionClosedWhileItsLookupWaitsNeverReachesTheServer) {
  held_source_ = "127.0.0.3";
  Start({0, 0}, 0, 300ms);
  tcp::socket held(io_);
  Open(held, "127.0.0.3");
  asio::write(held, asio::buffer(StartupPacketFor("adapt_org_a")));
  // The start-up timer runs through the lookup and closes the session.
  EXPECT_TRUE(ClosedWithin(held, 10000ms));
  ReleaseLookups();
  tcp::socket probe(io_);
  local_socket probe_server(io_);
  Splice(probe, probe_server, "127.0.0.2");  // the proxy goes on, and the server gets only this
  if (HasFatalFailure()) return;
  upstream_.non_blocking(true);
  local_socket extra(io_);
  boost::system::error_code ec;
  std::this_thread::sleep_for(100ms);
  upstream_.accept(extra, ec);
  EXPECT_EQ(ec, asio::error::would_block) << "the closed session reached the server";
}

}  // namespace
}  // namespace adapt::net

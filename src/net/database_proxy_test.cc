// The database proxy's connection cap on loopback: a full proxy closes the connection that has
// waited longest for its startup packet to make room for a new one, never a spliced session,
// and refuses the new one when every session is spliced. (Who may open which database is in
// tests/e2e/test_database.py.)
#include "net/database_proxy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

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
  void Start(ConnectionLimits limits) {
    const std::string path = dir_.path() + "/.s.PGSQL.5432";
    upstream_.open();
    upstream_.bind({path});
    upstream_.listen();
    proxy_ = std::make_unique<DatabaseProxy>(
        [](const std::string&) { return std::optional<std::string>("adapt_org_a"); },
        DatabaseUpstream{path, "", 0}, limits);
    ASSERT_TRUE(proxy_->Start("127.0.0.1", 0).ok());
  }

  // A client of the proxy from `source` (any of 127.0.0.0/8), that has sent nothing yet.
  void Open(tcp::socket& client, const char* source) {
    client.open(tcp::v4());
    client.bind({asio::ip::make_address(source), 0});
    client.connect({asio::ip::make_address("127.0.0.1"), proxy_->port()});
  }

  // A session the proxy has spliced to the server: the server read its startup packet.
  void Splice(tcp::socket& client, local_socket& server, const char* source) {
    Open(client, source);
    const std::string packet = StartupPacketFor("adapt_org_a");
    asio::write(client, asio::buffer(packet));
    upstream_.non_blocking(true);
    boost::system::error_code ec = asio::error::would_block;
    for (int i = 0; i < 500 && ec == asio::error::would_block; ++i) {
      if (i) std::this_thread::sleep_for(10ms);
      ec.clear();
      upstream_.accept(server, ec);
    }
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

  os::TempDir dir_{"database-proxy"};
  asio::io_context io_;
  asio::local::stream_protocol::acceptor upstream_{io_};
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
  asio::write(spliced_server, asio::buffer("x", 1));
  char c = 0;
  asio::read(spliced, asio::buffer(&c, 1));
  EXPECT_EQ(c, 'x');
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
  asio::write(two_server, asio::buffer("y", 1));
  char c = 0;
  asio::read(two, asio::buffer(&c, 1));
  EXPECT_EQ(c, 'y');
}

}  // namespace
}  // namespace adapt::net

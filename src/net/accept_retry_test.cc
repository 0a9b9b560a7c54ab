// A listener of src/net whose accept fails (here: EMFILE, every descriptor of the process
// taken) waits before it accepts again instead of spinning, and serves the connection that met
// the failure once descriptors are free again.
#include "net/accept_retry.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/captured_log.h"
#include "base/log.h"
#include "net/database_proxy.h"
#include "net/hostname_proxies.h"

// Every accept(2) of this test binary is counted here (Asio's acceptors call accept): the
// count over a window tells a listener that retries from one that spins.
namespace {
std::atomic<int> accept_calls{0};
}  // namespace

extern "C" int accept(int fd, sockaddr* __restrict addr, socklen_t* __restrict length) {
  using Accept = int (*)(int, sockaddr*, socklen_t*);
  static const auto real = reinterpret_cast<Accept>(dlsym(RTLD_NEXT, "accept"));
  ++accept_calls;
  return real(fd, addr, length);
}

namespace adapt::net {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;

// Until destroyed, the process can open no descriptor: RLIMIT_NOFILE's soft limit is lowered
// and every free descriptor below it is taken. The proxies need none to fail an accept.
class DescriptorsExhausted {
 public:
  DescriptorsExhausted() {
    // The listener logs each failed accept. UBSan checks an object's dynamic type, the first
    // time it meets that type, with a pipe, which cannot be made while descriptors are out:
    // it would report a false "invalid vptr" for the logger and everything a log line goes
    // through. So the log is off meanwhile (no formatting, no sink), and one call before the
    // descriptors go puts the logger's type in UBSan's (global) cache.
    spdlog::info("test: taking every free descriptor");
    saved_level_ = spdlog::get_level();
    spdlog::set_level(spdlog::level::off);
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit low = saved_;
    low.rlim_cur = std::min<rlim_t>(saved_.rlim_cur, 4096);
    ::setrlimit(RLIMIT_NOFILE, &low);
    for (;;) {
      int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) break;
      taken_.push_back(fd);
    }
  }
  ~DescriptorsExhausted() {
    for (int fd : taken_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
    spdlog::set_level(saved_level_);
  }
  DescriptorsExhausted(const DescriptorsExhausted&) = delete;
  DescriptorsExhausted& operator=(const DescriptorsExhausted&) = delete;

  // Whether opening one more descriptor fails.
  bool exhausted() const {
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    return fd < 0 && errno == EMFILE;
  }

 private:
  rlimit saved_{};
  spdlog::level::level_enum saved_level_ = spdlog::level::info;
  std::vector<int> taken_;
};

// Connects `client` (opened before the descriptors ran out: the connect takes none) to `port`
// while the process has no descriptor left, and returns how many accepts were tried over a
// window of kWindow, in which a listener retrying every AcceptRetry::kDelay tries a few times
// and one re-arming at once tries thousands of times.
constexpr auto kWindow = 500ms;
constexpr int kFewAttempts = 5 * (kWindow / AcceptRetry::kDelay);

int AcceptsWhileExhausted(tcp::socket& client, uint16_t port) {
  DescriptorsExhausted exhausted;
  EXPECT_TRUE(exhausted.exhausted());
  accept_calls = 0;
  client.connect({asio::ip::make_address("127.0.0.1"), port});
  // The listener's first failure may come a moment after the connect.
  for (int i = 0; i < 5000 && accept_calls == 0; ++i) std::this_thread::sleep_for(1ms);
  EXPECT_GT(accept_calls, 0) << "the listener did not try to accept while descriptors were out";
  const int before = accept_calls;
  std::this_thread::sleep_for(kWindow);
  return accept_calls - before;
}

TEST(AcceptRetry, TheDatabaseProxyWaitsOutAFailedAcceptAndThenServesTheConnection) {
  DatabaseProxy proxy([](const std::string&) { return std::optional<DatabaseGrant>(); },
                      DatabaseUpstream{"/nonexistent/.s.PGSQL.5432", "", 0}, {0, 0});
  ASSERT_TRUE(proxy.Start("127.0.0.1", 0).ok());
  asio::io_context io;
  tcp::socket client(io);
  client.open(tcp::v4());
  EXPECT_LE(AcceptsWhileExhausted(client, proxy.port()), kFewAttempts)
      << "the proxy spun on the failed accept";
  // Served once descriptors are free: the lookup finds no database for the address, and the
  // proxy says so (an ErrorResponse) and closes.
  const std::string protocol_3{0, 3, 0, 0};
  std::string body = protocol_3 + "user" + '\0' + "x" + '\0' + '\0';
  std::string packet = std::string{0, 0, 0, static_cast<char>(body.size() + 4)} + body;
  asio::write(client, asio::buffer(packet));
  char first = 0;
  asio::read(client, asio::buffer(&first, 1));
  EXPECT_EQ(first, 'E');
  proxy.Stop();
}

TEST(AcceptRetry, TheTlsHostnameProxyWaitsOutAFailedAcceptAndThenServesTheConnection) {
  HostnameProxies proxies;
  ASSERT_TRUE(proxies.Start().ok());
  asio::io_context io;
  tcp::socket client(io);
  client.open(tcp::v4());
  EXPECT_LE(AcceptsWhileExhausted(client, proxies.sni_port()), kFewAttempts)
      << "the proxy spun on the failed accept";
  // Served once descriptors are free: a connection it cannot place (no original destination
  // from the firewall) is closed.
  std::array<char, 64> buf;
  boost::system::error_code ec;
  client.read_some(asio::buffer(buf), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

// Calls `retry.After` `n` times with EMFILE, running each wait out.
void FailAccepts(asio::io_context& io, AcceptRetry& retry, int n) {
  for (int i = 0; i < n; ++i) {
    bool accepted = false;
    retry.After(asio::error::no_descriptors, [&] { accepted = true; });
    io.restart();
    io.run();
    ASSERT_TRUE(accepted);
  }
}

size_t Lines(const std::string& text) { return std::count(text.begin(), text.end(), '\n'); }

TEST(AcceptRetry, FailuresThatLastAreLoggedOnceAndThenCountedNotLoggedEachTime) {
  CapturedLog log;
  asio::io_context io;
  AcceptRetry retry(io.get_executor(), "TLS hostname proxy");
  FailAccepts(io, retry, 12);
  std::string text = log.Text();
  EXPECT_EQ(Lines(text), 1u) << text;
  EXPECT_NE(text.find("TLS hostname proxy: accepting a connection failed: "), std::string::npos)
      << text;
}

TEST(AcceptRetry, OnceTheIntervalHasPassedTheNextLineCountsTheFailuresSinceTheLast) {
  CapturedLog log;
  asio::io_context io;
  AcceptRetry retry(io.get_executor(), "database proxy", "accepting a connection", 1s);
  // Each failure waits kDelay (100 ms): 15 of them outlast one log_every, with several
  // failures inside it.
  FailAccepts(io, retry, 15);
  std::string text = log.Text();
  EXPECT_GE(Lines(text), 2u) << text;
  EXPECT_LT(Lines(text), 15u) << text;
  EXPECT_NE(text.find("database proxy: accepting a connection failed "), std::string::npos) << text;
  EXPECT_NE(text.find(" times since the last line, the last: "), std::string::npos) << text;
}

}  // namespace
}  // namespace adapt::net

#include "net/port_probe.h"

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <array>
#include <boost/asio.hpp>
// clang-format on
#include <functional>

namespace adapt::net {

bool PortAccepts(const std::string& address, uint16_t port, std::chrono::milliseconds timeout) {
  namespace asio = boost::asio;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  if (ec) return false;
  asio::io_context ioc;
  asio::ip::tcp::socket socket(ioc);
  bool connected = false;
  socket.async_connect({addr, port}, [&](boost::system::error_code error) { connected = !error; });
  ioc.run_for(timeout);
  socket.close(ec);
  return connected;
}

std::string HttpReadinessFailure(const std::string& address, uint16_t port, const std::string& path,
                                 const std::string& host, std::chrono::milliseconds timeout) {
  namespace asio = boost::asio;
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(address, ec);
  if (ec) return "has no usable address";
  asio::io_context ioc;
  asio::ip::tcp::socket socket(ioc);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: " + host +
                              "\r\nUser-Agent: adapt-readiness\r\nConnection: close\r\n\r\n";
  std::string head, failure = "did not answer within " + std::to_string(timeout.count()) + " ms";
  std::array<char, 512> buf{};
  bool done = false;
  std::function<void()> read = [&] {
    socket.async_read_some(asio::buffer(buf), [&](boost::system::error_code error, size_t n) {
      head.append(buf.data(), n);
      auto eol = head.find("\r\n");
      if (eol == std::string::npos && !error && head.size() < 1024) return read();
      done = true;
      // "HTTP/1.1 200 OK": the three digits after the first space.
      auto space = head.find(' ');
      std::string code = space == std::string::npos ? "" : head.substr(space + 1, 3);
      if (head.rfind("HTTP/", 0) != 0 || code.size() != 3 ||
          code.find_first_not_of("0123456789") != std::string::npos) {
        failure = error ? "closed the connection without an HTTP answer"
                        : "answered something other than HTTP";
      } else {
        failure = (code[0] == '2' || code[0] == '3') ? "" : "answered " + code;
      }
    });
  };
  socket.async_connect({addr, port}, [&](boost::system::error_code error) {
    if (error) {
      done = true;
      failure = "refused the connection";
      return;
    }
    asio::async_write(socket, asio::buffer(request), [&](boost::system::error_code error, size_t) {
      if (error) {
        done = true;
        failure = "closed the connection before the request was sent";
        return;
      }
      read();
    });
  });
  ioc.run_for(timeout);
  socket.close(ec);
  if (done) return failure;
  // The handlers still pending refer to this stack: they run (aborted) before it goes.
  const std::string timed_out = failure;
  ioc.restart();
  ioc.poll();
  return timed_out;
}

}  // namespace adapt::net

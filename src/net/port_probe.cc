#include "net/port_probe.h"

#include <boost/asio.hpp>

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

}  // namespace adapt::net

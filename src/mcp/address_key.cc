#include "mcp/address_key.h"

#include <arpa/inet.h>

#include <algorithm>

#include "base/hex.h"

namespace adapt::mcp {

std::string AddressKey(const std::string& address) {
  unsigned char a[16];
  if (address.find(':') == std::string::npos || inet_pton(AF_INET6, address.c_str(), a) != 1)
    return address;
  static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(a, a + 12, kMapped))
    return std::to_string(a[12]) + "." + std::to_string(a[13]) + "." + std::to_string(a[14]) + "." +
           std::to_string(a[15]);
  return HexEncode(a, 8) + "::/64";
}

}  // namespace adapt::mcp

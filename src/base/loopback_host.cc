#include "base/loopback_host.h"

#include <arpa/inet.h>

#include <string>

namespace adapt {

bool IsLoopbackHost(std::string_view host) {
  std::string h(host);
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (h == "localhost") return true;
  unsigned char addr[16];
  // inet_pton takes only the four-part dotted form: no "127.1", octal or trailing names.
  if (inet_pton(AF_INET, h.c_str(), addr) == 1) return addr[0] == 127;
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  if (inet_pton(AF_INET6, h.c_str(), addr) != 1) return false;
  static const unsigned char kLoopback6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  static const unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(addr, addr + 16, kLoopback6)) return true;
  return std::equal(addr, addr + 12, kMapped) && addr[12] == 127;
}

}  // namespace adapt

#include "os/socket.h"

#include <sys/socket.h>

namespace adapt::os {

int NewSocket(int family, int type, int protocol) {
  return ::socket(family, type | SOCK_CLOEXEC, protocol);
}

}  // namespace adapt::os

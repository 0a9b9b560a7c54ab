// A socket for a library that connects it itself (libcurl's open-socket hook, which is
// where registry pulls check an address before connecting to it).
#pragma once

namespace adapt::os {

// A new close-on-exec socket, or -1 (errno set). The caller owns the descriptor.
int NewSocket(int family, int type, int protocol);

}  // namespace adapt::os

// `adapt-agent serve SOCKET`: the in-sandbox agent. It connects to adaptd's per-sandbox
// Unix socket (a host socket bind-mounted into the sandbox, reached through runsc's
// --host-uds=open), then runs the commands adaptd sends over it: many at once, each in its
// own session so a signal reaches its whole process tree, streaming their output back and
// reporting their exit. When the connection drops (adaptd restarted) it reconnects with
// backoff; commands of the old connection keep running, their output is discarded.
// Its stdin holds its key (see AgentHub), which it reads to end of file before anything;
// the process is made non-dumpable first, so the sandbox's other processes cannot read it.
#pragma once

namespace adapt::agent {

// Never returns unless the socket path is unusable.
int Serve(const char* socket_path);

}  // namespace adapt::agent

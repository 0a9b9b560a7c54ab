// How adaptd's own PostgreSQL server (PostgresServer) shares its connection slots: adapt.conf
// writes kMaxConnections, and the database proxy lets at most kSandboxSessions of the sandboxes'
// sessions through in all. Each organization is capped at its plan's limit by the proxy, but
// with many organizations those caps add up past max_connections; without a cap of its own the
// server would refuse adaptd's own sessions, and tell a tenant so in words that name the server.
#pragma once

namespace adapt::database {

inline constexpr int kMaxConnections = 300;
// PostgreSQL's default, written out in adapt.conf so that the sum below stays true: slots only
// a superuser (adaptd's admin role) may keep. The server checks that only once a login is done,
// so logins still authenticating take these slots too: the proxy's share leaves them out.
inline constexpr int kSuperuserReservedConnections = 3;
// adaptd's own sessions at once beyond that reserve: provisioning, quota checks and freezes,
// dumps (pg_dump's session), deletions, and sessions just closed whose backends have not ended.
inline constexpr int kAdaptdConnections = 12;
inline constexpr int kSandboxSessions =
    kMaxConnections - kSuperuserReservedConnections - kAdaptdConnections;
static_assert(kSandboxSessions > 0);

}  // namespace adapt::database

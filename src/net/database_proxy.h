// DatabaseProxy: how a sandbox reaches its organization's PostgreSQL database. The proxy
// listens on the host (0.0.0.0:port) and nftables lets a sandbox reach that port only at its own
// gateway (ruleset.h, database_port). A connection from an address outside the sandbox pool
// is closed as it is accepted; for any other, once its StartupMessage (or CancelRequest) is
// complete, the proxy asks `lookup` which database the peer's address may open (a running sandbox
// created with "database": true: its organization's), reads the client's StartupMessage
// (net/pg_startup.h) and splices it to the server only when both its user and its database are that
// one; anything else gets a FATAL error before a byte reaches the server. So another organization's
// sandbox, or any other address, cannot open a session even with the password; the server then
// checks the password (scram-sha-256). The server is adaptd's own cluster, reached at its Unix
// socket (it has no TCP listener; its pg_hba also says `sameuser`), or an operator's external
// server reached over TCP (--database-admin-url), whose pg_hba sees every sandbox's session come
// from this host. SSL is refused ("N"): the sandbox's hop is inside the host; the hop to an
// external server is plain TCP as well. A session's client socket has TCP keepalive (a vanished
// client ends it within minutes), and Disconnect ends a released sandbox's sessions at once. Query
// cancellation: while a session starts, the proxy reads the server's BackendKeyData
// (net/pg_backend_key.h) and keeps (pid, secret) -> the session's database until the session
// ends. A CancelRequest is passed to the server (a new connection, the same 16 bytes) only when
// its pid and secret are a live session's of the database the peer's address may open; any
// other is dropped without an answer, as PostgreSQL itself answers none. So a sandbox can cancel
// its organization's queries and no other's, even knowing their pid.
// On an I/O thread of its own; at most `limits` connections (per sandbox: per address); a full
// proxy closes the connection waiting longest for its startup packet for a new one. A session
// that has not finished authenticating within kStartupTimeout is closed at both ends, and one
// organization's database gets at most its role's connection limit plus kSessionMargin
// sessions, so that stalled logins of one tenant cannot take every server connection slot; all
// databases together get at most the upstream's session_limit (net/database_session_count.h).
#pragma once

// clang-format off
#include <utility>  // before Asio: its awaitable.hpp uses std::exchange
#include <boost/asio.hpp>
// clang-format on
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/connection_limiter.h"
#include "base/status.h"
#include "net/accept_retry.h"
#include "net/address.h"
#include "net/database_session_count.h"
#include "net/pg_startup.h"

namespace adapt::net {

// Where the proxy sends the sessions it lets through: a Unix socket, or a TCP host and port.
struct DatabaseUpstream {
  std::string socket_path;  // <dir>/.s.PGSQL.<port>; empty: TCP
  std::string host;         // a name (resolved at each connection) or an IP address
  uint16_t port = 0;
  // Sessions the proxy lets through to the server at once, of every database: the server's
  // max_connections less what adaptd's own sessions need (0 or less: no limit of the proxy's).
  int64_t session_limit = 0;
};

// What a peer address may open: its organization's database, whose role allows at most
// `connection_limit` sessions (0 or less: no limit of the proxy's own).
struct DatabaseGrant {
  std::string database;
  int64_t connection_limit = 0;
};

// The database a peer address may open, or nullopt. Called on the proxy's lookup threads
// (kLookupThreads, so maybe at once): thread-safe; it may block (a store read waiting on a busy
// SQLite), which holds up other lookups but no session's bytes.
using DatabaseLookup = std::function<std::optional<DatabaseGrant>(const std::string& address)>;

class DatabaseProxy {
 public:
  // From the accept to the end of the server's authentication (ReadyForQuery or an error):
  // PostgreSQL takes a backend slot before it authenticates, so a client that stalls its login
  // must not hold one for long. The server's own authentication_timeout is the same.
  static constexpr std::chrono::seconds kStartupTimeout{10};
  // Sessions of one database the proxy lets start beyond its role's connection limit.
  static constexpr int64_t kSessionMargin = DatabaseSessionCount::kSessionMargin;
  static constexpr size_t kPumpBuffer = 16 * 1024;
  // Live sessions whose cancel key is kept; more sessions than this cannot be cancelled.
  static constexpr size_t kMaxCancelKeys = 65536;
  // Threads that run `lookup`: off the I/O thread, whose every session would wait on a store
  // read that waits.
  static constexpr size_t kLookupThreads = 2;

  // `sandbox_pool`: a connection from any address but a sandbox's of this pool is closed as it
  // is accepted (nullopt: any address is looked up).
  DatabaseProxy(DatabaseLookup lookup, DatabaseUpstream upstream, ConnectionLimits limits,
                std::optional<AddressPool> sandbox_pool = std::nullopt,
                std::chrono::milliseconds startup_timeout = kStartupTimeout);
  ~DatabaseProxy();
  // Listens on `host`:`port`; a port in use falls back to any free one (logged).
  Status Start(const std::string& host, uint16_t port);
  uint16_t port() const { return port_; }
  void Stop();
  // Sessions in all from now on (an external server's size, read again at each of its checks).
  // Thread-safe: applied on the proxy's I/O thread.
  void SetSessionLimit(int64_t limit);
  // Closes every connection from `address` (a sandbox whose compute was released: a backend of
  // its must not outlive it). Thread-safe; carried out on the proxy's thread a moment later.
  void Disconnect(const std::string& address);

  class Session;  // one proxied connection (database_proxy.cc)

 private:
  void Accept();
  // Keeps the session's cancel key until Forget (false: too many kept already).
  bool Remember(const BackendKey& key, const std::string& database, uint64_t session);
  void Forget(const BackendKey& key, uint64_t session);
  // Whether `key` is a live session's of `database`.
  bool MayCancel(const BackendKey& key, const std::string& database) const;

  struct CancelTarget {
    uint32_t secret = 0;
    std::string database;
    uint64_t session = 0;  // the Session that holds it
  };

  DatabaseLookup lookup_;
  const DatabaseUpstream upstream_;
  const std::optional<AddressPool> sandbox_pool_;
  const std::chrono::milliseconds startup_timeout_;
  // By backend pid; only the I/O thread touches it. Before io_: sessions destroyed with io_'s
  // pending handlers forget their keys here (and their counts below).
  std::unordered_map<uint32_t, CancelTarget> cancel_targets_;
  // Sessions let through to the server and not yet closed; I/O thread only.
  DatabaseSessionCount session_count_;
  // Every connection by its id, for Disconnect; I/O thread only.
  std::unordered_map<uint64_t, std::weak_ptr<Session>> sessions_;
  uint64_t sessions_started_ = 0;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  AcceptRetry accept_retry_;
  ConnectionLimiter limiter_;
  std::thread thread_;
  // After io_: a lookup's session, destroyed with the pool's pending work, still has its
  // sockets' io_context.
  boost::asio::thread_pool lookups_{kLookupThreads};
  uint16_t port_ = 0;
};

}  // namespace adapt::net

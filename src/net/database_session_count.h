// DatabaseSessionCount: the sessions the database proxy let through to the server and that have
// not closed yet, by database and in all. PostgreSQL gives a session a backend before it checks
// its role's connection limit, and past max_connections it refuses with a message that names
// the server; so the proxy refuses first, with its own 53300 (too_many_connections): a database
// past its role's limit plus kSessionMargin, and any database once the server's share for
// sandboxes is taken, so that many organizations' caps, which add up past max_connections, never
// take the slots adaptd's own sessions need. Not thread-safe: the proxy's I/O thread only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace adapt::net {

class DatabaseSessionCount {
 public:
  // Sessions of one database let start beyond its role's connection limit: the server refuses
  // those past the limit itself, but only after it gave them a backend, so the proxy stops the
  // rest before they reach it (a few more: sessions just closed may not have ended on the
  // server yet).
  static constexpr int64_t kSessionMargin = 2;

  enum class Admission { kAdmitted, kDatabaseFull, kServerFull };

  // `server_limit`: sessions in all, of every database (0 or less: no limit of the proxy's).
  explicit DatabaseSessionCount(int64_t server_limit) : server_limit_(server_limit) {}

  // Counts one more session of `database`, whose role allows `connection_limit` (0 or less: no
  // limit of the proxy's own), unless that database or the server is full. Each kAdmitted is
  // matched by one Release.
  Admission Admit(const std::string& database, int64_t connection_limit);
  void Release(const std::string& database);

  // The server's share changed (an external server resized): sessions open past it stay, and
  // new ones wait until they close.
  void set_server_limit(int64_t server_limit) { server_limit_ = server_limit; }
  int64_t server_limit() const { return server_limit_; }
  int64_t open() const { return open_; }
  int64_t open(const std::string& database) const;

 private:
  int64_t server_limit_;
  int64_t open_ = 0;
  std::unordered_map<std::string, int64_t> by_database_;  // no entry: none open
};

}  // namespace adapt::net

// The URL of an external PostgreSQL server's admin role (--database-admin-url, issue 19):
// postgres://USER:PASSWORD@HOST:PORT/DATABASE[?sslmode=MODE]. It carries a password, so nothing
// here ever puts the URL itself into a message: errors say what is wrong without quoting it,
// and Redacted() is the only form a log line may show. Plain std, no state.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace adapt::database {

struct AdminUrl {
  std::string user;
  std::string password;  // may be empty (then libpq finds none: trust or a client certificate)
  std::string host;      // a name, an IPv4 address or an IPv6 address (without brackets)
  uint16_t port = 5432;
  std::string database = "postgres";
  std::string sslmode;  // empty: libpq's default (prefer)

  // postgres://USER:***@HOST:PORT/DATABASE: for log lines.
  std::string Redacted() const;
  // A libpq connection string into `database` (every value quoted), with the password when
  // `with_password`; `connect_timeout` in seconds.
  std::string ConnectionString(const std::string& database, bool with_password,
                               int connect_timeout = 5) const;
  // `text` with every occurrence of the password (as given and percent-encoded) replaced by
  // "***": for messages that come from elsewhere (libpq, pg_dump), in case one ever quotes it.
  std::string Scrub(std::string text) const;
};

// Parses the URL; InvalidArgument (field `databaseAdminUrl`) with a message that does not
// quote the URL when it is not of the form above (scheme postgres:// or postgresql://, a user,
// a host, a port 1-65535, one database name, no query parameter but sslmode).
Result<AdminUrl> ParseAdminUrl(const std::string& url);

}  // namespace adapt::database

// PgSession: one libpq connection, for adaptd's administration of its PostgreSQL server (roles,
// databases, sizes). Statements take parameters ($1, ...) instead of text spliced into SQL;
// identifiers and literals that PostgreSQL cannot take as parameters (role names, passwords in
// ALTER ROLE) go through QuoteIdentifier / EncryptPassword. Not thread-safe: one per thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::database {

class PgSession {
 public:
  // Connects with a libpq connection string; Unavailable when the server does not answer.
  static Result<std::unique_ptr<PgSession>> Open(const std::string& connection_string);
  ~PgSession();
  PgSession(const PgSession&) = delete;
  PgSession& operator=(const PgSession&) = delete;

  // Runs a statement that returns no rows we need.
  Status Execute(const std::string& sql, const std::vector<std::string>& params = {});
  // The first column of the first row; nullopt when there is no row or it is NULL.
  Result<std::optional<std::string>> QueryValue(const std::string& sql,
                                                const std::vector<std::string>& params = {});
  // The first column of every row (NULLs as empty strings).
  Result<std::vector<std::string>> QueryColumn(const std::string& sql,
                                               const std::vector<std::string>& params = {});
  // "name" with embedded quotes doubled.
  std::string QuoteIdentifier(const std::string& name);
  // The SCRAM-SHA-256 verifier of `password` for `role`, made here, so that the password
  // itself never reaches the server (nor its logs).
  Result<std::string> EncryptPassword(const std::string& role, const std::string& password);
  // The server's version, e.g. "15.8".
  std::string ServerVersion();

 private:
  struct Connection;
  explicit PgSession(std::unique_ptr<Connection> connection);
  std::unique_ptr<Connection> connection_;
};

}  // namespace adapt::database

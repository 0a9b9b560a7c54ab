#include "database/pg_session.h"

#include <libpq-fe.h>

namespace adapt::database {
namespace {

std::string LastError(PGconn* conn) {
  std::string m = PQerrorMessage(conn);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using UniqueResult = std::unique_ptr<PGresult, ResultDeleter>;

}  // namespace

struct PgSession::Connection {
  PGconn* conn = nullptr;
  ~Connection() {
    if (conn) PQfinish(conn);
  }
};

PgSession::PgSession(std::unique_ptr<Connection> connection) : connection_(std::move(connection)) {}
PgSession::~PgSession() = default;

Result<std::unique_ptr<PgSession>> PgSession::Open(const std::string& connection_string) {
  auto c = std::make_unique<Connection>();
  c->conn = PQconnectdb(connection_string.c_str());
  if (!c->conn) return Status(Code::kUnavailable, "connecting to PostgreSQL: out of memory");
  if (PQstatus(c->conn) != CONNECTION_OK)
    return Status(Code::kUnavailable, "connecting to PostgreSQL: " + LastError(c->conn));
  return std::unique_ptr<PgSession>(new PgSession(std::move(c)));
}

static UniqueResult Run(PGconn* conn, const std::string& sql,
                        const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  return UniqueResult(PQexecParams(conn, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                   values.empty() ? nullptr : values.data(), nullptr, nullptr, 0));
}

Status PgSession::Execute(const std::string& sql, const std::vector<std::string>& params) {
  // Without parameters, the simple protocol: CREATE DATABASE refuses the extended one's
  // implicit transaction.
  UniqueResult r = params.empty() ? UniqueResult(PQexec(connection_->conn, sql.c_str()))
                                  : Run(connection_->conn, sql, params);
  ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
    return Status(Code::kInternal, "PostgreSQL: " + LastError(connection_->conn));
  return Status::Ok();
}

Result<std::optional<std::string>> PgSession::QueryValue(const std::string& sql,
                                                         const std::vector<std::string>& params) {
  UniqueResult r = Run(connection_->conn, sql, params);
  if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK)
    return Status(Code::kInternal, "PostgreSQL: " + LastError(connection_->conn));
  if (PQntuples(r.get()) == 0 || PQnfields(r.get()) == 0 || PQgetisnull(r.get(), 0, 0))
    return std::optional<std::string>();
  return std::optional<std::string>(PQgetvalue(r.get(), 0, 0));
}

Result<std::vector<std::string>> PgSession::QueryColumn(const std::string& sql,
                                                        const std::vector<std::string>& params) {
  UniqueResult r = Run(connection_->conn, sql, params);
  if (!r || PQresultStatus(r.get()) != PGRES_TUPLES_OK)
    return Status(Code::kInternal, "PostgreSQL: " + LastError(connection_->conn));
  std::vector<std::string> out;
  if (PQnfields(r.get()) == 0) return out;
  for (int i = 0; i < PQntuples(r.get()); ++i) out.push_back(PQgetvalue(r.get(), i, 0));
  return out;
}

std::string PgSession::QuoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

Result<std::string> PgSession::EncryptPassword(const std::string& role,
                                               const std::string& password) {
  char* v =
      PQencryptPasswordConn(connection_->conn, password.c_str(), role.c_str(), "scram-sha-256");
  if (!v) return Status(Code::kInternal, "hashing a password: " + LastError(connection_->conn));
  std::string out(v);
  PQfreemem(v);
  return out;
}

std::string PgSession::ServerVersion() {
  const char* v = PQparameterStatus(connection_->conn, "server_version");
  return v ? v : "";
}

}  // namespace adapt::database

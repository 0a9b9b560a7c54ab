#include "database/write_freeze.h"

#include <vector>

namespace adapt::database {
namespace {

// The tenant's schemas (every one but PostgreSQL's own), quoted by the server.
constexpr const char* kTenantSchemas =
    "SELECT quote_ident(nspname) FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
    "AND nspname <> 'information_schema' ORDER BY 1";
// SECURITY DEFINER routines in them, as signatures GRANT and REVOKE take.
constexpr const char* kDefinerRoutines =
    "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = "
    "p.pronamespace WHERE p.prosecdef AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> "
    "'information_schema' ORDER BY 1";
constexpr const char* kLargeObjectCreators =
    "lo_creat(integer), lo_create(oid), lo_from_bytea(oid, bytea)";

// Runs `statements` in one transaction that waits at most 10 s for a lock.
Status InTransaction(PgSession& s, const std::vector<std::string>& statements) {
  RETURN_IF_ERROR(s.Execute("BEGIN"));
  Status st = s.Execute("SET LOCAL lock_timeout = '10s'");
  for (size_t i = 0; st.ok() && i < statements.size(); ++i) st = s.Execute(statements[i]);
  if (st.ok()) st = s.Execute("COMMIT");
  if (!st.ok()) (void)s.Execute("ROLLBACK");
  return st;
}

}  // namespace

std::string FrozenOwnerName(const std::string& role) { return role + "_frozen"; }

Status JoinRole(PgSession& s, const std::string& role) {
  ASSIGN_OR_RETURN(
      auto superuser,
      s.QueryValue("SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user"));
  if (superuser && *superuser == "true") return Status::Ok();
  ASSIGN_OR_RETURN(auto member, s.QueryValue("SELECT pg_has_role($1, 'MEMBER')::text", {role}));
  if (member && *member == "true") return Status::Ok();
  return s.Execute("GRANT " + s.QuoteIdentifier(role) + " TO CURRENT_USER");
}

Status EndSessionsOf(PgSession& s, const std::string& role) {
  return s
      .QueryColumn(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1 "
          "AND pid <> pg_backend_pid()",
          {role})
      .status();
}

Status FreezeWrites(PgSession& s, const std::string& role) {
  const std::string r = s.QuoteIdentifier(role);
  const std::string holder = s.QuoteIdentifier(FrozenOwnerName(role));
  ASSIGN_OR_RETURN(auto exists, s.QueryValue("SELECT 1 FROM pg_roles WHERE rolname = $1",
                                             {FrozenOwnerName(role)}));
  if (!exists) RETURN_IF_ERROR(s.Execute("CREATE ROLE " + holder + " NOLOGIN NOINHERIT"));
  RETURN_IF_ERROR(JoinRole(s, FrozenOwnerName(role)));
  RETURN_IF_ERROR(JoinRole(s, role));
  RETURN_IF_ERROR(EndSessionsOf(s, role));
  // The lists are read before REASSIGN, which changes no name or signature.
  ASSIGN_OR_RETURN(std::vector<std::string> schemas, s.QueryColumn(kTenantSchemas));
  ASSIGN_OR_RETURN(std::vector<std::string> routines, s.QueryColumn(kDefinerRoutines));
  std::vector<std::string> statements = {
      "REASSIGN OWNED BY " + r + " TO " + holder, "REVOKE ALL ON DATABASE " + r + " FROM PUBLIC",
      "GRANT CONNECT ON DATABASE " + r + " TO " + r,
      std::string("REVOKE EXECUTE ON FUNCTION ") + kLargeObjectCreators + " FROM PUBLIC"};
  for (const auto& schema : schemas) {
    statements.push_back("REVOKE CREATE ON SCHEMA " + schema + " FROM PUBLIC");
    statements.push_back("GRANT USAGE ON SCHEMA " + schema + " TO " + r);
    for (const char* kind : {"TABLES", "SEQUENCES"}) {
      statements.push_back(std::string("REVOKE ALL ON ALL ") + kind + " IN SCHEMA " + schema +
                           " FROM PUBLIC, " + r);
      statements.push_back(std::string("GRANT SELECT ON ALL ") + kind + " IN SCHEMA " + schema +
                           " TO " + r);
    }
  }
  for (const auto& routine : routines)
    statements.push_back("REVOKE EXECUTE ON ROUTINE " + routine + " FROM PUBLIC, " + r);
  return InTransaction(s, statements);
}

Status ThawWrites(PgSession& s, const std::string& role) {
  const std::string r = s.QuoteIdentifier(role);
  ASSIGN_OR_RETURN(auto exists, s.QueryValue("SELECT 1 FROM pg_roles WHERE rolname = $1",
                                             {FrozenOwnerName(role)}));
  if (!exists) return Status::Ok();  // never frozen
  RETURN_IF_ERROR(JoinRole(s, FrozenOwnerName(role)));
  RETURN_IF_ERROR(JoinRole(s, role));
  RETURN_IF_ERROR(EndSessionsOf(s, role));
  ASSIGN_OR_RETURN(std::vector<std::string> routines, s.QueryColumn(kDefinerRoutines));
  std::vector<std::string> statements = {
      "REASSIGN OWNED BY " + s.QuoteIdentifier(FrozenOwnerName(role)) + " TO " + r,
      std::string("GRANT EXECUTE ON FUNCTION ") + kLargeObjectCreators + " TO PUBLIC"};
  for (const auto& routine : routines)
    statements.push_back("GRANT EXECUTE ON ROUTINE " + routine + " TO PUBLIC");
  return InTransaction(s, statements);
}

}  // namespace adapt::database

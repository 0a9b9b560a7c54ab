// ExternalPostgres: an operator's PostgreSQL server (a managed service, CloudNativePG, Patroni)
// that holds the organizations' databases instead of adaptd's own cluster
// (--database-admin-url, issue 19). adaptd only connects to it with the URL's admin role, which
// needs CREATEDB and CREATEROLE (or SUPERUSER), and `GRANT SET ON PARAMETER temp_file_limit` when
// it is no superuser; it never edits the server's pg_hba, listeners or other databases.
//
// Start() is a reachability check (one connection), made at every use, so that the databases'
// status follows the server: unavailable while it does not answer, ready again when it does.
// The password reaches libpq (a connection string in memory) and pg_dump (its environment),
// never a command line, a log line or an error. Thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "database/admin_url.h"
#include "database/database_server.h"

namespace adapt::database {

class ExternalPostgres : public DatabaseServer {
 public:
  // `scratch_dir`: where dumps are written before they are stored (made on first dump).
  ExternalPostgres(AdminUrl url, std::string scratch_dir,
                   std::string bin_dir = "/usr/lib/postgresql/15/bin");

  // Connects as the admin role; Unavailable ("cannot be reached", no host) when it cannot,
  // and when the role may not make roles and databases. Logs each change of reachability
  // once, with the reason (its password scrubbed).
  Status Start() override;
  Status Stop() override { return Status::Ok(); }
  std::string version() const override;
  std::string AdminConnectionString(const std::string& database = "postgres") const override;
  Status Dump(const std::string& database, const std::string& path) const override;
  std::string ScratchDir() const override { return scratch_dir_; }
  bool owns_cluster() const override { return false; }

  // The sessions the sandboxes may hold on the server in all: its max_connections less the slots
  // it reserves (superuser_reserved_connections, reserved_connections) and adaptd's own
  // (kAdaptdConnections), at least 1; read at each Start, nullopt before one succeeded.
  std::optional<int64_t> sandbox_sessions() const;
  // Called (from the thread that ran Start) whenever Start reads a figure other than the last.
  void OnSandboxSessions(std::function<void(int64_t)> changed);

  // Where the database proxy sends the sandboxes' sessions.
  const std::string& host() const { return url_.host; }
  uint16_t port() const { return url_.port; }

 private:
  // Records the outcome of a check and logs it when it changed. REQUIRES: mu_ held.
  void Note(bool reachable, const std::string& detail);

  const AdminUrl url_;
  const std::string scratch_dir_;
  const std::string bin_dir_;
  mutable std::mutex mu_;
  std::optional<bool> reachable_;  // nullopt: never checked
  std::string version_;
  std::optional<int64_t> sandbox_sessions_;
  bool slots_unread_ = false;  // the last check could not read max_connections (logged once)
  std::function<void(int64_t)> sessions_changed_;
};

}  // namespace adapt::database

// PostgresServer: the PostgreSQL cluster adaptd runs for its organizations' databases (issue
// 19), under <state>/postgres: data/ (the cluster, made by initdb on first start into
// data.partial/ and renamed once complete, so that a crash never leaves it half-made), run/ (its
// Unix socket, the only way in: listen_addresses is empty, no TCP at all) and postgres.log.
//
// PostgreSQL refuses to run as root, so every server command runs as an unprivileged OS user
// (Debian's `postgres`) through setpriv. That user cannot search adaptd's 0700 state
// directory, so each command runs in a private mount namespace where the cluster's directory
// is bind-mounted at a path it can reach (`view_dir`, under /run); nothing of the state
// directory changes mode. The server is started with pg_ctl, so it outlives adaptd: after a
// kill -9, Start() finds the running postmaster (postmaster.pid) and reuses it.
//
// A supervisor thread checks the postmaster every second and starts it again when it has
// died. Thread-safe.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "database/database_server.h"

namespace adapt::database {

struct PostgresOptions {
  std::string bin_dir = "/usr/lib/postgresql/15/bin";  // initdb, pg_ctl, postgres
  std::string root;                                    // <state>/postgres
  std::string os_user = "postgres";                    // the server's OS user
  // Where the server sees `root` (its mount namespace's bind mount); empty: /run/adapt-postgres/
  // <a digest of root>, so two adaptds on one host never share one.
  std::string view_dir;
  uint16_t port = 5432;  // names the socket file only
};

class PostgresServer : public DatabaseServer {
 public:
  explicit PostgresServer(PostgresOptions options);
  // Stops the supervisor; the server itself keeps running (Stop() stops it).
  ~PostgresServer() override;
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // Makes the cluster on first use, then reuses a running postmaster or starts one and waits
  // until it accepts connections; starts the supervisor. Idempotent.
  Status Start() override;
  // Stops the supervisor and the server (fast shutdown: sessions are ended).
  Status Stop() override;
  // True once Start() succeeded and the postmaster was alive at the supervisor's last look.
  bool running() const;
  // The server's major version ("15"), from its binaries.
  std::string version() const override { return version_; }
  // libpq connection string of the superuser over the Unix socket (peer authentication: only
  // root and the server's OS user can use it).
  std::string AdminConnectionString(const std::string& database = "postgres") const override;
  // Writes a pg_dump custom-format archive (-Fc) of `database` to `path` (a host path), as
  // the superuser over the Unix socket.
  Status Dump(const std::string& database, const std::string& path) const override;
  // Where dumps are written before they are stored (0700, root's).
  std::string ScratchDir() const override { return options_.root + "/scratch"; }
  bool owns_cluster() const override { return true; }
  // The directory of the server's socket, as the host sees it.
  std::string SocketDir() const { return options_.root + "/run"; }
  uint16_t port() const { return options_.port; }

 private:
  std::string DataDir() const { return options_.root + "/data"; }
  // Where initdb makes the cluster before it is renamed to DataDir().
  std::string PartialDir() const { return options_.root + "/data.partial"; }
  // Makes the cluster unless DataDir() holds a complete one; then sees that its postgresql.conf
  // includes adapt.conf. A half-made one (a crash while it was made) is made again.
  Status Initialize();
  bool ClusterComplete() const;
  // Adds the include of adapt.conf to data_dir's postgresql.conf where it lacks it, then the
  // marker of a complete cluster.
  Status MarkComplete(const std::string& data_dir);
  // Kills what a crashed adaptd's making of the cluster left running: its initdb and backends,
  // and a postmaster holding the lock file of DataDir() or PartialDir(), each only when its
  // command line, environment or lock file names a data directory under our view_dir; waits
  // until they are gone.
  Status StopLeftovers();
  Status WriteConfiguration();
  Status StartPostmaster();
  pid_t PostmasterPid() const;  // 0 when no postmaster of ours runs
  bool PostmasterAlive() const;
  // Runs argv as the server's OS user in the mount namespace that shows `root` at view_dir.
  Status RunAsServer(const std::vector<std::string>& argv, const std::string& what);
  void Supervise();

  PostgresOptions options_;
  std::string version_ = "15";
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool started_ = false;
  bool stopping_ = false;
  bool alive_ = false;
  std::thread supervisor_;
};

}  // namespace adapt::database

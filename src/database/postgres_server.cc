#include "database/postgres_server.h"

#include <signal.h>

#include <chrono>
#include <utility>

#include "base/background_work.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/log.h"
#include "database/connection_budget.h"
#include "os/files.h"
#include "os/process.h"

namespace adapt::database {
namespace {

// Ours, rewritten at every start: the superuser only through peer authentication (root and
// the server's OS user), every tenant role only into its own database (`sameuser`) with a
// SCRAM password. Nothing over TCP: the server has no TCP listener.
constexpr const char* kHba =
    "# Written by adaptd at every start; edits are lost.\n"
    "local all postgres peer map=adapt\n"
    "local sameuser all scram-sha-256\n";
constexpr const char* kIdent =
    "# Written by adaptd at every start; edits are lost.\n"
    "adapt root postgres\n"
    "adapt postgres postgres\n";

// The line that puts adapt.conf over initdb's postgresql.conf, and the file written once the
// cluster has it (initdb writes PG_VERSION first, so that says nothing).
constexpr const char* kInclude = "include 'adapt.conf'";
constexpr const char* kCompleteMarker = "adapt-cluster-complete";

// postmaster.pid's first two lines: the pid of the postgres holding it and its data directory.
std::pair<pid_t, std::string> LockFileOwner(const std::string& lock) {
  size_t first = lock.find('\n');
  if (first == std::string::npos) return {0, ""};
  size_t second = lock.find('\n', first + 1);
  if (second == std::string::npos) return {0, ""};
  return {static_cast<pid_t>(std::atoi(lock.c_str())), lock.substr(first + 1, second - first - 1)};
}

}  // namespace

PostgresServer::PostgresServer(PostgresOptions options) : options_(std::move(options)) {
  if (options_.view_dir.empty())
    options_.view_dir = "/run/adapt-postgres/" + Sha256Hex(options_.root).substr(0, 16);
}

PostgresServer::~PostgresServer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
}

std::string PostgresServer::AdminConnectionString(const std::string& database) const {
  return "host=" + SocketDir() + " port=" + std::to_string(options_.port) +
         " user=postgres dbname=" + database + " connect_timeout=10";
}

Status PostgresServer::Dump(const std::string& database, const std::string& path) const {
  auto result = os::RunCommand({options_.bin_dir + "/pg_dump", "--format=custom", "--file=" + path,
                                "--dbname=" + AdminConnectionString(database)});
  if (!result.ok()) return result.status().WithContext("running pg_dump");
  if (result->status.signaled() || result->status.exit_code != 0) {
    std::string out = result->output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    if (auto nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
    return Status(Code::kInternal, "pg_dump failed: " + out);
  }
  return Status::Ok();
}

Status PostgresServer::RunAsServer(const std::vector<std::string>& argv, const std::string& what) {
  // sh -c 'mount --bind ROOT VIEW && exec "$@"': the bind mount lives and dies with this
  // namespace (and the postmaster pg_ctl leaves running in it). A slave of the host's, so
  // that the sandboxes' disks the host unmounts go from it too (os/mount_propagation.h).
  std::vector<std::string> cmd = {"unshare",
                                  "--mount",
                                  "--propagation",
                                  "slave",
                                  "--",
                                  "/bin/sh",
                                  "-c",
                                  "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
                                  "adapt-postgres",
                                  options_.root,
                                  options_.view_dir,
                                  "setpriv",
                                  "--reuid=" + options_.os_user,
                                  "--regid=" + options_.os_user,
                                  "--init-groups",
                                  "--"};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  os::SpawnOptions spawn;
  spawn.new_session = true;  // the postmaster must not get adaptd's terminal signals
  ASSIGN_OR_RETURN(os::CommandResult result, os::RunCommand(cmd, spawn));
  if (result.status.signaled() || result.status.exit_code != 0) {
    std::string out = result.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    if (auto nl = out.rfind('\n'); nl != std::string::npos) out = out.substr(nl + 1);
    return Status(Code::kUnavailable, what + " failed: " + out);
  }
  return Status::Ok();
}

bool PostgresServer::ClusterComplete() const {
  if (!os::Exists(DataDir() + "/PG_VERSION")) return false;
  if (os::Exists(DataDir() + "/" + kCompleteMarker)) return true;
  // An older adaptd made the cluster in place and marked it done only by the include line,
  // appended after initdb returned: without the line, initdb never finished (or adaptd died
  // right after it) and no database of ours can be in it, since the server it ran could not
  // be reached.
  auto conf = os::ReadFile(DataDir() + "/postgresql.conf");
  return conf.ok() && conf->find(kInclude) != std::string::npos;
}

Status PostgresServer::MarkComplete(const std::string& data_dir) {
  auto conf = os::ReadFile(data_dir + "/postgresql.conf");
  if (!conf.ok()) return conf.status().WithContext("reading the cluster's postgresql.conf");
  if (conf->find(kInclude) == std::string::npos) {
    // Without it the server starts on PostgreSQL's defaults: a TCP port and a socket where
    // adaptd does not look.
    RETURN_IF_ERROR(
        os::WriteFileAtomic(data_dir + "/postgresql.conf", *conf + "\n" + kInclude + "\n", 0644)
            .WithContext("adding adapt.conf to the cluster's postgresql.conf"));
  }
  if (os::Exists(data_dir + "/" + kCompleteMarker)) return Status::Ok();
  return os::WriteFileAtomic(data_dir + "/" + kCompleteMarker,
                             "initdb finished; postgresql.conf includes adapt.conf\n", 0600);
}

Status PostgresServer::StopLeftovers() {
  // First a postmaster (an older adaptd's, started on the half-made cluster) that holds either
  // directory's lock file, which names it and the directory it runs on (as it sees it): asked
  // to quit, it removes its shared memory and takes its children with it.
  for (const std::string& dir : {DataDir(), PartialDir()}) {
    auto lock = os::ReadFile(dir + "/postmaster.pid");
    if (!lock.ok()) continue;
    auto [pid, data_dir] = LockFileOwner(*lock);
    if (data_dir != options_.view_dir + dir.substr(options_.root.size()) ||
        !os::ProcessMatches(pid, "postgres"))
      continue;
    spdlog::warn("PostgreSQL: stopping process {}, left running on the half-made cluster {}", pid,
                 dir);
    // SIGQUIT: an immediate shutdown, which takes the postmaster's children with it.
    RETURN_IF_ERROR(os::Signal(pid, SIGQUIT));
    for (int i = 0; i < 200 && os::ProcessMatches(pid, "postgres"); ++i) {
      if (i == 100) RETURN_IF_ERROR(os::Signal(pid, SIGKILL));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (os::ProcessMatches(pid, "postgres"))
      return Status(Code::kUnavailable, "postgres " + std::to_string(pid) + " did not stop");
  }
  // Then the rest of ours, killed: those that name a data directory under our view_dir (a
  // digest of root), which no other adaptd's and nobody else's process does: the initdb by
  // its --pgdata, its bootstrap and single-user backends (and the shells that run them) by the
  // PGDATA initdb gives them. Passes until one finds none: that is the wait for the killed,
  // and one started meanwhile goes too.
  const std::string data = options_.view_dir + "/data";
  for (int pass = 0;; ++pass) {
    bool found = false;
    for (const std::string& entry : os::ListDir("/proc")) {
      pid_t pid = static_cast<pid_t>(std::atoi(entry.c_str()));
      if (pid <= 0) continue;
      auto environ = os::ReadFile("/proc/" + entry + "/environ");  // empty once it is gone
      if (!os::ProcessMatches(pid, "--pgdata " + data) &&
          !(environ.ok() && environ->find("PGDATA=" + data) != std::string::npos))
        continue;
      if (pass == 0)
        spdlog::warn("PostgreSQL: killing process {}, left running by the making of the cluster",
                     pid);
      RETURN_IF_ERROR(os::Signal(pid, SIGKILL));
      found = true;
    }
    if (!found) break;
    if (pass == 100) return Status(Code::kUnavailable, "processes of its making did not stop");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::Ok();
}

Status PostgresServer::Initialize() {
  RETURN_IF_ERROR(os::MakeDirs(options_.root, 0700));
  RETURN_IF_ERROR(os::MakeDirs(options_.view_dir, 0755));
  RETURN_IF_ERROR(
      os::RunChecked({"chown", options_.os_user + ":" + options_.os_user, options_.root}));
  // Checked at every start: the include is what gives the server our socket and no TCP.
  if (ClusterComplete()) return MarkComplete(DataDir());
  // A crash while the cluster was made leaves a half-made one, perhaps with its initdb and
  // bootstrap backend still running (they outlive adaptd): both go, and it is made again.
  if (os::Exists(DataDir()) || os::Exists(PartialDir()))
    spdlog::warn("PostgreSQL: the cluster in {} was left half-made; making it again",
                 options_.root);
  RETURN_IF_ERROR(StopLeftovers().WithContext("stopping what made the half-made cluster"));
  RETURN_IF_ERROR(os::RemoveTree(DataDir()));
  RETURN_IF_ERROR(os::RemoveTree(PartialDir()));
  // Made aside and renamed into place once complete, so that data/ is never half-made.
  RETURN_IF_ERROR(
      RunAsServer({options_.bin_dir + "/initdb", "--pgdata", options_.view_dir + "/data.partial",
                   "--username", "postgres", "--encoding", "UTF8", "--locale", "C.UTF-8",
                   "--auth-local", "peer", "--auth-host", "reject"},
                  "initdb"));
  ADAPT_FAULT_POINT("database.initdb.after_initdb");
  RETURN_IF_ERROR(MarkComplete(PartialDir()));
  RETURN_IF_ERROR(os::Rename(PartialDir(), DataDir()));
  return os::RunChecked({"sync", options_.root});
}

Status PostgresServer::WriteConfiguration() {
  RETURN_IF_ERROR(os::MakeDirs(options_.view_dir, 0755));
  RETURN_IF_ERROR(os::MakeDirs(options_.root + "/run", 0700));
  RETURN_IF_ERROR(
      os::RunChecked({"chown", options_.os_user + ":" + options_.os_user, options_.root + "/run"}));
  std::string conf =
      "# Written by adaptd at every start; edits are lost.\n"
      "listen_addresses = ''\n"
      "unix_socket_directories = '" +
      options_.view_dir + "/run'\n" + "port = " + std::to_string(options_.port) +
      "\n"
      "password_encryption = 'scram-sha-256'\n"
      "max_connections = " +
      std::to_string(kMaxConnections) + "\n" +
      "superuser_reserved_connections = " + std::to_string(kSuperuserReservedConnections) +
      "\n"
      // A backend is taken before authentication: a stalled login gives it back this soon
      // (the database proxy closes such a login at the same time).
      "authentication_timeout = 10s\n"
      "shared_buffers = 64MB\n"
      "log_connections = off\n"
      "log_statement = 'none'\n";
  RETURN_IF_ERROR(os::WriteFileAtomic(DataDir() + "/adapt.conf", conf, 0644));
  RETURN_IF_ERROR(os::WriteFileAtomic(DataDir() + "/pg_hba.conf", kHba, 0644));
  return os::WriteFileAtomic(DataDir() + "/pg_ident.conf", kIdent, 0644);
}

pid_t PostgresServer::PostmasterPid() const {
  auto pid_file = os::ReadFile(DataDir() + "/postmaster.pid");
  if (!pid_file.ok()) return 0;
  pid_t pid = static_cast<pid_t>(std::atoi(pid_file->c_str()));
  return os::ProcessMatches(pid, options_.bin_dir + "/postgres") ? pid : 0;
}

bool PostgresServer::PostmasterAlive() const { return PostmasterPid() > 0; }

Status PostgresServer::StartPostmaster() {
  if (PostmasterAlive()) return Status::Ok();
  RETURN_IF_ERROR(WriteConfiguration());
  return RunAsServer(
      {options_.bin_dir + "/pg_ctl", "--pgdata", options_.view_dir + "/data", "--log",
       options_.view_dir + "/postgres.log", "--wait", "--timeout", "60", "--silent", "start"},
      "starting PostgreSQL");
}

Status PostgresServer::Start() {
  std::lock_guard lock(mu_);
  if (started_) return Status::Ok();
  auto installed = os::RunCommand({"test", "-x", options_.bin_dir + "/postgres"});
  if (!installed.ok() || installed->status.exit_code != 0)
    return Status(Code::kUnavailable, "PostgreSQL is not installed (no " + options_.bin_dir +
                                          "/postgres); install postgresql-15");
  // Started on a tenant's first database request too: the messages name the host's paths.
  const char* kNotStarted = "the database server could not be started; retry later";
  if (Status st = Initialize(); !st.ok())
    return Status(Code::kUnavailable,
                  "making the PostgreSQL cluster in " + options_.root + ": " + st.message())
        .WithClientMessage(kNotStarted);
  if (PostmasterAlive()) {
    spdlog::info("PostgreSQL: reusing the running server in {}", options_.root);
  } else if (Status st = StartPostmaster(); !st.ok()) {
    return Status(Code::kUnavailable, st.message() + " (log: " + options_.root + "/postgres.log)")
        .WithClientMessage(kNotStarted);
  }
  started_ = true;
  stopping_ = false;
  alive_ = true;
  supervisor_ = std::thread(Guarded("PostgreSQL supervisor", [this] { Supervise(); }));
  return Status::Ok();
}

void PostgresServer::Supervise() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (stopping_) break;
    RunGuarded("PostgreSQL supervisor pass", [this] {
      alive_ = PostmasterAlive();
      if (alive_) return;
      spdlog::warn("PostgreSQL: the server in {} is gone; starting it again", options_.root);
      Status st = StartPostmaster();
      alive_ = st.ok();
      if (!st.ok()) spdlog::error("PostgreSQL: {}", st.message());
    });
  }
}

Status PostgresServer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (!started_) return Status::Ok();
    stopping_ = true;
  }
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
  std::lock_guard lock(mu_);
  started_ = false;
  alive_ = false;
  if (pid_t postmaster = PostmasterPid(); postmaster > 0) {
    RETURN_IF_ERROR(
        RunAsServer({options_.bin_dir + "/pg_ctl", "--pgdata", options_.view_dir + "/data",
                     "--mode", "fast", "--wait", "--silent", "stop"},
                    "stopping PostgreSQL"));
    // pg_ctl returns once postmaster.pid is gone, which the postmaster removes on its way
    // out, not after: stopped means the process is gone too (the unit test under ASan saw it
    // still there).
    for (int i = 0; i < 100 && os::ProcessMatches(postmaster, options_.bin_dir + "/postgres"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Only a mount point inside the server's namespaces, which are gone with it.
  return os::RemoveTree(options_.view_dir);
}

bool PostgresServer::running() const {
  std::lock_guard lock(mu_);
  return started_ && alive_;
}

}  // namespace adapt::database

// PostgresServer against Debian's real postgresql-15, in a 0700 scratch directory that the
// server's OS user cannot search (as adaptd's state directory): initdb, peer access for root,
// restart after the postmaster is killed, reuse by a second PostgresServer (adaptd restarted
// after a kill -9) with the data intact, and the repair of what a crash while the cluster was
// made leaves (a half-made cluster, a lost include of adapt.conf, a leftover initdb).
#include "database/postgres_server.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <thread>

#include "database/connection_budget.h"
#include "database/pg_session.h"
#include "os/files.h"
#include "os/process.h"
#include "os/temp_dir.h"

namespace adapt::database {
namespace {

class PostgresServerTest : public ::testing::Test {
 protected:
  void SetUp() override { options_.root = dir_ + "/postgres"; }
  void TearDown() override {
    PostgresServer server(options_);
    (void)server.Start();
    (void)server.Stop();
  }
  pid_t PostmasterPid() {
    auto text = os::ReadFile(options_.root + "/data/postmaster.pid");
    return text.ok() ? static_cast<pid_t>(std::atoi(text->c_str())) : 0;
  }
  os::TempDir tmp_{"pg-test"};
  const std::string dir_ = tmp_.path();
  PostgresOptions options_;
};

TEST_F(PostgresServerTest, StartsRestartsAfterItsPostmasterDiesAndIsReusedByTheNextAdaptd) {
  {
    PostgresServer server(options_);
    Status started = server.Start();
    ASSERT_TRUE(started.ok()) << started.message();
    auto session = PgSession::Open(server.AdminConnectionString());
    ASSERT_TRUE(session.ok()) << session.status().message();
    EXPECT_EQ((*session)->ServerVersion().substr(0, 3), "15.");
    // A stalled login (the database proxy's sandboxes') gives its backend back this soon.
    auto timeout = (*session)->QueryValue("SHOW authentication_timeout");
    ASSERT_TRUE(timeout.ok()) << timeout.status().message();
    EXPECT_EQ(timeout->value_or(""), "10s");
    // The database proxy's cap in all (kSandboxSessions) is a share of these.
    auto max_connections = (*session)->QueryValue("SHOW max_connections");
    ASSERT_TRUE(max_connections.ok()) << max_connections.status().message();
    EXPECT_EQ(max_connections->value_or(""), std::to_string(kMaxConnections));
    auto reserved = (*session)->QueryValue("SHOW superuser_reserved_connections");
    ASSERT_TRUE(reserved.ok()) << reserved.status().message();
    EXPECT_EQ(reserved->value_or(""), std::to_string(kSuperuserReservedConnections));
    ASSERT_TRUE((*session)->Execute("CREATE TABLE kept (v text)").ok());
    ASSERT_TRUE((*session)->Execute("INSERT INTO kept VALUES ($1)", {"hello"}).ok());
    session->reset();

    pid_t first = PostmasterPid();
    ASSERT_GT(first, 0);
    ASSERT_TRUE(os::Signal(first, SIGKILL).ok());
    bool back = false;
    for (int i = 0; i < 150 && !back; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      back = PostmasterPid() != first && server.running() &&
             PgSession::Open(server.AdminConnectionString()).ok();
    }
    EXPECT_TRUE(back) << "the supervisor did not start PostgreSQL again";
  }  // like adaptd killed: the server keeps running
  pid_t left = PostmasterPid();
  PostgresServer next(options_);
  ASSERT_TRUE(next.Start().ok());
  EXPECT_EQ(PostmasterPid(), left) << "the running server was not reused";
  auto session = PgSession::Open(next.AdminConnectionString());
  ASSERT_TRUE(session.ok()) << session.status().message();
  auto value = (*session)->QueryValue("SELECT v FROM kept");
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(value->value_or(""), "hello");
  session->reset();
  ASSERT_TRUE(next.Stop().ok());
  EXPECT_FALSE(os::ProcessMatches(left, "postgres"));
  EXPECT_FALSE(os::ReadFile(dir_ + "/postgres/data/postmaster.pid").ok());
}

// A crash while initdb ran (inside it, before adaptd added the include of adapt.conf) leaves a
// cluster that PG_VERSION alone calls made; the next start makes it again.
TEST_F(PostgresServerTest, AClusterLeftHalfMadeByACrashIsMadeAgain) {
  ASSERT_TRUE(os::MakeDirs(options_.root + "/data", 0700).ok());
  ASSERT_TRUE(os::WriteFileAtomic(options_.root + "/data/PG_VERSION", "15\n").ok());
  ASSERT_TRUE(os::MakeDirs(options_.root + "/data.partial", 0700).ok());
  PostgresServer server(options_);
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  EXPECT_TRUE(PgSession::Open(server.AdminConnectionString()).ok());
  EXPECT_FALSE(os::Exists(options_.root + "/data.partial"));
  ASSERT_TRUE(server.Stop().ok());
}

// An older adaptd made the cluster in place; killed after initdb returned and before it wrote
// the include, it left one that started on PostgreSQL's defaults (TCP, no socket of ours).
TEST_F(PostgresServerTest, AClusterAnOlderAdaptdLeftWithoutItsIncludeIsMadeAgain) {
  {
    PostgresServer server(options_);
    ASSERT_TRUE(server.Start().ok());
    ASSERT_TRUE(server.Stop().ok());
  }
  const std::string conf_path = options_.root + "/data/postgresql.conf";
  std::string conf = *os::ReadFile(conf_path);
  conf.erase(conf.find("include 'adapt.conf'"));
  ASSERT_TRUE(os::WriteFileAtomic(conf_path, conf).ok());
  ASSERT_TRUE(os::RemoveTree(options_.root + "/data/adapt-cluster-complete").ok());
  PostgresServer server(options_);
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  EXPECT_TRUE(PgSession::Open(server.AdminConnectionString()).ok());
  EXPECT_NE(os::ReadFile(conf_path)->find("include 'adapt.conf'"), std::string::npos);
  ASSERT_TRUE(server.Stop().ok());
}

// The include is checked at every start: a complete cluster that lost it keeps its data.
TEST_F(PostgresServerTest, AMadeClusterThatLostItsIncludeGetsItBackAndKeepsItsData) {
  {
    PostgresServer server(options_);
    ASSERT_TRUE(server.Start().ok());
    auto session = PgSession::Open(server.AdminConnectionString());
    ASSERT_TRUE(session.ok()) << session.status().message();
    ASSERT_TRUE((*session)->Execute("CREATE TABLE kept (v text)").ok());
    session->reset();
    ASSERT_TRUE(server.Stop().ok());
  }
  const std::string conf_path = options_.root + "/data/postgresql.conf";
  std::string conf = *os::ReadFile(conf_path);
  conf.erase(conf.find("include 'adapt.conf'"));
  ASSERT_TRUE(os::WriteFileAtomic(conf_path, conf).ok());
  PostgresServer server(options_);
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  auto session = PgSession::Open(server.AdminConnectionString());
  ASSERT_TRUE(session.ok()) << session.status().message();
  EXPECT_TRUE((*session)->QueryValue("SELECT count(*) FROM kept").ok());
  session->reset();
  ASSERT_TRUE(server.Stop().ok());
}

// The initdb a killed adaptd started outlives it (it ignores SIGPIPE) and would finish a
// cluster without our configuration: the next start kills it, and only it.
TEST_F(PostgresServerTest, TheInitdbOfAKilledAdaptdIsStoppedAndNoOtherProcess) {
  options_.view_dir = "/run/adapt-postgres/test-" + dir_.substr(dir_.rfind('/') + 1);
  auto loop = [&](const std::string& view) {
    // Its command line reads as that initdb's; a loop, so that sh does not exec away.
    return os::Spawn({"/bin/sh", "-c", "while :; do sleep 1; done", options_.bin_dir + "/initdb",
                      "--pgdata", view + "/data.partial"},
                     {});
  };
  auto ours = loop(options_.view_dir);
  auto other = loop("/run/adapt-postgres/someone-else");
  ASSERT_TRUE(ours.ok() && other.ok());
  ASSERT_TRUE(os::MakeDirs(options_.root + "/data.partial", 0700).ok());
  PostgresServer server(options_);
  Status started = server.Start();
  ASSERT_TRUE(started.ok()) << started.message();
  // Killed, it is a zombie until we reap it: no command line.
  EXPECT_FALSE(os::ProcessMatches(*ours, options_.view_dir)) << "the leftover initdb still runs";
  EXPECT_TRUE(os::ProcessMatches(*other, "someone-else")) << "another data directory's was killed";
  for (pid_t pid : {*ours, *other}) {
    (void)os::Signal(pid, SIGKILL);
    (void)os::Wait(pid);
  }
  EXPECT_TRUE(PgSession::Open(server.AdminConnectionString()).ok());
  ASSERT_TRUE(server.Stop().ok());
}

TEST(PgSessionTest, AnUnreachableServerIsUnavailable) {
  auto session = PgSession::Open("host=/nonexistent-adapt port=5432 user=x connect_timeout=2");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace adapt::database

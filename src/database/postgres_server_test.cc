// PostgresServer against Debian's real postgresql-15, in a 0700 scratch directory that the
// server's OS user cannot search (as adaptd's state directory): initdb, peer access for root,
// restart after the postmaster is killed, reuse by a second PostgresServer (adaptd restarted
// after a kill -9) with the data intact.
#include "database/postgres_server.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <thread>

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

TEST(PgSessionTest, AnUnreachableServerIsUnavailable) {
  auto session = PgSession::Open("host=/nonexistent-adapt port=5432 user=x connect_timeout=2");
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace adapt::database

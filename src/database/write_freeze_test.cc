// FreezeWrites / ThawWrites against Debian's real postgresql-15: a tenant role that owns its
// database, a table and a SECURITY DEFINER function is read-only once frozen, whatever it
// SETs, and writes again once thawed.
#include "database/write_freeze.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "database/postgres_server.h"
#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::database {
namespace {

class WriteFreezeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.root = dir_ + "/postgres";
    server_ = std::make_unique<PostgresServer>(options_);
    Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started.message();
    auto admin = PgSession::Open(server_->AdminConnectionString());
    ASSERT_TRUE(admin.ok()) << admin.status().message();
    ASSERT_TRUE((*admin)->Execute("CREATE ROLE tenant LOGIN PASSWORD 'pw-tenant'").ok());
    ASSERT_TRUE((*admin)->Execute("CREATE DATABASE tenant OWNER tenant").ok());
    ASSERT_TRUE((*admin)->Execute("REVOKE ALL ON DATABASE tenant FROM PUBLIC").ok());
  }
  void TearDown() override {
    if (server_) (void)server_->Stop();
  }
  std::unique_ptr<PgSession> Tenant() {
    auto s = PgSession::Open("host=" + server_->SocketDir() +
                             " port=" + std::to_string(server_->port()) +
                             " user=tenant dbname=tenant password=pw-tenant");
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::unique_ptr<PgSession> Admin() {
    auto s = PgSession::Open(server_->AdminConnectionString("tenant"));
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.ok() ? std::move(*s) : nullptr;
  }
  os::TempDir tmp_{"pg-freeze"};
  const std::string dir_ = tmp_.path();
  PostgresOptions options_;
  std::unique_ptr<PostgresServer> server_;
};

TEST_F(WriteFreezeTest, AFrozenRoleOnlyReadsWhateverItSetsAndWritesAgainWhenThawed) {
  {
    auto t = Tenant();
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->Execute("CREATE TABLE notes (v text)").ok());
    ASSERT_TRUE(t->Execute("INSERT INTO notes VALUES ('before')").ok());
    ASSERT_TRUE(t->Execute("CREATE FUNCTION sneak() RETURNS void LANGUAGE sql SECURITY DEFINER "
                           "AS $$INSERT INTO notes VALUES ('sneaked')$$")
                    .ok());
    ASSERT_TRUE(t->Execute("GRANT ALL ON notes TO PUBLIC").ok());
  }
  auto admin = Admin();
  ASSERT_TRUE(admin);
  Status frozen = FreezeWrites(*admin, "tenant");
  ASSERT_TRUE(frozen.ok()) << frozen.message();
  ASSERT_TRUE(FreezeWrites(*admin, "tenant").ok()) << "not idempotent";

  auto t = Tenant();
  ASSERT_TRUE(t);
  EXPECT_EQ(t->QueryValue("SELECT v FROM notes")->value_or(""), "before");
  for (const char* write :
       {"INSERT INTO notes VALUES ('x')", "UPDATE notes SET v = 'y'", "DELETE FROM notes",
        "TRUNCATE notes", "CREATE TABLE more (v text)", "CREATE TEMP TABLE more (v text)",
        "CREATE SCHEMA more", "SELECT sneak()", "SELECT lo_create(0)",
        "ALTER TABLE notes OWNER TO tenant", "SET ROLE tenant_frozen", "DROP TABLE notes"}) {
    EXPECT_FALSE(t->Execute(write).ok()) << write;
  }
  ASSERT_TRUE(t->Execute("SET default_transaction_read_only = off").ok());
  EXPECT_FALSE(t->Execute("INSERT INTO notes VALUES ('x')").ok());
  (void)t->Execute("GRANT INSERT ON notes TO tenant");  // a warning, nothing granted
  EXPECT_FALSE(t->Execute("INSERT INTO notes VALUES ('x')").ok());
  t.reset();

  Status thawed = ThawWrites(*admin, "tenant");
  ASSERT_TRUE(thawed.ok()) << thawed.message();
  t = Tenant();
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->Execute("INSERT INTO notes VALUES ('after')").ok());
  EXPECT_TRUE(t->Execute("SELECT sneak()").ok());
  EXPECT_TRUE(t->Execute("CREATE TABLE more (v text)").ok());
  EXPECT_EQ(t->QueryValue("SELECT count(*) FROM notes")->value_or(""), "3");
  EXPECT_TRUE(t->Execute("DROP TABLE notes").ok());
}

}  // namespace
}  // namespace adapt::database

// --database-admin-url: what it accepts, what it refuses, and that its password shows nowhere
// but in the libpq connection string.
#include "database/admin_url.h"

#include <gtest/gtest.h>

namespace adapt::database {
namespace {

TEST(AdminUrlTest, AFullUrlGivesEveryPartDecoded) {
  auto u =
      ParseAdminUrl("postgres://ad%40min:p%40ss%3Aw%2Fd@db.example.com:6432/main?sslmode=require");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->user, "ad@min");
  EXPECT_EQ(u->password, "p@ss:w/d");
  EXPECT_EQ(u->host, "db.example.com");
  EXPECT_EQ(u->port, 6432);
  EXPECT_EQ(u->database, "main");
  EXPECT_EQ(u->sslmode, "require");
}

TEST(AdminUrlTest, PortDatabaseAndSslModeHaveDefaultsAndBothSchemesWork) {
  auto u = ParseAdminUrl("postgresql://admin:pw@10.0.0.5");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->host, "10.0.0.5");
  EXPECT_EQ(u->port, 5432);
  EXPECT_EQ(u->database, "postgres");
  EXPECT_EQ(u->sslmode, "");
  auto v6 = ParseAdminUrl("postgres://admin:pw@[fd00::5]:5433/db");
  ASSERT_TRUE(v6.ok()) << v6.status().message();
  EXPECT_EQ(v6->host, "fd00::5");
  EXPECT_EQ(v6->port, 5433);
  EXPECT_EQ(v6->Redacted(), "postgres://admin:***@[fd00::5]:5433/db");
}

TEST(AdminUrlTest, AnUnescapedAtSignInThePasswordStillParses) {
  auto u = ParseAdminUrl("postgres://admin:a@b@127.0.0.1:5999/postgres");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->password, "a@b");
  EXPECT_EQ(u->host, "127.0.0.1");
}

TEST(AdminUrlTest, MalformedUrlsAreRefusedWithoutQuotingThem) {
  const std::string secret = "Sup3rS3cret";
  for (const std::string& bad : {
           "mysql://admin:" + secret + "@h:5432/db",           // scheme
           "postgres://h:5432/db" + secret,                    // no user
           "postgres://:" + secret + "@h:5432/db",             // empty user
           "postgres://admin:" + secret + "@:5432/db",         // no host
           "postgres://admin:" + secret + "@h:0/db",           // port 0
           "postgres://admin:" + secret + "@h:65536/db",       // port too big
           "postgres://admin:" + secret + "@h:54x/db",         // port not a number
           "postgres://admin:" + secret + "@h:/db",            // empty port
           "postgres://admin:" + secret + "@h,h2:5432/db",     // two hosts
           "postgres://admin:" + secret + "@h:5432/a/b",       // two path segments
           "postgres://admin:" + secret + "@h:5432/db?x=1",    // unknown parameter
           "postgres://admin:" + secret + "@h/db?sslmode=no",  // unknown sslmode
           "postgres://admin:" + secret + "%zz@h/db",          // broken escape
           "postgres://admin:" + secret + "@[fd00::1/db",      // unclosed IPv6
           "postgres://admin:" + secret + "@h h/db",           // a space in the host
       }) {
    auto u = ParseAdminUrl(bad);
    ASSERT_FALSE(u.ok()) << bad;
    EXPECT_EQ(u.status().code(), Code::kInvalidArgument) << bad;
    EXPECT_EQ(u.status().field(), "databaseAdminUrl") << bad;
    EXPECT_EQ(u.status().message().find(secret), std::string::npos) << u.status().message();
    // It says what the URL should look like instead.
    EXPECT_NE(u.status().message().find("postgres://USER:PASSWORD@HOST:PORT/DATABASE"),
              std::string::npos)
        << u.status().message();
  }
}

TEST(AdminUrlTest, TheRedactedFormHidesThePasswordAndOnlyTheConnectionStringHasIt) {
  auto u = ParseAdminUrl("postgres://admin:s%27cr%5Cet@127.0.0.1:5999/postgres");
  ASSERT_TRUE(u.ok()) << u.status().message();
  EXPECT_EQ(u->password, "s'cr\\et");
  EXPECT_EQ(u->Redacted(), "postgres://admin:***@127.0.0.1:5999/postgres");
  std::string without = u->ConnectionString("adapt_org_a", false);
  EXPECT_EQ(without.find("password"), std::string::npos) << without;
  EXPECT_NE(without.find("dbname='adapt_org_a'"), std::string::npos) << without;
  // Quoted the way libpq reads it: \ and ' escaped.
  std::string with = u->ConnectionString("adapt_org_a", true);
  EXPECT_NE(with.find("password='s\\'cr\\\\et'"), std::string::npos) << with;
  auto plain = ParseAdminUrl("postgres://admin@127.0.0.1/postgres");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->Redacted(), "postgres://admin@127.0.0.1:5432/postgres");
  EXPECT_EQ(plain->ConnectionString("x", true).find("password"), std::string::npos);
}

TEST(AdminUrlTest, ScrubHidesThePasswordAsGivenAndPercentEncoded) {
  auto u = ParseAdminUrl("postgres://admin:p%40ss@h/db");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->Scrub("failed for p@ss and p%40ss, not pass"),
            "failed for [REDACTED] and [REDACTED], not pass");
  auto none = ParseAdminUrl("postgres://admin@h/db");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->Scrub("text"), "text");
}

}  // namespace
}  // namespace adapt::database

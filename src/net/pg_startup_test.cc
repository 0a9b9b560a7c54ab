#include "net/pg_startup.h"

#include <gtest/gtest.h>

namespace adapt::net {
namespace {

std::string U32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string Startup(const std::string& pairs) {
  std::string body = U32(196608) + pairs + std::string(1, '\0');
  return U32(static_cast<uint32_t>(body.size() + 4)) + body;
}

std::string Pair(const std::string& k, const std::string& v) {
  return k + std::string(1, '\0') + v + std::string(1, '\0');
}

TEST(PgStartupTest, ReadsUserAndDatabaseAndDefaultsTheDatabaseToTheUser) {
  auto m = ParseStartup(Startup(Pair("user", "adapt_org_a") + Pair("database", "other")));
  ASSERT_EQ(m.kind, StartupKind::kStartup) << m.error;
  EXPECT_EQ(m.user, "adapt_org_a");
  EXPECT_EQ(m.database, "other");
  auto d = ParseStartup(Startup(Pair("user", "adapt_org_a") + Pair("application_name", "psql")));
  ASSERT_EQ(d.kind, StartupKind::kStartup);
  EXPECT_EQ(d.database, "adapt_org_a");
}

TEST(PgStartupTest, WaitsForTheWholeMessageAndKnowsEncryptionAndCancelRequests) {
  std::string full = Startup(Pair("user", "u"));
  EXPECT_EQ(ParseStartup(full.substr(0, 5)).kind, StartupKind::kNeedMore);
  EXPECT_EQ(ParseStartup(full.substr(0, full.size() - 1)).kind, StartupKind::kNeedMore);
  EXPECT_EQ(ParseStartup(U32(8) + U32(80877103)).kind, StartupKind::kSslRequest);
  EXPECT_EQ(ParseStartup(U32(8) + U32(80877104)).kind, StartupKind::kGssEncRequest);
  auto cancel = ParseStartup(U32(16) + U32(80877102) + U32(4242) + U32(0xdeadbeef));
  EXPECT_EQ(cancel.kind, StartupKind::kCancel);
  EXPECT_EQ(cancel.cancel, (BackendKey{4242, 0xdeadbeef}));
}

TEST(PgStartupTest, ACancelRequestIsExactlySixteenBytes) {
  EXPECT_EQ(ParseStartup(U32(12) + U32(80877102) + U32(1)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(20) + U32(80877102) + U32(1) + U32(2) + U32(3)).kind,
            StartupKind::kInvalid);
}

// Only the first 8 bytes have come: a length that the code's kind cannot have is refused
// now, where it used to wait for the rest until the proxy's 10 s deadline.
TEST(PgStartupTest, ALengthItsKindCannotHaveIsRefusedBeforeTheRestArrives) {
  EXPECT_EQ(ParseStartup(U32(100) + U32(80877103)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(100) + U32(80877104)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(100) + U32(80877102)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(100) + U32(12345)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(9) + U32(196608)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(100) + U32(196608)).kind, StartupKind::kNeedMore);
  EXPECT_EQ(ParseStartup(U32(16) + U32(80877102)).kind, StartupKind::kNeedMore);
}

TEST(PgStartupTest, RefusesMalformedOversizedReplicationAndUserlessMessages) {
  EXPECT_EQ(ParseStartup(U32(4) + U32(196608)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(1 << 20) + U32(196608)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(U32(8) + U32(12345)).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(Startup(Pair("database", "d"))).kind, StartupKind::kInvalid);
  EXPECT_EQ(ParseStartup(Startup(Pair("user", "u") + Pair("replication", "database"))).kind,
            StartupKind::kInvalid);
  std::string unterminated = U32(196608) + "user";
  EXPECT_EQ(ParseStartup(U32(static_cast<uint32_t>(unterminated.size() + 4)) + unterminated).kind,
            StartupKind::kInvalid);
}

TEST(PgStartupTest, AnErrorResponseIsFramedWithItsLength) {
  std::string e = PgErrorResponse("28000", "no");
  ASSERT_GE(e.size(), 5u);
  EXPECT_EQ(e[0], 'E');
  EXPECT_EQ(static_cast<size_t>(static_cast<uint8_t>(e[4])) + 1, e.size());
  EXPECT_NE(e.find("28000"), std::string::npos);
}

}  // namespace
}  // namespace adapt::net

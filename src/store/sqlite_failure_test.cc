#include "store/sqlite_failure.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace adapt::store {
namespace {

TEST(SqliteFailureTest, AFullDatabaseIsUnavailableSayingTheDiskIsFull) {
  // SQLite's own SQLITE_FULL, from a database that may not grow past two pages.
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec("CREATE TABLE t(v BLOB)");
  db.exec("PRAGMA max_page_count = 2");
  try {
    db.exec("INSERT INTO t VALUES (zeroblob(100000))");
    FAIL() << "the insert fitted";
  } catch (const std::exception& e) {
    Status st = SqliteFailure("creating sandbox", e);
    EXPECT_EQ(st.code(), Code::kUnavailable);
    EXPECT_NE(st.message().find("creating sandbox: the server's disk is full"), std::string::npos)
        << st.message();
  }
}

TEST(SqliteFailureTest, AnythingElseIsAnInternalFailureWithItsWords) {
  Status st = SqliteFailure("reading sandbox", std::runtime_error("no such column: x"));
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_EQ(st.message(), "reading sandbox: no such column: x");
}

}  // namespace
}  // namespace adapt::store

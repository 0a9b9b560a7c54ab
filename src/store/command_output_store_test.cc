// A command's kept output in the store: it reads back byte for byte through every read on both
// backends, and in SQLite it lives in columns of its own (migration 38) while rows written
// before keep theirs in the record's JSON and read back the same; a sandbox keeps its newest
// ended commands only.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/ids.h"
#include "store/migrations.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using testing_support::MigrateUpTo;
using testing_support::SqliteStoreTest;
using testing_support::StoreTest;

// Text that JSON would escape (quotes, backslashes, control characters), characters beyond
// ASCII, and U+FFFD as the runner writes it for a NUL, at the size the runner keeps.
std::string MebibyteOfAwkwardText() {
  const std::string piece = "\"}\\ \x01\t\n h\xC3\xA9 \xEF\xBF\xBD \xF0\x9F\x98\x80 ";
  std::string out;
  while (out.size() < 1024 * 1024) out += piece;
  return out;
}

CommandRecord RunningDd(const std::string& org_id, const std::string& sandbox_id) {
  CommandRecord c;
  c.id = NewId("cmd");
  c.org_id = org_id;
  c.sandbox_id = sandbox_id;
  c.status = "running";
  c.argv = {"dd", "if=/dev/zero"};
  c.created_at = 1000;
  return c;
}

// Each ended command keeps up to 2 MiB of output: a sandbox keeps its newest
// kKeptEndedCommandsPerSandbox ended ones, never a running one, and another sandbox's are its own.
TEST_P(StoreTest, ASandboxKeepsItsNewestEndedCommandsOnly) {
  SandboxRecord sbx = MustCreate(Sandbox(org_.id, "busy"));
  SandboxRecord other = MustCreate(Sandbox(org_.id, "other"));
  CommandRecord still = RunningDd(org_.id, sbx.id);
  ASSERT_TRUE(store_->PutCommand(still).ok());
  CommandRecord theirs = RunningDd(org_.id, other.id);
  theirs.status = "exited";
  ASSERT_TRUE(store_->PutCommand(theirs).ok());
  std::vector<std::string> ended;
  for (int64_t i = 0; i < kKeptEndedCommandsPerSandbox + 5; ++i) {
    CommandRecord c = RunningDd(org_.id, sbx.id);
    ASSERT_TRUE(store_->PutCommand(c).ok());
    c.status = "exited";
    ASSERT_TRUE(store_->PutCommand(c).ok());
    ended.push_back(c.id);
  }
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(store_->GetCommand(org_.id, sbx.id, ended[i]).status().code(), Code::kNotFound) << i;
  EXPECT_TRUE(store_->GetCommand(org_.id, sbx.id, ended[5]).ok());
  EXPECT_TRUE(store_->GetCommand(org_.id, sbx.id, ended.back()).ok());
  EXPECT_TRUE(store_->GetCommand(org_.id, sbx.id, still.id).ok());
  EXPECT_TRUE(store_->GetCommand(org_.id, other.id, theirs.id).ok());
}

TEST_P(StoreTest, ACommandsOutputReadsBackByteForByteThroughEveryRead) {
  SandboxRecord sbx = MustCreate(Sandbox(org_.id, "out"));
  CommandRecord c = RunningDd(org_.id, sbx.id);
  ASSERT_TRUE(store_->PutCommand(c).ok());
  c.status = "exited";
  c.exit_code = 0;
  c.stdout_text = MebibyteOfAwkwardText();
  c.stderr_text = "warning: \"x\"\n";
  c.truncated = true;
  ASSERT_TRUE(store_->PutCommand(c).ok());
  Reopen();

  auto got = store_->GetCommand(org_.id, sbx.id, c.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(got->stdout_text == c.stdout_text);  // not EXPECT_EQ: a MiB printed on failure
  EXPECT_EQ(got->stderr_text, c.stderr_text);
  EXPECT_TRUE(got->truncated);
  EXPECT_EQ(got->exit_code, 0);
  auto page = store_->ListCommands(org_.id, sbx.id, 10, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_TRUE(page->items[0].stdout_text == c.stdout_text);
  EXPECT_EQ(page->items[0].stderr_text, c.stderr_text);
  auto exited = store_->ListCommandsWithStatus("exited");
  ASSERT_TRUE(exited.ok());
  ASSERT_EQ(exited->size(), 1u);
  EXPECT_TRUE((*exited)[0].stdout_text == c.stdout_text);

  // A later write replaces the output with its own, also with none.
  got->error = "rewritten";
  ASSERT_TRUE(store_->PutCommand(*got).ok());
  EXPECT_TRUE(store_->GetCommand(org_.id, sbx.id, c.id)->stdout_text == c.stdout_text);
  got->stdout_text.clear();
  got->stderr_text.clear();
  ASSERT_TRUE(store_->PutCommand(*got).ok());
  Reopen();
  auto cleared = store_->GetCommand(org_.id, sbx.id, c.id);
  ASSERT_TRUE(cleared.ok());
  EXPECT_EQ(cleared->stdout_text, "");
  EXPECT_EQ(cleared->stderr_text, "");
  EXPECT_EQ(cleared->error, "rewritten");
}

TEST_F(SqliteStoreTest, ACommandsOutputIsWrittenBesideItsJsonNotInIt) {
  SandboxRecord sbx = MustCreate(Sandbox(org_.id, "out"));
  CommandRecord c = RunningDd(org_.id, sbx.id);
  c.stdout_text = "out \"quoted\"\n";
  c.stderr_text = "err\n";
  ASSERT_TRUE(store_->PutCommand(c).ok());
  store_.reset();

  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT data, stdout, stderr FROM commands WHERE id = ?");
  q.bind(1, c.id);
  ASSERT_TRUE(q.executeStep());
  auto data = nlohmann::json::parse(q.getColumn(0).getString());
  EXPECT_FALSE(data.contains("stdout"));
  EXPECT_FALSE(data.contains("stderr"));
  EXPECT_EQ(data.value("argv", nlohmann::json()), nlohmann::json(c.argv));
  EXPECT_EQ(q.getColumn(1).getString(), c.stdout_text);
  EXPECT_EQ(q.getColumn(2).getString(), c.stderr_text);
}

// A database at migration 37 holding a finished command and a running one, their output in
// their JSON as adaptd wrote it then.
void WriteVersion37Database(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  MigrateUpTo(db, 38);
  db.exec(R"(INSERT INTO commands(id, org_id, sandbox_id, status, data, created_at) VALUES
    ('cmd_done', 'org_old', 'sbx_old', 'exited', '{"argv":["echo","hi"],"cwd":null,
     "error":null,"exitCode":0,"finishedAt":"2026-11-29T19:30:05.250Z","id":"cmd_done",
     "sandboxId":"sbx_old","servedBy":"agent","signal":null,
     "startedAt":"2026-11-29T19:30:00.123Z","status":"exited","stderr":"w\u00e9\n",
     "stdout":"hi \"there\"\n\ufffd","terminationReason":"exited","timeoutSeconds":600,
     "truncated":true,"user":null}', 1795980600123),
    ('cmd_live', 'org_old', 'sbx_old', 'running', '{"argv":["sleep","60"],"cwd":null,
     "error":null,"exitCode":null,"finishedAt":null,"id":"cmd_live","sandboxId":"sbx_old",
     "servedBy":"agent","signal":null,"startedAt":"2026-11-29T19:30:00.123Z",
     "status":"running","stderr":"","stdout":"so far\n","terminationReason":null,
     "timeoutSeconds":600,"truncated":false,"user":null}', 1795980600123))");
}

TEST_F(SqliteStoreTest, MigrationThirtyEightKeepsTheOutputOfRowsWrittenBefore) {
  const std::string old_path = dir_ + "/v37.db";
  WriteVersion37Database(old_path);
  auto opened = OpenSqliteStore(old_path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  Store& migrated = **opened;

  auto done = migrated.GetCommand("org_old", "sbx_old", "cmd_done");
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->stdout_text, "hi \"there\"\n\xEF\xBF\xBD");
  EXPECT_EQ(done->stderr_text, "w\xC3\xA9\n");
  EXPECT_TRUE(done->truncated);
  EXPECT_EQ(done->exit_code, 0);
  auto page = migrated.ListCommands("org_old", "sbx_old", 10, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[1].stdout_text, "hi \"there\"\n\xEF\xBF\xBD");
  // The running one, as the reconciliation reads it after the upgrade, then ends it.
  auto running = migrated.ListCommandsWithStatus("running");
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  CommandRecord live = (*running)[0];
  EXPECT_EQ(live.stdout_text, "so far\n");
  live.status = "lost";
  ASSERT_TRUE(migrated.PutCommand(live).ok());
  auto lost = migrated.GetCommand("org_old", "sbx_old", "cmd_live");
  ASSERT_TRUE(lost.ok());
  EXPECT_EQ(lost->status, "lost");
  EXPECT_EQ(lost->stdout_text, "so far\n");
  EXPECT_EQ(lost->stderr_text, "");
}

}  // namespace
}  // namespace adapt::store

// SqliteStore: the embedded Store. One connection behind a mutex: SQLite serializes
// writers anyway, and every call here is short.
#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "base/case_fold.h"
#include "base/time.h"
#include "store/migrations.h"
#include "store/sandbox_config_codec.h"
#include "store/sandbox_env_column.h"
#include "store/sandbox_limit_check.h"
#include "store/sqlite_store_impl.h"
#include "store/store_transaction.h"

namespace adapt::store {
namespace {

using nlohmann::json;

constexpr const char* kSandboxColumns =
    "seq, id, org_id, status, config, env, created_at, updated_at, expires_at, deleted_at, "
    "termination_reason, error, result";
// The same, with the environment's names in place of the environment (the list's read).
constexpr const char* kSandboxListColumns =
    "seq, id, org_id, status, config, COALESCE(env_names, env), created_at, updated_at, "
    "expires_at, deleted_at, termination_reason, error, result";

std::optional<int64_t> OptionalInt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

void BindOptional(SQLite::Statement& q, int index, const std::optional<int64_t>& v) {
  if (v) {
    q.bind(index, *v);
  } else {
    q.bind(index);
  }
}

}  // namespace

// Throws (turned into a Status by Guard) when the environment does not open.
SandboxRecord SqliteStore::ReadSandbox(SQLite::Statement& q, bool names_only) {
  SandboxRecord r;
  r.seq = q.getColumn(0).getInt64();
  r.id = q.getColumn(1).getString();
  r.org_id = q.getColumn(2).getString();
  r.status = q.getColumn(3).getString();
  SQLite::Column config = q.getColumn(4);
  const char* config_chars = config.getText();  // before getBytes, as SQLite asks
  std::string_view config_text(config_chars, config.getBytes());
  r.config =
      configs_.Get(config_text, [&] { return DecodeSandboxConfig(std::string(config_text)); });
  if (names_only) {
    // Names JSON as a rule (kSandboxListColumns); the whole column of an older row, opened
    // and kept as names.
    SQLite::Column names = q.getColumn(5);
    const char* names_chars = names.getText();  // before getBytes, as SQLite asks
    std::string_view names_text(names_chars, names.getBytes());
    r.env = env_names_.Get(names_text, [&] {
      auto env = DecodeEnvColumn(sealer_, r.org_id, r.id, std::string(names_text));
      if (!env.ok()) throw std::runtime_error(env.status().message());
      for (auto& [_, value] : *env) value.clear();
      return std::move(*env);
    });
  } else {
    auto env = DecodeEnvColumn(sealer_, r.org_id, r.id, q.getColumn(5).getString());
    if (!env.ok()) throw std::runtime_error(env.status().message());
    r.env = std::move(*env);
  }
  r.created_at = q.getColumn(6).getInt64();
  r.updated_at = q.getColumn(7).getInt64();
  r.expires_at = OptionalInt(q.getColumn(8));
  r.deleted_at = OptionalInt(q.getColumn(9));
  r.termination_reason = q.getColumn(10).getString();
  r.error = q.getColumn(11).getString();
  SQLite::Column result = q.getColumn(12);
  const char* result_chars = result.getText();  // before getBytes, as SQLite asks
  std::string_view result_text(result_chars, result.getBytes());
  r.result =
      results_.Get(result_text, [&] { return DecodeSandboxResult(std::string(result_text)); });
  return r;
}

namespace {

std::string LabelName(const SandboxRecord& r) {
  auto name = r.config.labels.find("name");
  return name == r.config.labels.end() ? "" : name->second;
}

void FoldSql(sqlite3_context* context, int, sqlite3_value** argv) {
  const auto* text = sqlite3_value_text(argv[0]);
  if (!text) return sqlite3_result_null(context);
  std::string folded = FoldCase(std::string_view(
      reinterpret_cast<const char*>(text), static_cast<size_t>(sqlite3_value_bytes(argv[0]))));
  sqlite3_result_text(context, folded.data(), static_cast<int>(folded.size()), SQLITE_TRANSIENT);
}

// LIKE patterns treat % and _ specially: escape them so a query matches literally.
std::string EscapeLike(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The organization's live sandboxes, but `except_id`; call inside the transaction that writes.
LiveTotals CountLive(SQLite::Database& db, const std::string& org_id,
                     const std::string& except_id) {
  SQLite::Statement q(db,
                      "SELECT status, config FROM sandboxes WHERE org_id = ? AND id != ? AND "
                      "status NOT IN ('deleting', 'deleted', 'failed')");
  q.bind(1, org_id);
  q.bind(2, except_id);
  LiveTotals t;
  while (q.executeStep()) {
    ++t.sandboxes;
    if (!UsesCompute(q.getColumn(0).getString())) continue;
    SandboxConfig c = DecodeSandboxConfig(q.getColumn(1).getString());
    t.cpu += c.cpu;
    t.memory_mib += c.memory_mib;
  }
  return t;
}

}  // namespace

Status SqliteStore::Init() {
  return Guard("migrating the database", [&]() -> Status {
    db_.exec("PRAGMA journal_mode=WAL");
    db_.exec("PRAGMA synchronous=FULL");
    db_.exec("PRAGMA foreign_keys=ON");
    db_.exec("PRAGMA busy_timeout=5000");
    db_.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)");
    for (const auto& m : SqliteMigrations()) {
      SQLite::Statement q(db_, "SELECT 1 FROM schema_migrations WHERE version = ?");
      q.bind(1, m.version);
      if (q.executeStep()) continue;
      StoreTransaction tx(db_);
      db_.exec(m.sql);
      SQLite::Statement ins(db_, "INSERT INTO schema_migrations(version) VALUES (?)");
      ins.bind(1, m.version);
      ins.exec();
      tx.commit();
    }
    sqlite3_update_hook(db_.getHandle(), &SqliteStore::OnRowChange, this);
    // The list query's match ignoring case beyond ASCII (SQLite's lower() and LIKE fold ASCII
    // only): adapt_fold(name) is base/case_fold's FoldCase.
    if (sqlite3_create_function_v2(db_.getHandle(), "adapt_fold", 1,
                                   SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr, &FoldSql, nullptr,
                                   nullptr, nullptr) != SQLITE_OK)
      return Status(Code::kInternal,
                    std::string("registering adapt_fold: ") + sqlite3_errmsg(db_.getHandle()));
    return Status::Ok();
  });
}

Result<CreateOutcome> SqliteStore::CreateSandbox(const SandboxRecord& s,
                                                 const std::optional<IdempotencyKey>& idem,
                                                 const SandboxLimits& limits) {
  return Guard<Result<CreateOutcome>>("creating sandbox", [&]() -> Result<CreateOutcome> {
    StoreTransaction tx(db_);
    std::optional<IdempotencyClaim> claim;
    if (idem) claim = IdempotencyClaim{s.org_id, "sandbox", *idem, s.created_at};
    if (claim) {
      ASSIGN_OR_RETURN(std::optional<std::string> earlier_id, FindClaimLocked(*claim));
      if (earlier_id) {
        auto earlier = GetLocked(s.org_id, *earlier_id);
        if (!earlier.ok()) return earlier.status();
        return CreateOutcome{*earlier, true};
      }
    }
    RETURN_IF_ERROR(RefuseIfOrgDeleting(db_, s.org_id));
    if (s.config.image_id) {
      SQLite::Statement image(
          db_, "SELECT 1 FROM images WHERE org_id = ? AND id = ? AND status = 'ready'");
      image.bind(1, s.org_id);
      image.bind(2, *s.config.image_id);
      if (!image.executeStep()) return ImageGoneBeforeCreate(*s.config.image_id);
    }
    if (HasAny(limits)) {
      // In the transaction that inserts: concurrent creates cannot both see room for one.
      RETURN_IF_ERROR(CheckSandboxLimits(limits, CountLive(db_, s.org_id, ""), s.config, true));
    }
    SQLite::Statement ins(
        db_,
        "INSERT INTO sandboxes(id, org_id, status, name, config, env, created_at, updated_at, "
        "expires_at, deleted_at, termination_reason, error, result, env_names) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    ins.bind(1, s.id);
    ins.bind(2, s.org_id);
    ins.bind(3, s.status);
    ins.bind(4, LabelName(s));
    ins.bind(5, EncodeSandboxConfig(s.config));
    auto env = EncodeEnvColumn(sealer_, s.org_id, s.id, s.env);
    if (!env.ok()) return env.status();
    ins.bind(6, *env);
    ins.bind(7, s.created_at);
    ins.bind(8, s.updated_at);
    BindOptional(ins, 9, s.expires_at);
    BindOptional(ins, 10, s.deleted_at);
    ins.bind(11, s.termination_reason);
    ins.bind(12, s.error);
    ins.bind(13, EncodeSandboxResult(s.result));
    ins.bind(14, EnvNamesColumn(s.env));
    ins.exec();
    if (claim) InsertClaimLocked(*claim, s.id);
    InsertEvent(s.org_id, s.id, s.status, s.created_at);
    auto created = GetLocked(s.org_id, s.id);
    if (!created.ok()) return created.status();
    tx.commit();
    return CreateOutcome{*created, false};
  });
}

Result<SandboxRecord> SqliteStore::GetSandbox(const std::string& org_id, const std::string& id) {
  return Guard<Result<SandboxRecord>>("reading sandbox", [&] { return GetLocked(org_id, id); });
}

Result<SandboxPage> SqliteStore::ListSandboxes(const std::string& org_id, const std::string& query,
                                               int limit, std::optional<int64_t> before_seq) {
  return Guard<Result<SandboxPage>>("listing sandboxes", [&]() -> Result<SandboxPage> {
    std::string sql = std::string("SELECT ") + kSandboxListColumns +
                      " FROM sandboxes WHERE org_id = ? AND status != 'deleted' AND seq < ?";
    if (!query.empty())
      sql += " AND (adapt_fold(name) LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')";
    sql += " ORDER BY seq DESC LIMIT ?";
    auto lease = statements_.Get(sql);  // two texts: with and without a query
    SQLite::Statement& q = *lease;
    int i = 1;
    q.bind(i++, org_id);
    q.bind(i++, before_seq.value_or(INT64_MAX));
    if (!query.empty()) {
      std::string lowered = FoldCase(query);
      // Appended piece by piece: GCC 12 at -O3 reports a false -Werror=restrict inside
      // `"%" + std::string&&` (the libstdc++ insert path it inlines), which broke Release builds.
      std::string contains = "%";
      contains += EscapeLike(lowered);
      contains += '%';
      std::string prefix = EscapeLike(query);
      prefix += '%';
      q.bind(i++, contains);
      q.bind(i++, prefix);
    }
    q.bind(i++, limit + 1);
    SandboxPage page;
    while (q.executeStep()) page.items.push_back(ReadSandbox(q, /*names_only=*/true));
    if (static_cast<int>(page.items.size()) > limit) {
      page.items.pop_back();
      page.next_seq = page.items.back().seq;
    }
    return page;
  });
}

Result<std::vector<SandboxRecord>> SqliteStore::ListSandboxesWithStatus(
    const std::vector<std::string>& statuses) {
  return Guard<Result<std::vector<SandboxRecord>>>(
      "listing sandboxes", [&]() -> Result<std::vector<SandboxRecord>> {
        std::vector<SandboxRecord> out;
        for (const auto& status : statuses) {
          SQLite::Statement q(db_, std::string("SELECT ") + kSandboxColumns +
                                       " FROM sandboxes WHERE status = ? ORDER BY seq");
          q.bind(1, status);
          while (q.executeStep()) out.push_back(ReadSandbox(q));
        }
        return out;
      });
}

Result<std::vector<SandboxRecord>> SqliteStore::ListExpired(int64_t now) {
  return Guard<Result<std::vector<SandboxRecord>>>(
      "listing expired sandboxes", [&]() -> Result<std::vector<SandboxRecord>> {
        SQLite::Statement q(db_,
                            std::string("SELECT ") + kSandboxColumns +
                                " FROM sandboxes WHERE expires_at IS NOT NULL AND expires_at <= ? "
                                "AND status NOT IN ('deleting', 'deleted') ORDER BY expires_at");
        q.bind(1, now);
        std::vector<SandboxRecord> out;
        while (q.executeStep()) out.push_back(ReadSandbox(q));
        return out;
      });
}

Status SqliteStore::UpdateSandbox(const SandboxRecord& s, const std::vector<std::string>& expected,
                                  const SandboxLimits& limits) {
  return Guard("updating sandbox", [&]() -> Status {
    StoreTransaction tx(db_);
    SQLite::Statement cur(db_, "SELECT status FROM sandboxes WHERE id = ?");
    cur.bind(1, s.id);
    if (!cur.executeStep()) return NotFound("sandbox " + s.id + " not found");
    std::string old_status = cur.getColumn(0).getString();
    if (std::find(expected.begin(), expected.end(), old_status) == expected.end())
      return Conflict("sandbox " + s.id + " is " + old_status);
    if (HasAny(limits) && UsesCompute(s.status) && !UsesCompute(old_status))
      RETURN_IF_ERROR(CheckSandboxLimits(limits, CountLive(db_, s.org_id, s.id), s.config, false));
    SQLite::Statement q(
        db_,
        "UPDATE sandboxes SET status = ?, updated_at = ?, expires_at = ?, "
        "deleted_at = ?, termination_reason = ?, error = ?, result = ? WHERE id = ?");
    q.bind(1, s.status);
    q.bind(2, s.updated_at);
    BindOptional(q, 3, s.expires_at);
    BindOptional(q, 4, s.deleted_at);
    q.bind(5, s.termination_reason);
    q.bind(6, s.error);
    q.bind(7, EncodeSandboxResult(s.result));
    q.bind(8, s.id);
    q.exec();
    if (old_status != s.status) InsertEvent(s.org_id, s.id, s.status, s.updated_at);
    if (s.status == "deleted") {
      // The values (captured secrets among them) go with the sandbox; the names stay.
      SQLite::Statement e(db_, "SELECT env FROM sandboxes WHERE id = ?");
      e.bind(1, s.id);
      if (e.executeStep()) {
        auto env = DecodeEnvColumn(sealer_, s.org_id, s.id, e.getColumn(0).getString());
        SQLite::Statement drop(db_, "UPDATE sandboxes SET env = ?1, env_names = ?1 WHERE id = ?2");
        drop.bind(1, EnvNamesColumn(env.ok() ? *env : EnvMap{}));
        drop.bind(2, s.id);
        drop.exec();
      }
    }
    tx.commit();
    return Status::Ok();
  });
}

Status SqliteStore::SetValueSealer(ValueSealer sealer) {
  return Guard("sealing sandbox environments", [&]() -> Status {
    sealer_ = std::move(sealer);
    // Rows an older adaptd wrote hold values in plaintext: sealed now (a deleted sandbox's
    // dropped), and SQLite overwrites the pages they leave. Rows without their names apart
    // (migration 32) get them.
    db_.exec("PRAGMA secure_delete=ON");
    StoreTransaction tx(db_);
    SQLite::Statement q(db_, "SELECT id, org_id, status, env, env_names IS NULL FROM sandboxes");
    std::vector<std::pair<std::string, std::string>> updates, names;
    while (q.executeStep()) {
      std::string id = q.getColumn(0).getString(), org = q.getColumn(1).getString();
      std::string column = q.getColumn(3).getString();
      const bool plain = EnvColumnIsPlain(column), unnamed = q.getColumn(4).getInt() != 0;
      if (!plain && !unnamed) continue;
      auto opened = DecodeEnvColumn(sealer_, org, id, column);
      // A sealed row that does not open stays as it is (its reads fail, as they did).
      if (!opened.ok() && !plain) continue;
      if (!opened.ok()) return opened.status();
      const EnvMap& env = *opened;
      if (unnamed) names.emplace_back(id, EnvNamesColumn(env));
      if (!plain) continue;
      bool deleted = q.getColumn(2).getString() == "deleted";
      if (deleted &&
          std::all_of(env.begin(), env.end(), [](const auto& kv) { return kv.second.empty(); }))
        continue;
      if (deleted) {
        updates.emplace_back(id, EnvNamesColumn(env));
      } else {
        ASSIGN_OR_RETURN(std::string sealed, EncodeEnvColumn(sealer_, org, id, env));
        updates.emplace_back(id, sealed);
      }
    }
    for (const auto& [id, column] : updates) {
      SQLite::Statement u(db_, "UPDATE sandboxes SET env = ? WHERE id = ?");
      u.bind(1, column);
      u.bind(2, id);
      u.exec();
    }
    for (const auto& [id, column] : names) {
      SQLite::Statement u(db_, "UPDATE sandboxes SET env_names = ? WHERE id = ?");
      u.bind(1, column);
      u.bind(2, id);
      u.exec();
    }
    tx.commit();
    return Status::Ok();
  });
}

Result<std::vector<EventRecord>> SqliteStore::ListEvents(const std::string& org_id,
                                                         const std::string& sandbox_id,
                                                         int64_t after_seq, int limit) {
  return Guard<Result<std::vector<EventRecord>>>(
      "listing events", [&]() -> Result<std::vector<EventRecord>> {
        std::string sql =
            "SELECT seq, org_id, sandbox_id, status, at, app_id, replica_id, message, alert, "
            "alert_limit, alert_value, alert_used, run_id, automation_id, job_id, attempt, "
            "exit_code, run_sandbox_id FROM events WHERE org_id = ? AND seq > ?";
        if (!sandbox_id.empty()) sql += " AND sandbox_id = ?";
        sql += " ORDER BY seq LIMIT ?";
        SQLite::Statement q(db_, sql);
        int i = 1;
        q.bind(i++, org_id);
        q.bind(i++, after_seq);
        if (!sandbox_id.empty()) q.bind(i++, sandbox_id);
        q.bind(i++, limit);
        std::vector<EventRecord> out;
        while (q.executeStep()) {
          out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                         q.getColumn(2).getString(), q.getColumn(3).getString(),
                         q.getColumn(4).getInt64()});
          out.back().app_id = q.getColumn(5).getString();
          out.back().replica_id = q.getColumn(6).getString();
          out.back().message = q.getColumn(7).getString();
          out.back().alert = q.getColumn(8).getInt() != 0;
          out.back().alert_limit = q.getColumn(9).getString();
          out.back().alert_value = q.getColumn(10).getInt64();
          out.back().alert_used = q.getColumn(11).getInt64();
          out.back().run_id = q.getColumn(12).getString();
          out.back().automation_id = q.getColumn(13).getString();
          out.back().job_id = q.getColumn(14).getString();
          out.back().attempt = q.getColumn(15).getInt();
          if (!q.getColumn(16).isNull()) out.back().exit_code = q.getColumn(16).getInt();
          out.back().run_sandbox_id = q.getColumn(17).getString();
        }
        return out;
      });
}

Status SqliteStore::AppendAppEvent(const EventRecord& e) {
  return Guard("saving app event", [&]() -> Status {
    SQLite::Statement q(db_,
                        "INSERT INTO events(org_id, sandbox_id, status, at, app_id, replica_id, "
                        "message) VALUES (?,'',?,?,?,?,?)");
    q.bind(1, e.org_id);
    q.bind(2, e.status);
    q.bind(3, e.at);
    q.bind(4, e.app_id);
    q.bind(5, e.replica_id);
    q.bind(6, e.message);
    q.exec();
    return Status::Ok();
  });
}

void SqliteStore::SetRunEventListener(RunEventListener listener) {
  std::lock_guard lock(listener_mu_);
  run_listener_ = std::move(listener);
}

void SqliteStore::AnnounceRunEvent(const std::string& run_id) {
  RunEventListener listener;
  {
    std::lock_guard lock(listener_mu_);
    listener = run_listener_;
  }
  if (listener) listener(run_id);
}

Result<int64_t> SqliteStore::LatestEventSeq() {
  return Guard<Result<int64_t>>("reading events", [&]() -> Result<int64_t> {
    // Past the pruned ones too: a stream that resumes after everything went is not told
    // that its id is newer than any this server sent.
    SQLite::Statement q(db_,
                        "SELECT MAX(COALESCE((SELECT MAX(seq) FROM events), 0), "
                        "COALESCE((SELECT MAX(pruned_seq) FROM event_retention), 0))");
    q.executeStep();
    return q.getColumn(0).getInt64();
  });
}

Result<SandboxRecord> SqliteStore::GetLocked(const std::string& org_id, const std::string& id) {
  static const std::string by_id =
      std::string("SELECT ") + kSandboxColumns + " FROM sandboxes WHERE id = ?";
  static const std::string by_org_and_id = by_id + " AND org_id = ?";
  auto q = statements_.Get(org_id.empty() ? by_id : by_org_and_id);
  q->bind(1, id);
  if (!org_id.empty()) q->bind(2, org_id);
  if (!q->executeStep()) return NotFound("sandbox " + id + " not found");
  return ReadSandbox(*q);
}

void SqliteStore::InsertEvent(const std::string& org_id, const std::string& id,
                              const std::string& status, int64_t at) {
  SQLite::Statement q(db_, "INSERT INTO events(org_id, sandbox_id, status, at) VALUES (?,?,?,?)");
  q.bind(1, org_id);
  q.bind(2, id);
  q.bind(3, status);
  q.bind(4, at);
  q.exec();
}

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path) {
  try {
    auto store = std::make_unique<SqliteStore>(path);
    RETURN_IF_ERROR(store->Init());
    return std::unique_ptr<Store>(std::move(store));
  } catch (const std::exception& e) {
    return Internal("opening database " + path + ": " + e.what());
  }
}

}  // namespace adapt::store

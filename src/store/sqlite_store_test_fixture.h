// The store tests' fixture: a fresh store with two organizations, shared by the store's test
// files. StoreTest runs each test against both implementations, SQLite (a database in a
// temporary directory) and MemoryStore, so the two keep one contract; SqliteStoreTest is for
// what only SQLite has (migrations, sealing at rest).
#pragma once

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "base/ids.h"
#include "os/temp_dir.h"
#include "store/memory_store.h"
#include "store/migrations.h"
#include "store/store.h"

namespace adapt::store::testing_support {

using nlohmann::json;

enum class Backend { kSqlite, kMemory };

inline SandboxLimits Limits(std::optional<int64_t> sandboxes, std::optional<int64_t> cpu = {},
                            std::optional<int64_t> memory_mib = {}) {
  SandboxLimits l;
  l.sandboxes = sandboxes;
  l.cpu = cpu;
  l.memory_mib = memory_mib;
  return l;
}

inline std::string BackendName(const testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Memory";
}

inline void PrintTo(Backend b, std::ostream* os) {
  *os << (b == Backend::kSqlite ? "SQLite" : "MemoryStore");
}

class StoreTestBase : public testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_ + "/adapt.db";
    Reopen();
    ASSERT_NE(store_, nullptr);
    org_ = MustCreateOrg("acme");
    other_org_ = MustCreateOrg("other");
  }
  void TearDown() override { store_.reset(); }

  // SQLite: closes and opens the database again. Memory: keeps the store (nothing to reopen).
  void Reopen() {
    if (backend_ == Backend::kMemory) {
      if (!store_) store_ = std::make_unique<MemoryStore>();
      return;
    }
    store_.reset();
    auto s = OpenSqliteStore(path_);
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }

  OrgRecord MustCreateOrg(const std::string& name) {
    auto org = store_->CreateOrg({NewId("org"), name, false, 1000});
    EXPECT_TRUE(org.ok()) << org.status().message();
    return org.ok() ? *org : OrgRecord{};
  }

  SandboxRecord Sandbox(const std::string& org_id, const std::string& name, int64_t at = 5000) {
    SandboxRecord r;
    r.id = NewId("sbx");
    r.org_id = org_id;
    r.status = "provisioning";
    r.config.cpu = 2;
    if (!name.empty()) r.config.labels["name"] = name;
    r.env = {{"TOKEN", "secret-value"}, {"MODE", "test"}};
    r.created_at = at;
    r.updated_at = at;
    r.expires_at = at + 3600 * 1000;
    return r;
  }

  SandboxRecord MustCreate(const SandboxRecord& r) {
    auto out = store_->CreateSandbox(r, std::nullopt);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? out->sandbox : SandboxRecord{};
  }

  std::vector<std::string> ListIds(const std::string& org, const std::string& query,
                                   int limit = 200) {
    auto page = store_->ListSandboxes(org, query, limit, std::nullopt);
    EXPECT_TRUE(page.ok()) << page.status().message();
    std::vector<std::string> ids;
    if (page.ok())
      for (const auto& r : page->items) ids.push_back(r.id);
    return ids;
  }

  std::vector<std::string> EventStatuses(const std::string& org, const std::string& id) {
    auto events = store_->ListEvents(org, id, 0, 1000);
    EXPECT_TRUE(events.ok()) << events.status().message();
    std::vector<std::string> out;
    if (events.ok())
      for (const auto& e : *events) out.push_back(e.status);
    return out;
  }

  Backend backend_ = Backend::kSqlite;
  os::TempDir tmp_{"store-test"};
  const std::string dir_ = tmp_.path();
  std::string path_;
  std::unique_ptr<Store> store_;
  OrgRecord org_;
  OrgRecord other_org_;
};

// SQLite only.
class SqliteStoreTest : public StoreTestBase {};

// Brings the empty database `db` to the schema an adaptd of before migration `version` left,
// with organization org_old: the start of a test of what `version` does to rows written before.
inline void MigrateUpTo(SQLite::Database& db, int version) {
  db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)");
  for (const auto& m : SqliteMigrations()) {
    if (m.version >= version) break;
    db.exec(m.sql);
    db.exec("INSERT INTO schema_migrations(version) VALUES (" + std::to_string(m.version) + ")");
  }
  db.exec("INSERT INTO orgs(id, name, is_admin, created_at) VALUES ('org_old', 'old', 0, 1)");
}

// Every backend: TEST_P(StoreTest, ...), instantiated once (sqlite_store_test.cc).
class StoreTest : public StoreTestBase, public testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    backend_ = GetParam();
    StoreTestBase::SetUp();
  }
};

}  // namespace adapt::store::testing_support

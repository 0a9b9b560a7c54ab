// The SQLite schema, as numbered migrations applied in order, each in its own transaction.
#pragma once

#include <string>
#include <vector>

namespace adapt::store {

struct Migration {
  int version;
  const char* sql;
};

// Migration 37's SQL (migration_list_sequences.cc; this file would pass 600 lines).
extern const char* const kListSequencesMigration;
extern const char* const kAppLabelMigration;       // 40 (migration_app_label.cc)
extern const char* const kLedgerTotalsMigration;   // 41 (migration_ledger_totals.cc)
extern const char* const kUsageByPeriodMigration;  // 42 (migration_usage_by_period.cc)

// Every migration, oldest first. Append only: a shipped migration never changes.
const std::vector<Migration>& SqliteMigrations();

}  // namespace adapt::store

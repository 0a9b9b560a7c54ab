// Migration 37: endpoints, storage tokens, API keys and users gain the insertion sequence
// their newest-first lists page on (base/list_cursor.h), as secrets and apps did in 35: a
// rowid may be reused once the newest row is deleted, and created_at ties within a
// millisecond. Each table is rebuilt with the rows in their creation order. Organizations
// cannot be rebuilt here (other tables refer to them, and foreign keys are on inside a
// migration's transaction): their list pages on the rowid (sqlite_orgs_keys.cc).
#include "store/migrations.h"

namespace adapt::store {

const char* const kListSequencesMigration = R"sql(
CREATE TABLE endpoints_v37 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  port INTEGER NOT NULL,
  hostname TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
INSERT INTO endpoints_v37(id, org_id, sandbox_id, port, hostname, created_at)
  SELECT id, org_id, sandbox_id, port, hostname, created_at FROM endpoints
  ORDER BY created_at, rowid;
DROP TABLE endpoints;
ALTER TABLE endpoints_v37 RENAME TO endpoints;
CREATE INDEX endpoints_by_sandbox ON endpoints(sandbox_id);
CREATE INDEX endpoints_by_org ON endpoints(org_id, seq);
CREATE TABLE storage_tokens_v37 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  name TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
INSERT INTO storage_tokens_v37(id, org_id, sandbox_id, name, expires_at, revoked_at, created_at)
  SELECT id, org_id, sandbox_id, name, expires_at, revoked_at, created_at FROM storage_tokens
  ORDER BY created_at, rowid;
DROP TABLE storage_tokens;
ALTER TABLE storage_tokens_v37 RENAME TO storage_tokens;
CREATE INDEX storage_tokens_by_org ON storage_tokens(org_id, seq);
CREATE TABLE api_keys_v37 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  is_admin INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL DEFAULT 0
);
INSERT INTO api_keys_v37(id, org_id, name, key_hash, is_admin, created_at, expires_at)
  SELECT id, org_id, name, key_hash, is_admin, created_at, expires_at FROM api_keys
  ORDER BY created_at, rowid;
DROP TABLE api_keys;
ALTER TABLE api_keys_v37 RENAME TO api_keys;
CREATE INDEX api_keys_by_org ON api_keys(org_id, seq);
CREATE TABLE users_v37 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
INSERT INTO users_v37(id, org_id, email, password_hash, created_at)
  SELECT id, org_id, email, password_hash, created_at FROM users ORDER BY created_at, rowid;
DROP TABLE users;
ALTER TABLE users_v37 RENAME TO users;
CREATE INDEX users_by_org ON users(org_id, created_at);
)sql";

}  // namespace adapt::store

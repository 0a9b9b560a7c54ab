#include "store/migrations.h"

namespace adapt::store {

const std::vector<Migration>& SqliteMigrations() {
  static const std::vector<Migration> kMigrations = {
      {1, R"sql(
CREATE TABLE orgs (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  is_admin INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  is_admin INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE TABLE sandboxes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  status TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  config TEXT NOT NULL,
  env TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER,
  deleted_at INTEGER,
  termination_reason TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  result TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sandboxes_by_org ON sandboxes(org_id, seq);
CREATE INDEX sandboxes_by_status ON sandboxes(status);
CREATE TABLE idempotency_keys (
  org_id TEXT NOT NULL,
  key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (org_id, key)
);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  status TEXT NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX events_by_org ON events(org_id, seq);
)sql"},
      {2, R"sql(
CREATE TABLE commands (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  status TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX commands_by_sandbox ON commands(sandbox_id, seq);
CREATE INDEX commands_by_status ON commands(status);
)sql"},
      {3, R"sql(
CREATE TABLE oauth_clients (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE oauth_grants (
  hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  client_id TEXT NOT NULL REFERENCES oauth_clients(id),
  org_id TEXT NOT NULL REFERENCES orgs(id),
  key_id TEXT NOT NULL,
  data TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX oauth_grants_by_expiry ON oauth_grants(expires_at);
)sql"},
      {4, R"sql(
CREATE TABLE sandbox_networks (
  sandbox_id TEXT PRIMARY KEY,
  slot INTEGER NOT NULL UNIQUE,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE endpoints (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  port INTEGER NOT NULL,
  hostname TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);
CREATE INDEX endpoints_by_sandbox ON endpoints(sandbox_id);
)sql"},
      {5, R"sql(
CREATE TABLE images (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  reference TEXT NOT NULL,
  status TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX images_by_org ON images(org_id, seq);
)sql"},
      {7, R"sql(
CREATE TABLE volumes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  size_mib INTEGER NOT NULL,
  status TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (org_id, name)
);
)sql"},
      {8, R"sql(
CREATE TABLE objects (
  org_id TEXT NOT NULL,
  key TEXT NOT NULL,
  blob TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  etag TEXT NOT NULL,
  content_type TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (org_id, key)
);
CREATE TABLE storage_tokens (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  name TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL
);
CREATE INDEX storage_tokens_by_org ON storage_tokens(org_id);
CREATE TABLE sites (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  hostname TEXT NOT NULL UNIQUE,
  release_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (org_id, name)
);
CREATE TABLE site_releases (
  id TEXT PRIMARY KEY,
  site_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  source_prefix TEXT NOT NULL,
  files TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX site_releases_by_site ON site_releases(site_id);
)sql"},
      {9, R"sql(
CREATE TABLE pool_members (
  id TEXT PRIMARY KEY,
  pool_key TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX pool_members_by_key ON pool_members(pool_key, state, created_at);
)sql"},
      {11, R"sql(
CREATE TABLE secrets (
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  ciphertext TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (org_id, name)
);
)sql"},
      {12, R"sql(
ALTER TABLE orgs ADD COLUMN registered INTEGER NOT NULL DEFAULT 1;
)sql"},
      {13, R"sql(
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX users_by_org ON users(org_id, created_at);
)sql"},
      {14, R"sql(
CREATE TABLE operations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  total_bytes INTEGER NOT NULL,
  error TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL
);
CREATE INDEX operations_open_by_sandbox ON operations(sandbox_id, phase);
)sql"},
      {15, R"sql(
CREATE TABLE plans (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  concurrent_sandboxes INTEGER,
  cpu INTEGER,
  memory_mib INTEGER,
  max_run_seconds INTEGER,
  persistent_storage_gib INTEGER,
  object_storage_gib INTEGER,
  gpus INTEGER,
  automations INTEGER,
  queued_jobs INTEGER,
  endpoints INTEGER,
  cpu_second_nanos INTEGER NOT NULL,
  memory_gib_second_nanos INTEGER NOT NULL,
  storage_gib_month_nanos INTEGER NOT NULL,
  gpu_second_nanos INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE billing_accounts (
  org_id TEXT PRIMARY KEY REFERENCES orgs(id),
  plan_id TEXT NOT NULL REFERENCES plans(id),
  terms_version TEXT NOT NULL,
  registered_at INTEGER NOT NULL
);
CREATE TABLE ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES orgs(id),
  kind TEXT NOT NULL,
  amount_nanos INTEGER NOT NULL,
  reason TEXT NOT NULL,
  expires_at INTEGER,
  created_at INTEGER NOT NULL
);
CREATE INDEX ledger_by_org ON ledger(org_id, seq);
)sql"},
      {16, R"sql(
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  status TEXT NOT NULL,
  spec TEXT NOT NULL,
  env TEXT NOT NULL,
  max_attempts INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  last_run_id TEXT NOT NULL,
  exit_code INTEGER,
  error TEXT NOT NULL,
  idempotency_key TEXT,
  fingerprint TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  UNIQUE (org_id, idempotency_key)
);
CREATE INDEX jobs_by_status ON jobs(status, seq);
CREATE TABLE runs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  automation_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  sandbox_id TEXT NOT NULL,
  command_id TEXT NOT NULL,
  status TEXT NOT NULL,
  exit_code INTEGER,
  error TEXT NOT NULL,
  stdout_text TEXT NOT NULL,
  stderr_text TEXT NOT NULL,
  stdout_truncated INTEGER NOT NULL,
  stderr_truncated INTEGER NOT NULL,
  scheduled_at INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX runs_by_org ON runs(org_id, seq);
CREATE INDEX runs_by_status ON runs(status);
)sql"},
      {17, R"sql(
CREATE TABLE apps (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  hostname TEXT NOT NULL UNIQUE,
  source_sandbox_id TEXT NOT NULL,
  release_id TEXT NOT NULL,
  replicas INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX apps_by_org ON apps(org_id, created_at);
CREATE TABLE app_releases (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  blob TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  source_path TEXT NOT NULL,
  build_command TEXT NOT NULL,
  build_path TEXT NOT NULL,
  build_exit_code INTEGER,
  build_output TEXT NOT NULL,
  start_command TEXT NOT NULL,
  port INTEGER NOT NULL,
  env TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX app_releases_by_app ON app_releases(app_id, seq);
CREATE TABLE app_replicas (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sandbox_id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  release_id TEXT NOT NULL,
  state TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX app_replicas_by_app ON app_replicas(app_id, seq);
)sql"},
      {18, R"sql(
CREATE TABLE databases (
  org_id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  status TEXT NOT NULL,
  sealed_password TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
)sql"},
      {19, R"sql(
CREATE TABLE automations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  sandbox_id TEXT NOT NULL,
  spec TEXT NOT NULL,
  env TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  paused_reason TEXT NOT NULL,
  version INTEGER NOT NULL,
  consecutive_failures INTEGER NOT NULL,
  next_due_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX automations_by_org ON automations(org_id, seq);
CREATE INDEX automations_by_sandbox ON automations(sandbox_id);
CREATE INDEX automations_due ON automations(enabled, next_due_at);
CREATE UNIQUE INDEX runs_one_per_slot ON runs(automation_id, scheduled_at)
  WHERE automation_id != '' AND trigger IN ('schedule', 'catch_up');
)sql"},
      {20, R"sql(
ALTER TABLE ledger ADD COLUMN subject_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE ledger ADD COLUMN subject_id TEXT NOT NULL DEFAULT '';
ALTER TABLE ledger ADD COLUMN period_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN period_end INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN cpu_millis INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN memory_mib_millis INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN storage_mib_millis INTEGER NOT NULL DEFAULT 0;
CREATE INDEX ledger_by_subject ON ledger(subject_id, period_end);
CREATE INDEX events_by_time ON events(at);
CREATE INDEX events_by_sandbox ON events(sandbox_id, seq);
CREATE INDEX runs_by_sandbox ON runs(sandbox_id);
CREATE TABLE meter_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  through INTEGER NOT NULL
);
CREATE TABLE account_alerts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  credits_nanos INTEGER NOT NULL,
  usage_nanos INTEGER NOT NULL,
  at INTEGER NOT NULL,
  UNIQUE (org_id, kind, credits_nanos)
);
)sql"},
      {21, R"sql(
CREATE TABLE limit_alerts (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  limit_name TEXT NOT NULL,
  percent INTEGER NOT NULL,
  limit_value INTEGER NOT NULL,
  used INTEGER NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX limit_alerts_by_org ON limit_alerts(org_id, seq);
CREATE TABLE limits_reached (
  org_id TEXT NOT NULL,
  limit_name TEXT NOT NULL,
  percent INTEGER NOT NULL,
  PRIMARY KEY (org_id, limit_name, percent)
);
)sql"},
      {22, R"sql(
ALTER TABLE plans ADD COLUMN database_mib INTEGER;
ALTER TABLE plans ADD COLUMN database_connections INTEGER;
)sql"},
      {23, R"sql(
ALTER TABLE app_releases ADD COLUMN readiness_path TEXT NOT NULL DEFAULT '';
ALTER TABLE app_releases ADD COLUMN readiness_timeout_seconds INTEGER NOT NULL DEFAULT 120;
ALTER TABLE plans ADD COLUMN app_replicas INTEGER;
UPDATE plans SET app_replicas = 10 WHERE id = 'default';
ALTER TABLE events ADD COLUMN app_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN replica_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN message TEXT NOT NULL DEFAULT '';
)sql"},
      {24, R"sql(
ALTER TABLE events ADD COLUMN alert INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN alert_limit TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN alert_value INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN alert_used INTEGER NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN gpu_millis INTEGER NOT NULL DEFAULT 0;
)sql"},
      {25, R"sql(
ALTER TABLE operations ADD COLUMN app_id TEXT NOT NULL DEFAULT '';
ALTER TABLE operations ADD COLUMN release_id TEXT NOT NULL DEFAULT '';
ALTER TABLE app_releases ADD COLUMN secrets TEXT NOT NULL DEFAULT '';
)sql"},
      {26, R"sql(
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
)sql"},
      {27, R"sql(
CREATE TABLE dashboard_sessions (
  token_hash TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  key_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER NOT NULL
);
CREATE INDEX dashboard_sessions_by_key ON dashboard_sessions(key_id);
)sql"},
      {28, R"sql(
ALTER TABLE events ADD COLUMN run_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN automation_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN job_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN exit_code INTEGER;
ALTER TABLE events ADD COLUMN run_sandbox_id TEXT NOT NULL DEFAULT '';
)sql"},
      {29, R"sql(
ALTER TABLE app_releases ADD COLUMN readiness_period_seconds INTEGER NOT NULL DEFAULT 5;
ALTER TABLE app_releases ADD COLUMN readiness_failure_threshold INTEGER NOT NULL DEFAULT 3;
ALTER TABLE app_replicas ADD COLUMN check_failures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE app_replicas ADD COLUMN check_failure TEXT NOT NULL DEFAULT '';
CREATE TABLE app_troubles (
  app_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL,
  failures INTEGER NOT NULL,
  retry_at INTEGER NOT NULL,
  why TEXT NOT NULL,
  replica_sandbox_id TEXT NOT NULL,
  replica_release_id TEXT NOT NULL
);
)sql"},
      {30, R"sql(
CREATE TABLE event_retention (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  pruned_seq INTEGER NOT NULL
);
)sql"},
      // Pruning as each run ends reads one owner's runs and the oldest ended ones only.
      {31, R"sql(
CREATE INDEX runs_by_owner ON runs(job_id, automation_id, seq);
CREATE INDEX runs_by_end ON runs(ended_at);
)sql"},
      // The environment's names in plaintext (sandbox_env_column.h), so that the list, which
      // shows names only, opens no sealed values. NULL in rows an older adaptd wrote until
      // SetValueSealer fills it; the list reads the env column then.
      {32, R"sql(
ALTER TABLE sandboxes ADD COLUMN env_names TEXT;
)sql"},
      // An organization being deleted (core/org_deletion.h): closed to its callers, its data
      // still being removed; a restart finishes it.
      {33, R"sql(
ALTER TABLE orgs ADD COLUMN deleting_at INTEGER NOT NULL DEFAULT 0;
)sql"},
      // Idempotency-Key for every create, not only a sandbox's: a key is unique per
      // organization and scope (the kind of object), and names the object it made. The old
      // rows were all sandboxes'.
      {34, R"sql(
CREATE TABLE idempotency_keys_scoped (
  org_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  object_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (org_id, scope, key)
);
INSERT INTO idempotency_keys_scoped(org_id, scope, key, body_hash, object_id, created_at)
  SELECT org_id, 'sandbox', key, body_hash, sandbox_id, created_at FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_scoped RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys(created_at);
)sql"},
      // Lists are newest first with cursors on an insertion sequence (base/list_cursor.h):
      // secrets and apps had none (a rowid may be reused once the newest row is deleted), so
      // both tables are rebuilt with one, the rows keeping their creation order.
      {35, R"sql(
CREATE TABLE secrets_v35 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  version INTEGER NOT NULL,
  ciphertext TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (org_id, name)
);
INSERT INTO secrets_v35(org_id, name, version, ciphertext, created_at, updated_at)
  SELECT org_id, name, version, ciphertext, created_at, updated_at FROM secrets
  ORDER BY created_at, rowid;
DROP TABLE secrets;
ALTER TABLE secrets_v35 RENAME TO secrets;
CREATE TABLE apps_v35 (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL,
  name TEXT NOT NULL,
  hostname TEXT NOT NULL UNIQUE,
  source_sandbox_id TEXT NOT NULL,
  release_id TEXT NOT NULL,
  replicas INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
INSERT INTO apps_v35(id, org_id, name, hostname, source_sandbox_id, release_id, replicas,
                     created_at, updated_at)
  SELECT id, org_id, name, hostname, source_sandbox_id, release_id, replicas, created_at,
         updated_at FROM apps ORDER BY created_at, id;
DROP TABLE apps;
ALTER TABLE apps_v35 RENAME TO apps;
CREATE INDEX apps_by_org ON apps(org_id, seq);
)sql"},
      // A roll back names the checkpoint it puts back, so that one interrupted after the
      // sandbox's processes stopped can be finished at the next start instead of kept stopped.
      {36, R"sql(
ALTER TABLE operations ADD COLUMN checkpoint TEXT NOT NULL DEFAULT '';
)sql"},
      {37, kListSequencesMigration},
      // A command's kept output (up to 1 MiB a stream) has columns of its own beside its JSON,
      // so that saving or reading a record does not escape and parse it as JSON text. NULL:
      // the row was written before, and its output is still in `data` (read from there).
      {38, R"sql(
ALTER TABLE commands ADD COLUMN stdout TEXT;
ALTER TABLE commands ADD COLUMN stderr TEXT;
)sql"},
      // Site and app releases count against their organization's object storage quota: a
      // site release's bytes get a column (summed from its files), and both tables an index
      // by organization for the sum.
      {39, R"sql(
ALTER TABLE site_releases ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE site_releases SET bytes = (SELECT COALESCE(SUM(json_extract(value, '$.size')), 0)
                                  FROM json_each(site_releases.files));
CREATE INDEX site_releases_by_org ON site_releases(org_id);
CREATE INDEX app_releases_by_org ON app_releases(org_id);
)sql"},
      {40, kAppLabelMigration},
      {41, kLedgerTotalsMigration},
      {42, kUsageByPeriodMigration},
  };
  return kMigrations;
}

}  // namespace adapt::store

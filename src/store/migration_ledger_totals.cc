// Migration 41: an organization's balance was summed over its whole ledger at each read (GET
// /v1/account, a create's check on a priced plan, each metering pass that touched it),
// and metering writes an entry per running sandbox every 30 s: a month of ten sandboxes
// is 864,000 rows. The ledger's totals are kept beside it, updated in each append's
// transaction; only credits that expire are summed at a read (few, by their index).
#include "store/migrations.h"

namespace adapt::store {

const char* const kLedgerTotalsMigration = R"sql(
CREATE TABLE ledger_totals (
  org_id TEXT PRIMARY KEY REFERENCES orgs(id),
  usage_nanos INTEGER NOT NULL,
  lasting_credits_nanos INTEGER NOT NULL
);
INSERT INTO ledger_totals(org_id, usage_nanos, lasting_credits_nanos)
  SELECT org_id,
         COALESCE(SUM(CASE WHEN kind != 'credit' THEN amount_nanos ELSE 0 END), 0),
         COALESCE(SUM(CASE WHEN kind = 'credit' AND expires_at IS NULL THEN amount_nanos
                      ELSE 0 END), 0)
  FROM ledger GROUP BY org_id;
CREATE INDEX ledger_expiring_credits ON ledger(org_id, expires_at)
  WHERE kind = 'credit' AND expires_at IS NOT NULL;
)sql";

}  // namespace adapt::store

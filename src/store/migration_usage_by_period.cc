// Migration 42: the usage report (UsageBetween: GET /v1/account/usage and the MCP tool) read
// every usage entry of its organization through the ledger's index by organization and kept
// those of its period, and metering writes an entry per running sandbox every 30 s (a month of
// ten sandboxes: 864,000 rows for any period). The usage entries get an index of their own by
// organization and period start, so a report reads only its period's.
#include "store/migrations.h"

namespace adapt::store {

const char* const kUsageByPeriodMigration = R"sql(
CREATE INDEX ledger_usage_by_period ON ledger(org_id, period_start) WHERE kind = 'usage';
)sql";

}  // namespace adapt::store

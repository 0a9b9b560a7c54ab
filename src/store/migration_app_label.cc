// Migration 40: app replicas are labelled with the reserved `platform.app`, which no caller
// can set; an older adaptd labelled them `adapt-app`, which a caller could. The replicas an app
// still holds take the new label, so that its reconcile and the deploy-from-a-replica check
// know them; a sandbox no app holds keeps its label as the caller gave it.
#include "store/migrations.h"

namespace adapt::store {

const char* const kAppLabelMigration = R"sql(
UPDATE sandboxes
  SET config = json_set(json_remove(config, '$.labels."adapt-app"'),
                        '$.labels."platform.app"',
                        json_extract(config, '$.labels."adapt-app"'))
  WHERE json_extract(config, '$.labels."adapt-app"') IS NOT NULL
    AND id IN (SELECT sandbox_id FROM app_replicas);
)sql";

}  // namespace adapt::store

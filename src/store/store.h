// Store: adapt's durable state, the aggregate of one interface per domain (below). Every
// method is one transaction; a status change and its event are written together.
// Implementations are thread-safe. SQLite (OpenSqliteStore) is the daemon's; MemoryStore
// (store/memory_store.h) serves unit tests. A service that needs one domain only takes that
// domain's interface.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "store/account_store.h"
#include "store/app_store.h"
#include "store/automation_store.h"
#include "store/command_store.h"
#include "store/dashboard_session_store.h"
#include "store/database_store.h"
#include "store/endpoint_store.h"
#include "store/event_store.h"
#include "store/idempotency_store.h"
#include "store/image_record_store.h"
#include "store/job_store.h"
#include "store/network_store.h"
#include "store/oauth_store.h"
#include "store/object_record_store.h"
#include "store/operation_store.h"
#include "store/org_store.h"
#include "store/pool_store.h"
#include "store/records.h"
#include "store/sandbox_store.h"
#include "store/secret_store.h"
#include "store/site_store.h"
#include "store/storage_token_store.h"
#include "store/usage_store.h"
#include "store/user_store.h"
#include "store/value_sealer.h"
#include "store/volume_store.h"

namespace adapt::store {

class Store : public OrgStore,
              public OAuthStore,
              public SandboxStore,
              public EventStore,
              public virtual IdempotencyStore,
              public CommandStore,
              public NetworkStore,
              public EndpointStore,
              public ImageRecordStore,
              public VolumeStore,
              public ObjectRecordStore,
              public StorageTokenStore,
              public SiteStore,
              public PoolStore,
              public SecretStore,
              public UserStore,
              public DashboardSessionStore,
              public OperationStore,
              public AccountStore,
              public UsageStore,
              public JobStore,
              public AppStore,
              public DatabaseStore,
              public AutomationStore {
 public:
  ~Store() override = default;
};

// Opens (creating and migrating) the SQLite store at `path`.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path);

}  // namespace adapt::store

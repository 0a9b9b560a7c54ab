// OperationStore: long-running operations (a stop's checkpoint, a start's restore, an app's
// deploy), kept so that GET /v1/operations/{id} answers them after adaptd restarts. One
// domain of Store (store/store.h). Every method is one transaction; implementations are
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::store {

struct OperationRecord {
  std::string id;  // "op_..."
  std::string org_id;
  std::string kind;        // "checkpoint", "restore" or "app.deploy"
  std::string sandbox_id;  // an app deploy's: its source sandbox
  std::string app_id;      // an app deploy's
  std::string release_id;  // an app deploy's, once packaged
  std::string checkpoint;  // a roll back's: the named checkpoint it puts back
  std::string phase;       // "Pending", "Running", "Completed", "Failed"
  uint64_t bytes = 0;
  uint64_t total_bytes = 0;
  std::string error;        // empty unless Failed
  int64_t started_at = 0;   // ms since epoch
  int64_t finished_at = 0;  // 0 until Completed or Failed
};

class OperationStore {
 public:
  virtual ~OperationStore() = default;

  // Inserts the operation or replaces the one with its id.
  virtual Status PutOperation(const OperationRecord& op) = 0;
  // NotFound unless the organization has an operation of this id.
  virtual Result<OperationRecord> GetOperation(const std::string& org_id,
                                               const std::string& id) = 0;
  // The sandbox's operations that are neither Completed nor Failed, oldest first (any org).
  virtual Result<std::vector<OperationRecord>> ListOpenOperations(
      const std::string& sandbox_id) = 0;
  // Every open operation of every sandbox, oldest first (start-up reconciliation).
  virtual Result<std::vector<OperationRecord>> ListAllOpenOperations() = 0;
};

}  // namespace adapt::store

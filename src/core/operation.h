// Operation: a long-running piece of work a caller polls (GET /v1/operations/{id}, MCP
// get_checkpoint_operation). Two sources answer to it: a sandbox's checkpoint (its stop) or
// restore (its start) and an app's deploy or rollback, kept in the operations table
// (store/operation_store.h), and an image's pull or import, whose operation is the image record
// itself (its id is the image's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace adapt::core {

inline constexpr const char* kCheckpointOperation = "checkpoint";
inline constexpr const char* kRestoreOperation = "restore";
// A new sandbox made from a named checkpoint (its first start restores a copy of it).
inline constexpr const char* kForkOperation = "fork";
inline constexpr const char* kAppDeployOperation = "app.deploy";
inline constexpr const char* kAppRollbackOperation = "app.rollback";

struct Operation {
  std::string id;
  // "checkpoint", "restore", "fork", "app.deploy", "app.rollback", "image.pull", "image.import"
  std::string kind;
  std::string phase;  // "Pending", "Running", "Completed", "Failed"
  uint64_t bytes = 0;
  uint64_t total_bytes = 0;               // 0 while unknown
  std::optional<std::string> error;       // why it failed, in one sentence
  std::optional<std::string> sandbox_id;  // a checkpoint's or restore's; an app's source
  std::optional<std::string> app_id;      // a deploy's or rollback's
  std::optional<std::string> release_id;  // a deploy's once packaged; a rollback's
  std::optional<std::string> image_id;    // a pull's or import's
  std::optional<int64_t> started_at;      // ms since epoch (sandbox operations)
  std::optional<int64_t> finished_at;     // set once Completed or Failed
};

}  // namespace adapt::core

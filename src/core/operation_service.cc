#include "core/operation_service.h"

#include "base/ids.h"
#include "core/image_service.h"

namespace adapt::core {

Result<Operation> OperationService::Get(const Principal& who, const std::string& id) {
  if (IsValidId(id, "op")) {
    ASSIGN_OR_RETURN(store::OperationRecord r, operations_.GetOperation(who.org_id, id));
    Operation op;
    op.id = r.id;
    op.kind = r.kind;
    op.phase = r.phase;
    op.bytes = r.bytes;
    op.total_bytes = r.total_bytes;
    op.sandbox_id = r.sandbox_id;
    op.started_at = r.started_at;
    if (!r.app_id.empty()) op.app_id = r.app_id;
    if (!r.release_id.empty()) op.release_id = r.release_id;
    if (!r.error.empty()) op.error = r.error;
    if (r.finished_at) op.finished_at = r.finished_at;
    return op;
  }
  if (images_ && IsValidId(id, "img")) {
    ASSIGN_OR_RETURN(ImageOperation image, images_->Operation(who, id));
    Operation op;
    op.id = image.id;
    op.kind = image.kind;
    op.phase = image.phase;
    op.bytes = image.progress.bytes;
    op.total_bytes = image.progress.total_bytes;
    op.error = image.error;
    op.image_id = image.image_id;
    return op;
  }
  return NotFound("operation " + id + " not found");
}

}  // namespace adapt::core

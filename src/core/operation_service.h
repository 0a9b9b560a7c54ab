// OperationService: GET /v1/operations/{id} and MCP get_checkpoint_operation. An id names a
// sandbox's checkpoint or restore (the operations table) or an image's pull or import (the
// image's id). Another organization's operation is NotFound, as an unknown one. Thread-safe.
#pragma once

#include <string>

#include "core/auth.h"
#include "core/operation.h"
#include "store/operation_store.h"

namespace adapt::core {

class ImageService;

class OperationService {
 public:
  // `images` null: image ids are not operations here.
  OperationService(store::OperationStore& operations, ImageService* images)
      : operations_(operations), images_(images) {}

  Result<Operation> Get(const Principal& who, const std::string& id);

 private:
  store::OperationStore& operations_;
  ImageService* images_;
};

}  // namespace adapt::core

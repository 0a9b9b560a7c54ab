// The wire form of core::Operation (GET /v1/operations/{id}, and POST /v1/apps's 202).
#pragma once

#include <nlohmann/json.hpp>

#include "core/operation.h"

namespace adapt::api {

nlohmann::json OperationJson(const core::Operation& op);

}  // namespace adapt::api

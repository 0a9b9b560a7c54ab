// Following an operation (GET /v1/operations/{id}) until it is Completed or Failed: the
// checkpoint of `adapt sandbox stop --wait` and `adapt op get --wait`.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "cli/api_client.h"

namespace adapt::cli {

// The operation once its phase is Completed or Failed, or as it is after `limit`.
Result<nlohmann::json> WaitForOperation(const ApiClient& client, const std::string& id,
                                        std::chrono::seconds limit);
// "op_1 checkpoint of sbx_2: Completed (1048576 bytes)", or "...: Failed: why".
std::string OperationSummary(const nlohmann::json& op);
// kUnavailable naming the failure when the operation Failed; OK otherwise.
Status OperationOutcome(const nlohmann::json& op);

}  // namespace adapt::cli

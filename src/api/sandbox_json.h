// REST's sandbox vocabulary (API.md, docs/openapi.yaml): the JSON body of POST /v1/sandboxes
// mapped to core::CreateSandbox, and core::Sandbox mapped to the wire object. Shape errors
// (types, unknown fields) are found here; the core checks the values, naming fields with
// RestSandboxFields().
#pragma once

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "core/field_names.h"
#include "core/sandbox_request.h"
#include "core/sandbox_view.h"

namespace adapt::api {

// REST's names for the core's fields ("memory_mib" is "memoryMiB").
const core::FieldNames& RestSandboxFields();

Result<core::CreateSandbox> CreateSandboxFromJson(const nlohmann::json& body);
// POST /v1/sandboxes with "fromCheckpoint": a fork (only ttlSeconds and labels beside it).
Result<core::ForkSandbox> ForkSandboxFromJson(const nlohmann::json& body);

nlohmann::json SandboxToJson(const core::Sandbox& s);
// {"items": [...], "nextCursor": ...}
nlohmann::json SandboxPageToJson(const core::SandboxPage& page);
// An endpoint as REST shows it, in the sandbox view and under /endpoints.
nlohmann::json EndpointJson(const core::Endpoint& e);

}  // namespace adapt::api

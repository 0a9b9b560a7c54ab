// The sandbox's wire object written as text for GET /v1/sandboxes/{id} and the list: byte for
// byte JsonResponse(SandboxToJson(s)).body (sandbox_json_text_test.cc holds them equal), at a
// fraction of the cost (bench/README.md, "api"). SandboxToJson stays the one definition the
// other answers (create, stop, start, MCP) build on; a field added there is added here too,
// and the test fails until it is.
#pragma once

#include <string>

#include "core/sandbox_view.h"

namespace adapt::api {

std::string SandboxJsonText(const core::Sandbox& s);
// {"items": [...], "nextCursor": ...}, as SandboxPageToJson.
std::string SandboxPageJsonText(const core::SandboxPage& page);

}  // namespace adapt::api

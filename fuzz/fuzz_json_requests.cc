// The JSON -> request mapping of the endpoints whose bodies are parsed by pure functions:
// POST /v1/sandboxes (REST's mapper CreateSandboxFromJson, the core's ValidateCreateSandbox,
// the stored settings' codec and the egress policy the firewall derives from an accepted
// request), POST .../commands and .../python (ParseRunCommand, ParseRunPython), list cursors,
// image references. The first byte picks the target; the rest is the body, parsed as the
// server parses it (ParseJson, with its depth limit). Exceptions (nlohmann's type errors
// included) escaping a parser are bugs: bad input must be an error Status, never a 500.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "api/command_mapping.h"
#include "api/sandbox_json.h"
#include "base/json_parse.h"
#include "base/list_cursor.h"
#include "core/sandbox_request.h"
#include "image/reference.h"
#include "net/policy.h"
#include "store/sandbox_config_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      auto body = adapt::ParseJson(text, "the request body");
      if (!body.ok()) return 0;
      auto create = adapt::api::CreateSandboxFromJson(*body);
      if (!create.ok()) return 0;
      auto req = adapt::core::ValidateCreateSandbox(*create, "debian:12");
      if (req.ok()) {
        // An accepted request is stored and later applied: its settings must round-trip
        // through the row's encoding and map to a policy without surprises.
        auto again =
            adapt::store::DecodeSandboxConfig(adapt::store::EncodeSandboxConfig(req->config));
        if (!(again == req->config)) __builtin_trap();
        if (req->config.network.egress != "none")
          (void)adapt::net::PolicyFor(req->config.network, "1.1.1.1");  // must not crash
      }
      break;
    }
    case 1: {
      auto body = adapt::ParseJson(text, "the request body");
      if (!body.ok()) return 0;
      (void)adapt::api::ParseRunCommand(*body);  // any answer is fine; a crash is not
      break;
    }
    case 2:
      (void)adapt::ParseListCursor(text);  // any answer is fine; a crash is not
      break;
    case 3:
      (void)adapt::image::ParseReference(text);  // any answer is fine; a crash is not
      break;
    case 4: {
      auto body = adapt::ParseJson(text, "the request body");
      if (!body.ok()) return 0;
      (void)adapt::api::ParseRunPython(*body);  // any answer is fine; a crash is not
      break;
    }
  }
  return 0;
}

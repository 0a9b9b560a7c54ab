// How the SQLite store encodes a sandbox's config and result columns: JSON text with the keys
// rows have always had (so databases written before the typed records read back the same).
// Internal to store/.
#pragma once

#include <string>

#include "base/status.h"
#include "store/sandbox_config.h"

namespace adapt::store {

std::string EncodeSandboxConfig(const SandboxConfig& c);
// Throws on text that is not JSON (the store's Guard turns it into a Status).
SandboxConfig DecodeSandboxConfig(const std::string& text);

std::string EncodeSandboxResult(const SandboxResult& r);
SandboxResult DecodeSandboxResult(const std::string& text);

}  // namespace adapt::store

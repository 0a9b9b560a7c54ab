// The sandboxes.env column: a sandbox's environment, sealed as a whole under its
// organization's key ("sealed:v1:" + the sealed JSON object) when the store has a sealer.
// Plain JSON is what adaptd wrote before sealing, and what a deleted sandbox keeps: its
// names with empty values (environmentSources still lists them). Private to src/store.
#pragma once

#include <map>
#include <string>

#include "base/status.h"
#include "store/value_sealer.h"

namespace adapt::store {

using EnvMap = std::map<std::string, std::string>;

// Plain JSON when `sealer` has no seal function.
Result<std::string> EncodeEnvColumn(const ValueSealer& sealer, const std::string& org_id,
                                    const std::string& sandbox_id, const EnvMap& env);
Result<EnvMap> DecodeEnvColumn(const ValueSealer& sealer, const std::string& org_id,
                               const std::string& sandbox_id, const std::string& column);
// True when the column holds values in plaintext (written before sealing).
bool EnvColumnIsPlain(const std::string& column);
// The names of `env`, every value dropped: what a deleted sandbox keeps.
std::string EnvNamesColumn(const EnvMap& env);

}  // namespace adapt::store

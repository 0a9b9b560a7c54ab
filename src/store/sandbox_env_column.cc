#include "store/sandbox_env_column.h"

#include <nlohmann/json.hpp>

namespace adapt::store {
namespace {

constexpr const char* kSealedPrefix = "sealed:v1:";

std::string EnvAad(const std::string& sandbox_id) { return "sandbox-env:" + sandbox_id; }

}  // namespace

Result<std::string> EncodeEnvColumn(const ValueSealer& sealer, const std::string& org_id,
                                    const std::string& sandbox_id, const EnvMap& env) {
  std::string plain =
      nlohmann::json(env).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (!sealer.seal) return plain;
  ASSIGN_OR_RETURN(std::string sealed, sealer.seal(org_id, EnvAad(sandbox_id), plain));
  return kSealedPrefix + sealed;
}

Result<EnvMap> DecodeEnvColumn(const ValueSealer& sealer, const std::string& org_id,
                               const std::string& sandbox_id, const std::string& column) {
  std::string plain = column;
  if (!EnvColumnIsPlain(column)) {
    if (!sealer.open)
      return Internal("sandbox " + sandbox_id + "'s environment is sealed and no key is loaded");
    ASSIGN_OR_RETURN(plain, sealer.open(org_id, EnvAad(sandbox_id),
                                        column.substr(std::string(kSealedPrefix).size())));
  }
  auto env = nlohmann::json::parse(plain, nullptr, false);
  if (!env.is_object()) return Internal("sandbox " + sandbox_id + " has an unreadable environment");
  EnvMap out;
  for (const auto& [k, v] : env.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

bool EnvColumnIsPlain(const std::string& column) { return column.rfind(kSealedPrefix, 0) != 0; }

std::string EnvNamesColumn(const EnvMap& env) {
  nlohmann::json names = nlohmann::json::object();
  for (const auto& [k, _] : env) names[k] = "";
  return names.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace adapt::store

// Parsing and validating POST /v1/sandboxes. Every field is checked against seed 001's
// limits; the first problem found is returned with the field it is about.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::core {

struct CreateSandboxRequest {
  // The request with defaults filled in: cpu, memoryMiB, diskMiB, ttlSeconds, labels, image,
  // imageId, network, startup, securityProfile, startupClass. Never holds env values.
  nlohmann::json config;
  std::map<std::string, std::string> env;
  // Names of the organization secrets to attach (checked for form only; the service looks
  // them up and captures their values and versions).
  std::vector<std::string> secrets;
};

// `default_image` is used when neither image nor imageId is given.
Result<CreateSandboxRequest> ParseCreateSandbox(const nlohmann::json& body,
                                                const std::string& default_image);

}  // namespace adapt::core

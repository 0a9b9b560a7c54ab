// Checks tool arguments against the subset of JSON Schema our input schemas use: an object
// with typed properties (string, integer, number, boolean, object of strings), enum,
// minimum/maximum, maxLength, required, and no unknown properties. The first problem is
// returned as a sentence naming the argument, so the model can correct its call.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace adapt::mcp {

// "" when `arguments` conform to `schema`.
std::string CheckArguments(const nlohmann::json& schema, const nlohmann::json& arguments);

}  // namespace adapt::mcp

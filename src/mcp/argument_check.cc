#include "mcp/argument_check.h"

#include <cmath>

namespace adapt::mcp {
namespace {

using nlohmann::json;

bool HasType(const json& value, const std::string& type) {
  if (type == "string") return value.is_string();
  if (type == "integer") {
    if (value.is_number_integer()) return true;
    if (!value.is_number_float()) return false;
    // A whole number in int64's range (outside it, the cast is undefined): 2.0 is an integer
    // to JSON Schema, 1e300 is not one adaptd takes.
    double d = value.get<double>();
    return std::isfinite(d) && d >= -9.2e18 && d <= 9.2e18 && d == std::trunc(d);
  }
  if (type == "number") return value.is_number();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "null") return value.is_null();
  return false;
}

std::string CheckValue(const std::string& name, const json& schema, const json& value) {
  if (schema.contains("type")) {
    const json& t = schema["type"];
    bool ok = false;
    if (t.is_string()) ok = HasType(value, t.get<std::string>());
    for (const auto& one : t.is_array() ? t : json::array()) ok = ok || HasType(value, one);
    if (!ok)
      return "Argument " + name + " must be of type " +
             t.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ".";
  }
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == value;
    if (!found)
      return "Argument " + name + " must be one of " +
             schema["enum"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ".";
  }
  if (value.is_number()) {
    double v = value.get<double>();
    if (schema.contains("minimum") && v < schema["minimum"].get<double>())
      return "Argument " + name + " must be at least " +
             schema["minimum"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ".";
    if (schema.contains("maximum") && v > schema["maximum"].get<double>())
      return "Argument " + name + " must be at most " +
             schema["maximum"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ".";
  }
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    if (schema.contains("maxLength") && s.size() > schema["maxLength"].get<size_t>())
      return "Argument " + name + " must be at most " +
             schema["maxLength"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
             " characters long.";
    if (schema.contains("minLength") && s.size() < schema["minLength"].get<size_t>())
      return "Argument " + name + " must not be empty.";
  }
  if (value.is_object() && schema.contains("additionalProperties") &&
      schema["additionalProperties"].is_object()) {
    for (const auto& [k, v] : value.items())
      if (auto p = CheckValue(name + "." + k, schema["additionalProperties"], v); !p.empty())
        return p;
  }
  return "";
}

}  // namespace

std::string CheckArguments(const json& schema, const json& arguments) {
  if (!arguments.is_object()) return "Arguments must be a JSON object.";
  const json props = schema.value("properties", json::object());
  for (const auto& [key, value] : arguments.items()) {
    if (!props.contains(key)) {
      std::string known;
      for (const auto& [k, _] : props.items()) known += (known.empty() ? "" : ", ") + k;
      return "Unknown argument " + key +
             "; this tool accepts: " + (known.empty() ? "no arguments" : known) + ".";
    }
    if (auto problem = CheckValue(key, props[key], value); !problem.empty()) return problem;
  }
  for (const auto& r : schema.value("required", json::array()))
    if (!arguments.contains(r.get<std::string>()))
      return "Argument " + r.get<std::string>() + " is required.";
  return "";
}

}  // namespace adapt::mcp

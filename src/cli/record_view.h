// How one record without a view of its own reads for people (a command, a run): its scalar
// fields as a listing, then its stdout and stderr, for the commands that print such a record
// (API.md: JSON with --json, a table otherwise).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace adapt::cli {

// "name: value" for each scalar member, in name order (strings, numbers, booleans; a
// list of strings joined by spaces); null and nested objects are left out, and stdout and
// stderr follow as indented sections ("(truncated)" when the record says so).
std::string DescribeRecord(const nlohmann::json& record);

}  // namespace adapt::cli

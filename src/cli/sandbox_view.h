// How a sandbox reads for people: one line in `sandbox list`, a field listing for create/get.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/output.h"

namespace adapt::cli {

// ID STATUS IMAGE CPU MEMORY NAME CREATED
const TableRow& SandboxTableHeader();

// One sandbox object as a row under SandboxTableHeader(); missing fields are empty cells.
TableRow SandboxTableRow(const nlohmann::json& sandbox);

// The key/value listing of one sandbox (id, status, image, resources, lifetime, labels,
// startup result), followed by its startup stdout and stderr when there are any.
std::string DescribeSandbox(const nlohmann::json& sandbox);

}  // namespace adapt::cli

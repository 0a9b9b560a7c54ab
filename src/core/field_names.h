// How an edge names the core's request fields. The core phrases each error about a field with
// the caller's name for it (and puts that name in Status::field()), so a REST client reads
// "memoryMiB must be ..." and an MCP client "memory_gib ..." without any edge rewriting a
// sentence. A name missing from the table is the core's own ("memory_mib", "network.allow[0]").
#pragma once

#include <map>
#include <string>
#include <utility>

namespace adapt::core {

class FieldNames {
 public:
  FieldNames() = default;
  explicit FieldNames(std::map<std::string, std::string> names) : names_(std::move(names)) {}

  std::string operator()(const std::string& core_name) const {
    auto it = names_.find(core_name);
    return it == names_.end() ? core_name : it->second;
  }

 private:
  std::map<std::string, std::string> names_;
};

}  // namespace adapt::core

// adapt sandbox stats ID: CPU time and memory of a running sandbox (GET /v1/sandboxes/{id}/stats).
#include <cstdio>
#include <memory>
#include <ostream>

#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

uint64_t Number(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number_unsigned() ? j[key].get<uint64_t>()
                                                                         : 0;
}

std::string Fixed(double value, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, unit);
  return buf;
}

}  // namespace

void AddSandboxStats(CLI::App& sandbox_group, Invocation& invocation) {
  auto id = std::make_shared<std::string>();
  CLI::App* stats =
      sandbox_group.add_subcommand("stats", "Show a running sandbox's CPU time and memory now");
  stats->add_option("id", *id, "sandbox id")->required();
  stats->callback([id, &invocation] {
    invocation.run = [id, &invocation](const ApiClient& client, const Console& console) {
      ASSIGN_OR_RETURN(nlohmann::json body, JsonOrError(client.Get(SandboxPath(*id) + "/stats")));
      if (invocation.json) {
        console.out << PrettyJson(body);
        return Status::Ok();
      }
      const double memory_mib = static_cast<double>(Number(body, "memoryBytes")) / (1024 * 1024);
      console.out << FormatFields({
          {"sandbox", *id},
          {"cpu time", Fixed(static_cast<double>(Number(body, "cpuUsageUsec")) / 1e6, "s")},
          {"memory",
           Fixed(memory_mib, "MiB") + " of " + std::to_string(Number(body, "memoryMiB")) + " MiB"},
          {"cpus", std::to_string(Number(body, "cpu"))},
          {"tasks", std::to_string(Number(body, "pids"))},
      });
      return Status::Ok();
    };
  });
}

}  // namespace adapt::cli

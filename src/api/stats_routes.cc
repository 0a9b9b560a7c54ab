// GET /v1/sandboxes/{id}/stats: a running sandbox's CPU time and memory now (core/sandbox_stats.h).
#include "api/errors.h"
#include "api/routes.h"
#include "base/time.h"
#include "core/sandbox_stats.h"

namespace adapt::api {

void AddStatsRoutes(Router& router, core::SandboxService& sandboxes) {
  router.Add("GET", "/v1/sandboxes/{id}/stats",
             [&](const HttpRequest&, const PathParams& p, const core::Principal& who) {
               auto stats = core::ReadSandboxStats(sandboxes, who, p.at("id"));
               if (!stats.ok()) return ErrorResponse(stats.status());
               return JsonResponse(200, {{"sandboxId", stats->sandbox_id},
                                         {"at", FormatRfc3339(stats->at)},
                                         {"cpu", stats->cpu_limit},
                                         {"memoryMiB", stats->memory_limit_mib},
                                         {"cpuUsageUsec", stats->cpu_usage_usec},
                                         {"memoryBytes", stats->memory_bytes},
                                         {"pids", stats->pids}});
             });
}

}  // namespace adapt::api

// AppService's record of its replicas' failures: each failure counted once, the backoff it
// sets before the next replica starts, written to the store so that a restarted adaptd goes
// on from it; and the app events that tell of them.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "base/time.h"
#include "core/app_service.h"

namespace adapt::core {

std::chrono::seconds ReplicaRestartDelay(int failures) {
  if (failures <= 0) return std::chrono::seconds(0);
  return std::chrono::seconds(failures >= 6 ? 60 : std::min(60, 2 << (failures - 1)));
}

void AppService::Emit(const std::string& org_id, const std::string& app_id, const std::string& type,
                      const std::string& replica_id, const std::string& message) {
  store::EventRecord e;
  e.org_id = org_id;
  e.status = type;
  e.at = NowMillis();
  e.app_id = app_id;
  e.replica_id = replica_id;
  e.message = message.size() > 2000 ? message.substr(0, 2000) : message;
  if (Status st = store_.AppendAppEvent(e); !st.ok()) {
    spdlog::warn("app {}: recording event {}: {}", app_id, type, st.message());
    return;
  }
  if (bus_) bus_->Notify({Change::Kind::kAppEvent, app_id});
}

void AppService::NoteFailure(const store::AppReplicaRecord& replica, const std::string& why) {
  {
    // Under mu_, the store's copy is written in the order the failures were counted.
    std::lock_guard lock(mu_);
    if (!counted_.insert(replica.sandbox_id).second) return;
    Trouble& t = trouble_[replica.app_id];
    ++t.failures;
    t.why = "replica " + replica.sandbox_id + " " + why;
    t.replica = replica;
    const auto delay = ReplicaRestartDelay(t.failures);
    t.retry_at = std::chrono::steady_clock::now() + delay;
    store::AppTroubleRecord saved{replica.app_id,
                                  replica.org_id,
                                  t.failures,
                                  NowMillis() + std::chrono::milliseconds(delay).count(),
                                  t.why,
                                  replica.sandbox_id,
                                  replica.release_id};
    if (Status st = store_.PutAppTrouble(saved); !st.ok())
      spdlog::warn("app {}: recording replica {}'s failure: {}", replica.app_id, replica.sandbox_id,
                   st.message());
  }
  Emit(replica.org_id, replica.app_id, "replica.failed", replica.sandbox_id, why);
}

void AppService::ClearTrouble(const std::string& app_id) {
  std::lock_guard lock(mu_);
  if (!trouble_.erase(app_id)) return;
  if (Status st = store_.DeleteAppTrouble(app_id); !st.ok())
    spdlog::warn("app {}: clearing its replicas' failures: {}", app_id, st.message());
}

void AppService::LoadTroubles() {
  auto troubles = store_.ListAppTroubles();
  if (!troubles.ok())
    return spdlog::error("apps: reading the replicas' failures: {}", troubles.status().message());
  const int64_t now_ms = NowMillis();
  const auto now = std::chrono::steady_clock::now();
  const int64_t longest = std::chrono::milliseconds(ReplicaRestartDelay(1000)).count();
  std::lock_guard lock(mu_);
  for (const auto& t : *troubles) {
    Trouble& m = trouble_[t.app_id];
    m.failures = t.failures;
    m.why = t.why;
    // What was left of the backoff (a clock that jumped makes it no longer than the longest).
    m.retry_at =
        now + std::chrono::milliseconds(std::clamp(t.retry_at - now_ms, int64_t{0}, longest));
    m.replica = {t.replica_sandbox_id, t.app_id, t.org_id, t.replica_release_id, "starting", 0};
    // Counted before the restart: the reconcile that removes it does not count it again.
    counted_.insert(t.replica_sandbox_id);
  }
}

}  // namespace adapt::core

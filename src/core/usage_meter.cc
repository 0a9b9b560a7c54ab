#include "core/usage_meter.h"

#include <algorithm>
#include <map>

#include "base/background_work.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/nano_amount.h"
#include "base/time.h"
#include "core/limit_alerts.h"
#include "core/usage_arithmetic.h"

namespace adapt::core {
namespace {

// A status event written by a transaction that began before a pass read the events can
// carry an earlier time than the pass: the next pass looks this far back for changes.
constexpr int64_t kEventSlackMillis = 60'000;

void Keep(Status& first, const Status& st) {
  if (!st.ok()) {
    spdlog::warn("metering: {}", st.message());
    if (first.ok()) first = st;
  }
}

}  // namespace

UsageMeter::UsageMeter(store::Store& store, AccountService& accounts, MeteringOptions options,
                       StopCompute stop)
    : store_(store), accounts_(accounts), options_(options), stop_(std::move(stop)) {}

UsageMeter::~UsageMeter() { Stop(); }

void UsageMeter::Start() {
  thread_ = std::thread(Guarded("usage meter", [this] { Loop(); }));
}

void UsageMeter::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void UsageMeter::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    // MeterOnce logs each failure; the next pass retries it.
    RunGuarded("usage meter pass",
               [this] { IgnoreError(MeterOnce(NowMillis()), "logged by the pass"); });
    lock.lock();
    cv_.wait_for(lock, std::chrono::seconds(options_.interval_seconds),
                 [this] { return stopping_; });
  }
}

Status UsageMeter::MeterOnce(int64_t now) {
  Status first;
  ASSIGN_OR_RETURN(int64_t through, store_.MeterThrough());
  ASSIGN_OR_RETURN(
      std::vector<store::SandboxRecord> sandboxes,
      store_.SandboxesToMeter(through > kEventSlackMillis ? through - kEventSlackMillis : 0));
  std::set<std::string> touched;
  std::map<std::string, std::vector<store::SandboxRecord>> running;
  for (const auto& s : sandboxes) {
    Keep(first, MeterSandbox(s, now, touched).WithContext("sandbox " + s.id));
    touched.insert(s.org_id);
    if (s.status == "running") running[s.org_id].push_back(s);
  }
  ASSIGN_OR_RETURN(std::vector<store::VolumeRecord> volumes, store_.ListVolumes(""));
  for (const auto& v : volumes)
    Keep(first, MeterVolume(v, now, touched).WithContext("volume " + v.id));
  if (checkpoints_)
    for (const auto& c : checkpoints_())
      Keep(first, MeterCheckpoint(c, now, touched)
                      .WithContext("checkpoint '" + c.name + "' of sandbox " + c.sandbox_id));
  for (const auto& org : touched) Keep(first, Settle(org, now, running[org]));
  ASSIGN_OR_RETURN(std::vector<store::OrgRecord> orgs, store_.ListOrgs());
  for (const auto& org : orgs)
    Keep(first, WatchLimits(org.id, now).WithContext("limits of organization " + org.id));
  if (first.ok()) RETURN_IF_ERROR(store_.SetMeterThrough(now));
  return first;
}

Status UsageMeter::MeterSandbox(const store::SandboxRecord& sandbox, int64_t now,
                                std::set<std::string>& touched) {
  ASSIGN_OR_RETURN(int64_t from, store_.MeteredUntil(sandbox.id));
  ASSIGN_OR_RETURN(std::vector<store::EventRecord> events, store_.SandboxEvents(sandbox.id));
  if (from == 0) from = events.empty() ? sandbox.created_at : events.front().at;
  if (now <= from) return Status::Ok();
  int64_t millis = ComputeMillisBetween(events, from, now);
  if (millis == 0) return Status::Ok();
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_.PlanOf(sandbox.org_id));
  store::LedgerEntryRecord e;
  e.id = "use_" + sandbox.id + "_" + std::to_string(from);
  e.org_id = sandbox.org_id;
  e.kind = "usage";
  e.subject_kind = "sandbox";
  e.subject_id = sandbox.id;
  e.period_start = from;
  e.period_end = now;
  e.cpu_millis = int64_t{sandbox.config.cpu} * millis;
  e.memory_mib_millis = int64_t{sandbox.config.memory_mib} * millis;
  e.gpu_millis = int64_t{sandbox.config.gpus} * millis;
  e.amount_nanos = UsageCostNanos({e.cpu_millis, e.memory_mib_millis, 0, e.gpu_millis}, plan);
  e.reason = "compute of sandbox " + sandbox.id;
  e.created_at = now;
  RETURN_IF_ERROR(store_.AppendLedgerEntry(e).status());
  touched.insert(sandbox.org_id);
  return Status::Ok();
}

Status UsageMeter::MeterVolume(const store::VolumeRecord& volume, int64_t now,
                               std::set<std::string>& touched) {
  if (volume.status == "deleting") return Status::Ok();
  std::lock_guard lock(volume_mu_);
  ASSIGN_OR_RETURN(
      bool wrote, WriteVolumeEntry(volume, now, int64_t{options_.storage_interval_seconds} * 1000));
  if (wrote) touched.insert(volume.org_id);
  return Status::Ok();
}

Status UsageMeter::ChargeDeletedVolume(const store::VolumeRecord& volume, int64_t at) {
  std::lock_guard lock(volume_mu_);
  return WriteVolumeEntry(volume, at, 1)
      .status()
      .WithContext("charging deleted volume " + volume.id);
}

Result<bool> UsageMeter::WriteVolumeEntry(const store::VolumeRecord& volume, int64_t to,
                                          int64_t min_millis) {
  ASSIGN_OR_RETURN(int64_t from, store_.MeteredUntil(volume.id));
  if (from == 0) from = volume.created_at;
  if (to - from < min_millis) return false;
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_.PlanOf(volume.org_id));
  store::LedgerEntryRecord e;
  e.id = "use_" + volume.id + "_" + std::to_string(from);
  e.org_id = volume.org_id;
  e.kind = "usage";
  e.subject_kind = "volume";
  e.subject_id = volume.id;
  e.period_start = from;
  e.period_end = to;
  e.storage_mib_millis = volume.size_mib * (to - from);
  e.amount_nanos = UsageCostNanos({0, 0, e.storage_mib_millis}, plan);
  e.reason = "storage of volume " + volume.name;
  e.created_at = to;
  RETURN_IF_ERROR(store_.AppendLedgerEntry(e).status());
  return true;
}

Status UsageMeter::MeterCheckpoint(const MeteredCheckpoint& checkpoint, int64_t now,
                                   std::set<std::string>& touched) {
  ASSIGN_OR_RETURN(
      bool wrote,
      WriteCheckpointEntry(checkpoint, now, int64_t{options_.storage_interval_seconds} * 1000));
  if (wrote) touched.insert(checkpoint.org_id);
  return Status::Ok();
}

Status UsageMeter::ChargeDeletedCheckpoint(const MeteredCheckpoint& checkpoint, int64_t at) {
  return WriteCheckpointEntry(checkpoint, at, 1)
      .status()
      .WithContext("charging deleted checkpoint '" + checkpoint.name + "' of sandbox " +
                   checkpoint.sandbox_id);
}

Result<bool> UsageMeter::WriteCheckpointEntry(const MeteredCheckpoint& checkpoint, int64_t to,
                                              int64_t min_millis) {
  std::string subject = checkpoint.sandbox_id + "/" + checkpoint.name;
  ASSIGN_OR_RETURN(int64_t from, store_.MeteredUntil(subject));
  // A checkpoint deleted and taken again under its name is charged from the new one's making.
  from = std::max(from, checkpoint.created_at);
  if (to - from < min_millis) return false;
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_.PlanOf(checkpoint.org_id));
  store::LedgerEntryRecord e;
  e.id = "use_" + subject + "_" + std::to_string(from);
  e.org_id = checkpoint.org_id;
  e.kind = "usage";
  e.subject_kind = "checkpoint";
  e.subject_id = subject;
  e.period_start = from;
  e.period_end = to;
  int64_t mib = static_cast<int64_t>((checkpoint.bytes + (1 << 20) - 1) >> 20);
  e.storage_mib_millis = mib * (to - from);
  e.amount_nanos = UsageCostNanos({0, 0, e.storage_mib_millis}, plan);
  e.reason = "storage of checkpoint '" + checkpoint.name + "' of sandbox " + checkpoint.sandbox_id;
  e.created_at = to;
  RETURN_IF_ERROR(store_.AppendLedgerEntry(e).status());
  return true;
}

Status UsageMeter::WatchLimits(const std::string& org_id, int64_t now) {
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_.PlanOf(org_id));
  ASSIGN_OR_RETURN(store::OrgUsageRecord usage, store_.GetOrgUsage(org_id));
  auto observed = LimitObservations(plan, accounts_.SandboxLimitsOf(plan), usage, now);
  if (observed.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(auto recorded, store_.ObserveLimits(org_id, observed));
  for (const auto& a : recorded)
    spdlog::info("organization {} has reached {}% of its {} limit ({} of {})", org_id, a.percent,
                 a.limit, a.used, a.limit_value);
  if (!recorded.empty() && bus_) bus_->Notify({Change::Kind::kAccountAlert, org_id});
  return Status::Ok();
}

Status UsageMeter::Settle(const std::string& org_id, int64_t now,
                          const std::vector<store::SandboxRecord>& running) {
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_.PlanOf(org_id));
  if (!PlanHasPrices(plan)) return Status::Ok();
  ASSIGN_OR_RETURN(store::LedgerTotalsRecord totals, store_.LedgerTotals(org_id, now));
  if (totals.credits_nanos > 0) {
    // Compared in 128 bits: usage x 100 can pass int64 for large balances.
    __int128 used = __int128{totals.usage_nanos} * 100, credits = __int128{totals.credits_nanos};
    for (auto [kind, percent] : {std::pair{"balance_80", 80}, std::pair{"balance_100", 100}}) {
      if (used < credits * percent) continue;
      ASSIGN_OR_RETURN(bool recorded,
                       store_.RecordAccountAlert(
                           {0, org_id, kind, totals.credits_nanos, totals.usage_nanos, now}));
      if (!recorded) continue;
      spdlog::info("organization {} has used {}% of its credits ({} of {})", org_id, percent,
                   FormatNanoAmount(totals.usage_nanos), FormatNanoAmount(totals.credits_nanos));
      if (bus_) bus_->Notify({Change::Kind::kAccountAlert, org_id});
    }
  }
  if (totals.credits_nanos - totals.usage_nanos > 0) return Status::Ok();
  for (const auto& s : running) {
    spdlog::info("organization {}'s balance is used up: stopping sandbox {}", org_id, s.id);
    if (stop_) stop_(org_id, s.id);
  }
  return Status::Ok();
}

}  // namespace adapt::core

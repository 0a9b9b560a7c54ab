#include "core/sandbox_lifecycle.h"

#include <csignal>
#include <cstring>
#include <set>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/log.h"
#include "base/time.h"
#include "core/network_beside_launch.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_operations.h"
#include "core/sandbox_view.h"
#include "core/startup_plan.h"

namespace adapt::core {
namespace {

const std::vector<std::string> kLive = {"provisioning", "running"};
// Why a sandbox ended that has no error: its startup command ended (its commands with it).
const std::string kStartupEnded = "the sandbox's startup command ended, and the sandbox with it";

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Why a sandbox that the kernel's out-of-memory killer stopped ended, in one sentence.
std::string OutOfMemoryError(const store::SandboxRecord& r, const runtime::ShimState& st) {
  std::string limit = " of " + std::to_string(r.config.memory_mib) + " MiB (memoryMiB)";
  return "the sandbox ran out of memory: it reached its memory limit" + limit +
         " and the out-of-memory killer stopped it" +
         (st.signal ? " (" + SignalName(*st.signal) + ")" : std::string());
}

// A storage token made for the sandbox (object_attachment.cc) reaches its organization's
// objects: it ends with the sandbox, whichever way the sandbox is deleted, not when its own
// TTL runs out. Not revoked now (the store failed): the monitor's retry of the deletion, or
// the token's expiry, still ends it.
Status RevokeSandboxStorageTokens(store::Store& store, const store::SandboxRecord& r) {
  ASSIGN_OR_RETURN(auto tokens, store.ListStorageTokens(r.org_id));
  for (const auto& t : tokens) {
    if (t.sandbox_id != r.id || t.revoked_at != 0) continue;
    RETURN_IF_ERROR(store.RevokeStorageToken(r.org_id, t.id, NowMillis()));
  }
  return Status::Ok();
}

}  // namespace

SandboxLifecycle::SandboxLifecycle(store::Store& store, runtime::Runtime& runtime,
                                   const ImageCatalog& images, EventBus& events,
                                   net::NetworkManager* network)
    : store_(store), runtime_(runtime), images_(images), events_(events), network_(network) {}

Status SandboxLifecycle::Release(const std::string& id, bool keep_disk) {
  if (on_release_) on_release_(id);
  Status st = runtime_.Destroy(id, keep_disk);
  ADAPT_FAULT_POINT("sandbox.release.after_runtime");
  if (!st.ok() || !network_) return st;
  return network_->Detach(id);
}

std::shared_ptr<std::timed_mutex> SandboxLifecycle::LockFor(const std::string& id) {
  return locks_.For(id);
}

Result<SandboxLifecycle::SandboxHold> SandboxLifecycle::Hold(const std::string& id,
                                                             WhenBusy when_busy) {
  SandboxHold hold;
  hold.mutex = LockFor(id);
  hold.lock = std::unique_lock(*hold.mutex, std::defer_lock);
  if (when_busy == WhenBusy::kWait) {
    hold.lock.lock();
    return hold;
  }
  if (hold.lock.try_lock_for(kBusyWait)) return hold;
  std::string doing = "another stop, start, checkpoint, roll back or copy of it";
  if (auto open = store_.ListOpenOperations(id); open.ok() && !open->empty())
    doing = "its " + open->back().kind + " operation " + open->back().id;
  return SandboxBusy(id, doing);
}

Status SandboxLifecycle::Transition(const store::SandboxRecord& next,
                                    const std::vector<std::string>& expected,
                                    const store::SandboxLimits& limits) {
  store::SandboxRecord r = next;
  r.updated_at = NowMillis();
  RETURN_IF_ERROR(store_.UpdateSandbox(r, expected, limits));
  events_.Notify({Change::Kind::kSandboxStatus, r.id});
  return Status::Ok();
}

void SandboxLifecycle::Fail(store::SandboxRecord r, const std::string& error,
                            const std::vector<std::string>& expected) {
  spdlog::warn("sandbox {} failed: {}", r.id, error);
  r.status = "failed";
  r.error = error;
  if (r.termination_reason.empty()) r.termination_reason = "failed";
  if (r.config.startup) {
    r.result.error = error;
    if (!r.result.finished_at) r.result.finished_at = FormatRfc3339(NowMillis());
  }
  Status st = Transition(r, expected);
  // Endpoints go after the status changed, whether or not a release ran before: one made
  // while the sandbox was provisioning (the store allows it until this transition) would
  // otherwise outlive it.
  if (st.ok() && on_release_) on_release_(r.id);
  // A start that failed fails its restore operation.
  SettleSandboxOperations(store_, store_, r.id, 0);
  std::lock_guard lock(unrecorded_mu_);
  if (st.ok() || st.code() == Code::kConflict || st.code() == Code::kNotFound) {
    unrecorded_.erase(r.id);
  } else {
    spdlog::error("sandbox {}: recording its failure: {}; retrying", r.id, st.message());
    unrecorded_[r.id] = error;
  }
}

void SandboxLifecycle::RetryUnrecordedFailures() {
  std::map<std::string, std::string> pending;
  {
    std::lock_guard lock(unrecorded_mu_);
    pending = unrecorded_;
  }
  for (const auto& [id, error] : pending) {
    auto lock = LockFor(id);
    std::lock_guard guard(*lock);
    auto rec = store_.GetSandbox("", id);
    if (rec.ok() && rec->status == "provisioning") {
      Fail(*rec, error, {"provisioning"});
    } else {
      std::lock_guard map_lock(unrecorded_mu_);
      unrecorded_.erase(id);
    }
  }
}

Status SandboxLifecycle::AddDatabaseEnvironment(store::SandboxRecord& r) {
  if (!database_env_) return Unsupported("database", "databases are not available on this host");
  std::string gateway;
  ASSIGN_OR_RETURN(auto networks, store_.ListNetworks());
  for (const auto& n : networks) {
    if (n.sandbox_id == r.id) gateway = n.host_address;
  }
  if (gateway.empty()) return Internal("sandbox " + r.id + " has no recorded network");
  auto vars = database_env_(r.org_id, gateway);
  if (!vars.ok()) return vars.status();
  RETURN_IF_ERROR(store_.SetSandboxEnv(r.org_id, r.id, *vars));
  for (const auto& [k, v] : *vars) r.env[k] = v;
  return Status::Ok();
}

Result<PreparedLaunch> SandboxLifecycle::PrepareLaunch(store::SandboxRecord& r) {
  auto image = images_.ResolveOrPull(r.org_id, r.config.image);
  ADAPT_FAULT_POINT("sandbox.provision.after_image");
  if (!image.ok()) return image.status();
  auto process = PlanStartup(r.config.startup, *image, r.env);
  if (!process.ok()) return process.status();

  PreparedLaunch prepared;
  runtime::LaunchRequest& req = prepared.request;
  req.spec.id = r.id;
  req.spec.process = *process;
  req.spec.cpu = r.config.cpu;
  req.spec.memory_mib = static_cast<uint64_t>(r.config.memory_mib);
  req.spec.hostname = r.id;
  req.spec.security_profile = r.config.security_profile;
  req.image_rootfs = image->rootfs;
  req.image_layers = image->layers;
  req.disk_mib = static_cast<uint64_t>(r.config.disk_mib);
  req.network_none = r.config.network.egress == "none";
  // A durable sandbox's storage is bound at /workspace (an instant one gets a disposable one).
  if (r.config.storage) {
    if (!volumes_) return Internal("persistent storage is not available on this host");
    auto workspace = volumes_->Attach(r.org_id, *r.config.storage);
    if (!workspace.ok()) return workspace.status();
    req.spec.workspace_dir = *workspace;
  }
  if (!req.network_none) {
    if (!network_) return Internal("sandbox networking is not available on this host");
    prepared.network = std::make_shared<NetworkBesideLaunch>(*network_, r.id, r.config.network);
    // Within Launch, while `r` lives (the caller's); once per request, however often launched.
    auto done = std::make_shared<std::optional<Result<NetworkedSpec>>>();
    req.complete_spec = [this, &r, image = *image, network = prepared.network,
                         done](runtime::SandboxSpec& spec) -> Status {
      if (!*done) *done = CompleteNetworkedSpec(r, image, *network);
      if (!(*done)->ok()) return (*done)->status();
      const NetworkedSpec& added = (*done)->value();
      spec.netns_path = added.netns_path;
      spec.resolv_conf = added.resolv_conf;
      if (added.process) spec.process = *added.process;
      return Status::Ok();
    };
  }
  return prepared;
}

Result<NetworkedSpec> SandboxLifecycle::CompleteNetworkedSpec(store::SandboxRecord& r,
                                                              const Image& image,
                                                              const NetworkBesideLaunch& network) {
  ASSIGN_OR_RETURN(net::Attachment attached, network.Get());
  NetworkedSpec added{attached.netns_path, attached.resolv_conf, std::nullopt};
  if (!r.config.database) return added;
  // At every provisioning: the gateway address is this network's.
  Status st = AddDatabaseEnvironment(r);
  if (st.ok()) {
    auto process = PlanStartup(r.config.startup, image, r.env);
    if (process.ok())
      added.process = *process;
    else
      st = process.status();
  }
  if (!st.ok()) {
    IgnoreError(network_->Detach(r.id), "undoing an attach, whose sandbox fails");
    return st;
  }
  return added;
}

void SandboxLifecycle::Provision(const std::string& id) {
  RunGuarded(
      "provisioning sandbox " + id, [&] { ProvisionLocked(id); },
      [&](const std::string& error) {
        auto lock = LockFor(id);
        std::lock_guard guard(*lock);
        auto rec = store_.GetSandbox("", id);
        if (!rec.ok() || rec->status != "provisioning") return;
        WarnIfError(Release(id, true), "sandbox " + id + ": releasing after a failed launch");
        Fail(*rec, error, {"provisioning"});
      });
}

void SandboxLifecycle::ProvisionLocked(const std::string& id) {
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  auto rec = store_.GetSandbox("", id);
  if (!rec.ok() || rec->status != "provisioning") return;
  store::SandboxRecord r = *rec;

  // Pulls the image when it is not here yet; the sandbox stays provisioning meanwhile.
  ADAPT_FAULT_POINT("sandbox.provision.begin");
  auto prepared = PrepareLaunch(r);
  if (!prepared.ok()) return Fail(r, RecordMessage(prepared.status()), {"provisioning"});
  runtime::LaunchRequest& req = prepared->request;
  bool starting = ReadHibernation(r).phase == HibernationPhase::kStarting;
  Status launched = LaunchOrRestore(r, req);
  ADAPT_FAULT_POINT("sandbox.provision.after_launch");
  if (!launched.ok()) {
    prepared->WaitForNetwork();  // the release below removes it
    WarnIfError(Release(id, true), "sandbox " + id + ": releasing after a failed launch");
    return Fail(r, RecordMessage(launched), {"provisioning"});
  }
  auto obs = runtime_.Observe(id);
  if (!obs.ok()) {
    WarnIfError(Release(id, true), "sandbox " + id + ": releasing after a failed launch");
    return Fail(r, RecordMessage(obs.status()), {"provisioning"});
  }
  r.status = "running";
  if (r.config.startup) r.result.started_at = FormatRfc3339(obs->state.started_at);
  if (starting) WriteHibernation(r, Hibernation{});
  if (!Transition(r, {"provisioning"}).ok()) return;  // deleted meanwhile: delete tears down
  ADAPT_FAULT_POINT("sandbox.provision.after_running");
  // Restored: the checkpoint has served; a later stop writes a new one.
  if (starting) {
    SettleSandboxOperations(store_, store_, id, runtime_.CheckpointBytes(id));
    runtime_.DiscardCheckpoint(id);
  }
  if (obs->state.phase == runtime::ShimPhase::kExited) RecordExit(r, *obs);
}

void SandboxLifecycle::RecordExit(store::SandboxRecord r, const runtime::Observation& obs) {
  const auto& st = obs.state;
  bool interactive = !r.config.startup;
  int64_t finished = st.finished_at ? st.finished_at : NowMillis();
  if (st.phase != runtime::ShimPhase::kExited) {
    r.status = "failed";
    r.error = "the sandbox's monitor exited without an exit status; the outcome is unknown";
  } else if (interactive) {
    r.status = "failed";
    r.error = "the sandbox stopped unexpectedly" +
              (st.signal ? " (" + SignalName(*st.signal) + ")" : std::string());
  } else {
    bool ok = st.exit_code && *st.exit_code == 0 && !st.signal;
    r.status = ok ? "completed" : "failed";
  }
  // The host's OOM killer only ever kills the sandbox's own processes (its sentry).
  if (r.status == "failed" && st.phase == runtime::ShimPhase::kExited && st.oom_killed)
    r.error = OutOfMemoryError(r, st);
  r.termination_reason = r.status == "completed" ? "completed" : "failed";
  if (!interactive) {
    r.result.exit_code = st.exit_code ? std::optional<int64_t>(*st.exit_code) : std::nullopt;
    r.result.signal = st.signal ? std::optional<std::string>(SignalName(*st.signal)) : std::nullopt;
    r.result.finished_at = FormatRfc3339(finished);
    if (!r.error.empty()) r.result.error = r.error;
    ApplyOutput(r, obs.output, false, r.result);
  }
  if (!Transition(r, {"running"}).ok()) return;
  if (on_end_) on_end_(r.id, r.error.empty() ? kStartupEnded : r.error, true);
  Status st_destroy = Release(r.id, true);
  if (!st_destroy.ok())
    spdlog::warn("sandbox {}: releasing compute: {}", r.id, st_destroy.message());
}

void SandboxLifecycle::CheckRunning(const std::string& id) {
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  auto rec = store_.GetSandbox("", id);
  if (!rec.ok() || rec->status != "running") return;
  auto obs = runtime_.Observe(id);
  if (!obs.ok()) {
    runtime::Observation lost;
    return RecordExit(*rec, lost);
  }
  if (obs->state.phase == runtime::ShimPhase::kExited || !obs->monitor_alive)
    RecordExit(*rec, *obs);
}

Result<store::SandboxRecord> SandboxLifecycle::BeginDelete(const std::string& org_id,
                                                           const std::string& id,
                                                           const std::string& reason) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    ASSIGN_OR_RETURN(store::SandboxRecord r, store_.GetSandbox(org_id, id));
    if (r.status == "deleted" || r.status == "deleting") return r;
    std::string before = r.status;
    if (before == "provisioning" || before == "running" || before == "hibernated") {
      if (r.termination_reason.empty() || before != "provisioning") r.termination_reason = reason;
      // Keep what the workload printed: the record outlives the sandbox.
      if (before == "running" && r.config.startup) {
        auto obs = runtime_.Observe(id);
        if (obs.ok()) ApplyOutput(r, obs->output, false, r.result);
        if (!r.result.finished_at) r.result.finished_at = FormatRfc3339(NowMillis());
      }
    }
    r.status = "deleting";
    Status st = Transition(r, {before});
    if (st.ok() && on_end_ && (before == "provisioning" || before == "running"))
      on_end_(id,
              reason == "expired" ? "the sandbox expired (ttlSeconds) and was deleted"
                                  : "the sandbox was deleted",
              false);
    if (st.ok()) return r;
    if (st.code() != Code::kConflict) return st;
  }
  return Status(Code::kUnavailable, "sandbox " + id + " kept changing state; try again");
}

void SandboxLifecycle::FinishDelete(const std::string& id) {
  auto lock = LockFor(id);
  std::lock_guard guard(*lock);
  auto rec = store_.GetSandbox("", id);
  if (!rec.ok() || rec->status != "deleting") return;
  if (Status st = RevokeSandboxStorageTokens(store_, *rec); !st.ok()) {
    spdlog::error("sandbox {}: revoking its storage tokens: {}", id, st.message());
    return;  // stays deleting: the monitor retries
  }
  ADAPT_FAULT_POINT("sandbox.delete.before_release");
  Status st = Release(id, false);
  if (!st.ok()) {
    // Stay deleting: the monitor retries and a restart reconciles.
    spdlog::error("sandbox {}: deleting: {}", id, st.message());
    return;
  }
  store::SandboxRecord r = *rec;
  ADAPT_FAULT_POINT("sandbox.delete.after_release");
  r.status = "deleted";
  r.deleted_at = NowMillis();
  // Not recorded: it stays deleting, and the monitor's retry finishes it.
  WarnIfError(Transition(r, {"deleting"}), "sandbox " + id + ": recording its deletion");
  SettleSandboxOperations(store_, store_, id, 0);
}

void SandboxLifecycle::Reconcile() {
  auto records = store_.ListSandboxesWithStatus(
      {"provisioning", "running", "deleting", "completed", "failed", "unresolved", "hibernated"});
  if (!records.ok()) {
    spdlog::error("reconciling: {}", records.status().message());
    return;
  }
  std::set<std::string> known;
  for (const auto& r : *records) {
    known.insert(r.id);
    auto obs = runtime_.Observe(r.id);
    bool alive = obs.ok() && obs->monitor_alive;
    if (r.status == "hibernated" ||
        (r.status == "provisioning" && ReadHibernation(r).phase == HibernationPhase::kStarting)) {
      ReconcileHibernation(r, alive && obs->state.phase == runtime::ShimPhase::kRunning);
    } else if (r.status == "provisioning") {
      if (alive && obs->state.phase == runtime::ShimPhase::kRunning) {
        store::SandboxRecord next = r;
        next.status = "running";
        if (r.config.startup) next.result.started_at = FormatRfc3339(obs->state.started_at);
        WarnIfError(Transition(next, {"provisioning"}), "sandbox " + r.id + ": adopting it");
        spdlog::info("sandbox {}: adopted after restart", r.id);
      } else {
        WarnIfError(Release(r.id, true), "sandbox " + r.id + ": releasing it after a restart");
        Fail(r, "adaptd restarted while the sandbox was being provisioned", {"provisioning"});
      }
    } else if (r.status == "running" && !alive && KeepsWorkspace(r) &&
               ResumeInterruptedCheckpoint(r)) {
      // A named checkpoint or roll back was under way: resumed or kept stopped, not failed.
    } else if (r.status == "running") {
      CheckRunning(r.id);
      if (alive) spdlog::info("sandbox {}: adopted after restart", r.id);
    } else if (r.status == "deleting") {
      FinishDelete(r.id);
    } else {
      // Ended sandboxes keep only their disk: release anything a crash left behind.
      WarnIfError(Release(r.id, true), "sandbox " + r.id + ": releasing leftovers");
    }
  }
  for (const auto& id : runtime_.List()) {
    if (known.count(id) || !IsValidId(id, "sbx")) continue;
    auto rec = store_.GetSandbox("", id);
    if (rec.ok() && rec->status != "deleted") continue;
    spdlog::info("sandbox {}: removing leftovers", id);
    WarnIfError(Release(id, false), "sandbox " + id + ": removing leftovers");
  }
  // Every stop and start is finished or undone by now: their operations say which. This also
  // fails an operation whose transition a crash kept from being written.
  auto open = store_.ListAllOpenOperations();
  if (!open.ok()) return spdlog::error("reconciling operations: {}", open.status().message());
  std::set<std::string> settled;
  for (const auto& op : *open) {
    if (!settled.insert(op.sandbox_id).second) continue;
    SettleSandboxOperations(store_, store_, op.sandbox_id, runtime_.CheckpointBytes(op.sandbox_id));
  }
}

}  // namespace adapt::core

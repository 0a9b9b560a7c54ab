// AppService's deploys and rollbacks as operations (kinds "app.deploy" and "app.rollback", GET
// /v1/operations/{id}): the checks answer at once; the work (a deploy's build, packaging and
// rollout, a rollback's rollout) runs on deploys_ while the caller waits a while; one a crash
// cut short is settled at start-up.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/app_internal.h"
#include "core/app_service.h"
#include "core/operation.h"
#include "core/registration_gate.h"

namespace adapt::core {
namespace {

using app_internal::kAppLabel;

store::OperationRecord NewAppOperation(const char* kind, const std::string& org_id,
                                       const std::string& sandbox_id, const std::string& app_id) {
  store::OperationRecord op;
  op.id = NewId("op");
  op.org_id = org_id;
  op.kind = kind;
  op.sandbox_id = sandbox_id;
  op.app_id = app_id;
  op.phase = "Running";
  op.started_at = NowMillis();
  return op;
}

void FinishOperation(store::Store& store, store::OperationRecord op, const Status& outcome) {
  op.phase = outcome.ok() ? "Completed" : "Failed";
  op.error = outcome.ok() ? "" : RecordMessage(outcome);
  op.finished_at = NowMillis();
  if (Status st = store.PutOperation(op); !st.ok())
    spdlog::warn("app {}: finishing operation {}: {}", op.app_id, op.id, st.message());
}

Operation OperationView(const store::OperationRecord& r) {
  Operation op;
  op.id = r.id;
  op.kind = r.kind;
  op.phase = r.phase;
  op.sandbox_id = r.sandbox_id;
  op.app_id = r.app_id;
  if (!r.release_id.empty()) op.release_id = r.release_id;
  op.started_at = r.started_at;
  if (!r.error.empty()) op.error = r.error;
  if (r.finished_at) op.finished_at = r.finished_at;
  return op;
}

}  // namespace

// Where an operation's outcome meets the callers that wait for it: the request that started
// it, and replays of that request under its Idempotency-Key.
struct AppService::OperationOutcome {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  Result<App> app = Status(Code::kInternal, "the operation has not ended");
};

Result<AppDeployment> AppService::Deploy(const Principal& who, const DeployApp& req,
                                         std::chrono::milliseconds wait, const FieldNames& n,
                                         const std::optional<store::IdempotencyKey>& idempotency) {
  RETURN_IF_ERROR(RequireRegistered(who, "deploy an app"));
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "app_deploy", idempotency));
  if (claim) {
    // Before the checks: the source sandbox may have stopped since the first request.
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, store_.FindIdempotentCreate(*claim));
    if (earlier) return DeployedEarlier(who, *earlier, wait);
  }
  RETURN_IF_ERROR(CheckDeploy(req, n));
  RETURN_IF_ERROR(CheckReplicaLimit(who.org_id, req.replicas, n));
  if (!IsValidId(req.sandbox_id, "sbx"))
    return NotFound("sandbox " + req.sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord source, store_.GetSandbox(who.org_id, req.sandbox_id));
  if (source.status != "running")
    return Conflict("sandbox " + source.id + " is " + source.status +
                    "; an app deploys from a running sandbox");
  if (source.config.network.egress == "none")
    return Conflict("sandbox " + source.id +
                    " has network egress \"none\": its replicas would have no network to serve "
                    "on");
  if (source.config.labels.count(kAppLabel))
    return Conflict("sandbox " + source.id + " is a replica of app " +
                    source.config.labels.at(kAppLabel) + "; deploy from its source sandbox");
  if (!req.secrets.empty()) {
    if (!secrets_) return Unsupported(n("secrets"), "secrets are not supported on this host");
    // Only that each exists: every replica captures the values when it is created.
    RETURN_IF_ERROR(secrets_->Capture(who.org_id, req.secrets, n("secrets")).status());
  }
  const std::string name = req.name.empty() ? "app" : req.name;
  // Before the name is looked up, until the deploy ends: two first deploys of one name would
  // each find no app and make one.
  ASSIGN_OR_RETURN(
      std::shared_ptr<void> naming,
      Claim(deploying_names_, who.org_id + "/" + name,
            "app " + name + " is being deployed or rolled back; " + "try again once that ends"));
  std::optional<store::AppRecord> existing;
  ASSIGN_OR_RETURN(auto apps, store_.ListApps(who.org_id));
  for (const auto& a : apps)
    if (a.name == name) existing = a;
  store::AppRecord app;
  if (existing) {
    app = *existing;
    std::lock_guard lock(mu_);
    if (deploying_.count(app.id))
      return Conflict("app " + app.name + " is being deployed or rolled back; " +
                      "try again once that ends");
  } else {
    app.id = NewId("app");
    app.org_id = who.org_id;
    app.name = name;
    app.source_sandbox_id = source.id;
    app.hostname = name + "-" + NewId("h").substr(2, 8) + "." + options_.domain;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeOperationPlace(who.org_id, "deploy"));
  store::OperationRecord op = NewAppOperation(kAppDeployOperation, who.org_id, source.id, app.id);
  if (!claim) {
    RETURN_IF_ERROR(store_.PutOperation(op).WithContext("recording the deploy operation"));
  } else {
    // The key and the operation in one transaction: a crash keeps both (the operation is
    // then settled at start-up, and a replay answers it) or neither.
    ASSIGN_OR_RETURN(
        store::IdempotentCreate made, store_.CreateOnce(*claim, [&]() -> Result<std::string> {
          RETURN_IF_ERROR(store_.PutOperation(op).WithContext("recording the deploy operation"));
          return op.id;
        }));
    if (made.replayed) return DeployedEarlier(who, made.object_id, wait);
  }
  if (!existing) app.created_at = NowMillis();  // after the operation's start (SettleOperations)
  return RunOperation(
      op, wait,
      [this, who, req, n, app, existing = existing.has_value(), op,
       naming = std::move(naming)]() mutable {
        auto deployed = RunDeploy(who, req, n, app, existing, op);
        // Given back before the operation's end is recorded: a deploy of the name sent once
        // this one is seen to have ended must not find the name still claimed.
        naming.reset();
        return deployed;
      },
      std::move(place));
}

bool AppService::AwaitOutcome(const std::string& org_id, OperationOutcome& outcome,
                              std::chrono::milliseconds wait) {
  // One organization's waits hold at most its share of the API's workers: a deploy may wait
  // 600 s, and its rollout is the organization's to make slow.
  std::shared_ptr<void> place = waiting_.TryTake(org_id);
  if (!place) wait = std::chrono::milliseconds(0);
  // In slices: BeginStop does not know the outcomes waited on, and a stop must not wait for
  // a deploy's whole waitSeconds (the API server's stop waits for this handler).
  const auto until = std::chrono::steady_clock::now() + wait;
  std::unique_lock lock(outcome.mu);
  while (!outcome.done && !stop_requested_) {
    auto now = std::chrono::steady_clock::now();
    if (now >= until) break;
    outcome.done_cv.wait_for(lock, std::min<std::chrono::steady_clock::duration>(
                                       until - now, std::chrono::milliseconds(200)));
  }
  return outcome.done;
}

Result<AppDeployment> AppService::DeployedEarlier(const Principal& who,
                                                  const std::string& operation_id,
                                                  std::chrono::milliseconds wait) {
  // Still running in this adaptd: the replay waits as the first request did (one that a
  // crash cut short was settled at start-up and is answered at once).
  std::shared_ptr<OperationOutcome> running;
  {
    std::lock_guard lock(mu_);
    if (auto it = outcomes_.find(operation_id); it != outcomes_.end()) running = it->second;
  }
  if (running) AwaitOutcome(who.org_id, *running, wait);
  ASSIGN_OR_RETURN(store::OperationRecord op, store_.GetOperation(who.org_id, operation_id));
  if (op.phase != "Completed") return AppDeployment{OperationView(op), std::nullopt};
  auto app = store_.GetApp(who.org_id, op.app_id);
  if (!app.ok() && app.status().code() == Code::kNotFound)
    return store::IdempotentObjectGone("app " + op.app_id);
  if (!app.ok()) return app.status();
  return AppDeployment{OperationView(op), View(*app)};
}

Result<AppDeployment> AppService::Rollback(const Principal& who, const std::string& id,
                                           const std::string& release_id,
                                           std::chrono::milliseconds wait, const FieldNames& n) {
  RETURN_IF_ERROR(RequireRegistered(who, "roll an app back"));
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  ASSIGN_OR_RETURN(auto releases, store_.ListAppReleases(app.id));
  std::optional<store::AppReleaseRecord> target;
  bool after_current = false;  // releases are newest first
  for (const auto& r : releases) {
    if (release_id.empty() ? after_current : r.id == release_id) {
      target = r;
      break;
    }
    after_current = after_current || r.id == app.release_id;
  }
  if (!target)
    return release_id.empty()
               ? Conflict("app " + app.name + " has no release before " + app.release_id)
               : Status(Code::kNotFound,
                        "app " + app.name + " has no release " + release_id.substr(0, 64) +
                            " (an app keeps the release it serves and its " +
                            std::to_string(kMaxAppReleases - 1) + " newest others)",
                        n("release_id"));
  ASSIGN_OR_RETURN(std::shared_ptr<void> place, TakeOperationPlace(who.org_id, "rollback"));
  // Claimed now, not when the work starts: a second rollback or a scale sent after this
  // answered is refused until the rollout ends.
  ASSIGN_OR_RETURN(std::shared_ptr<void> claim, ClaimRollout(app));
  store::OperationRecord op =
      NewAppOperation(kAppRollbackOperation, who.org_id, app.source_sandbox_id, app.id);
  op.release_id = target->id;
  RETURN_IF_ERROR(store_.PutOperation(op).WithContext("recording the rollback operation"));
  return RunOperation(
      op, wait,
      [this, who, id, release = *target, claim = std::move(claim)]() mutable -> Result<App> {
        // As the app is now (a scale may have come before the claim); the claim is dropped before
        // the operation ends.
        auto app = store_.GetApp(who.org_id, id);
        if (!app.ok() || app->release_id == release.id) {
          claim.reset();
          if (!app.ok()) return app.status();
          return View(*app);
        }
        return Rollout(who, *app, /*existing=*/true, release, std::move(claim));
      },
      std::move(place));
}

Result<std::shared_ptr<void>> AppService::TakeOperationPlace(const std::string& org_id,
                                                             const char* what) {
  std::shared_ptr<void> place = operations_.TryTake(org_id);
  if (!place)
    return Status(Code::kResourceExhausted,
                  std::string("the organization has ") + std::to_string(kMaxAppOperationsPerOrg) +
                      " app deploys or rollbacks running, the most it may; try the " + what +
                      " again once one ends");
  return place;
}

Result<AppDeployment> AppService::RunOperation(store::OperationRecord op,
                                               std::chrono::milliseconds wait,
                                               std::function<Result<App>()> work,
                                               std::shared_ptr<void> place) {
  auto outcome = std::make_shared<OperationOutcome>();
  {
    std::lock_guard lock(mu_);
    outcomes_[op.id] = outcome;
  }
  boost::asio::post(deploys_,
                    Guarded("app operation " + op.id, [this, op, work = std::move(work), outcome,
                                                       place = std::move(place)]() mutable {
                      // An exception in the work fails the operation with it, as an error it
                      // returned would.
                      Result<App> result = Internal("the operation did not run");
                      RunGuarded(
                          "app operation " + op.id, [&] { result = work(); },
                          [&](const std::string& error) { result = Internal(error); });
                      // A deploy's work recorded its release on the operation: read it back before
                      // finishing. A throw here still ends the wait below: the request and its
                      // replays are answered the error, not kept their full waitSeconds.
                      RunGuarded(
                          "finishing app operation " + op.id,
                          [&] {
                            if (auto now = store_.GetOperation(op.org_id, op.id); now.ok())
                              op = *now;
                            FinishOperation(store_, op, result.status());
                          },
                          [&](const std::string& error) { result = Internal(error); });
                      {
                        std::lock_guard lock(mu_);
                        outcomes_.erase(op.id);
                      }
                      // Given back before the answer: a request the answer lets send the
                      // next deploy finds its place free.
                      place.reset();
                      std::lock_guard lock(outcome->mu);
                      outcome->app = std::move(result);
                      outcome->done = true;
                      outcome->done_cv.notify_all();
                    }));
  const bool done = AwaitOutcome(op.org_id, *outcome, wait);
  if (auto now = store_.GetOperation(op.org_id, op.id); now.ok()) op = *now;
  if (!done) return AppDeployment{OperationView(op), std::nullopt};
  if (!outcome->app.ok()) return outcome->app.status();
  return AppDeployment{OperationView(op), *outcome->app};
}

Result<App> AppService::RunDeploy(const Principal& who, const DeployApp& req, const FieldNames& n,
                                  store::AppRecord app, bool existing, store::OperationRecord op) {
  ASSIGN_OR_RETURN(store::SandboxRecord source, store_.GetSandbox(who.org_id, req.sandbox_id));
  ASSIGN_OR_RETURN(store::AppReleaseRecord release, Package(who, source, req, n));
  release.app_id = app.id;
  // Content-addressed: the same bytes deploy as the same release, kept once.
  if (auto old = store_.ListAppReleases(app.id); old.ok()) {
    for (const auto& r : *old) {
      if (r.sha256 == release.sha256 && r.start_command == release.start_command &&
          r.port == release.port && r.env == release.env && r.secrets == release.secrets &&
          r.readiness_path == release.readiness_path &&
          r.readiness_timeout_seconds == release.readiness_timeout_seconds &&
          r.readiness_period_seconds == release.readiness_period_seconds &&
          r.readiness_failure_threshold == release.readiness_failure_threshold) {
        objects_.RemoveBlob(release.blob);
        release = r;
        break;
      }
    }
  }
  // The same bytes in another app of the organization: one stored copy for both (a deleted
  // app's release is kept while another app's uses its blob). Under app_mu_, as a delete
  // is, so that the blob is not retired between finding it and recording it here.
  std::unique_lock apps_lock(app_mu_);
  // Deleted while its release was built: a release recorded now would outlive it, and the
  // rollout's write of the app would bring it back.
  if (existing && store_.GetApp(who.org_id, app.id).status().code() == Code::kNotFound) {
    objects_.RemoveBlob(release.blob);
    return NotFound("app " + app.name + " was deleted while its release was built");
  }
  bool own_blob = true;
  const bool recorded = store_.GetAppRelease(app.id, release.id).ok();
  if (!recorded) {
    if (auto apps = store_.ListApps(who.org_id); apps.ok()) {
      for (const auto& a : *apps) {
        if (a.id == app.id || !own_blob) continue;
        auto others = store_.ListAppReleases(a.id);
        if (!others.ok()) continue;
        for (const auto& r : *others) {
          if (r.sha256 != release.sha256 || r.size != release.size) continue;
          objects_.RemoveBlob(release.blob);
          release.blob = r.blob;
          own_blob = false;
          break;
        }
      }
    }
  }
  // The app keeps kMaxAppReleases: the one it serves, this one and the newest others. Pruned
  // before this one is counted, so that what they free makes room for it.
  PruneReleases(app.id, recorded ? release.id : "",
                recorded ? kMaxAppReleases : kMaxAppReleases - 1);
  if (!recorded) {
    auto quota = objects_.QuotaForStored(who.org_id);
    Status st = quota.ok() ? store_.PutAppRelease(release, *quota) : quota.status();
    if (!st.ok()) {
      if (own_blob) objects_.RemoveBlob(release.blob);
      return st;
    }
  }
  apps_lock.unlock();
  op.release_id = release.id;
  RETURN_IF_ERROR(store_.PutOperation(op).WithContext("recording the deploy's release"));
  app.replicas = static_cast<int>(req.replicas);
  return Rollout(who, app, existing, release);
}

void AppService::PruneReleases(const std::string& app_id, const std::string& keep_id,
                               size_t max_releases) {
  // The rows go first, in their transaction: a crash before the blobs are removed leaves
  // them unreferenced, and ObjectStore::Init removes them at the next start.
  auto blobs = store_.PruneAppReleases(app_id, keep_id, max_releases);
  if (!blobs.ok())
    return spdlog::warn("app {}: pruning old releases: {}", app_id, blobs.status().message());
  RetireReleases(*blobs, std::chrono::seconds(0));
}

void AppService::SettleOperations() {
  auto open = store_.ListAllOpenOperations();
  if (!open.ok()) return spdlog::error("settling app operations: {}", open.status().message());
  for (const auto& op : *open) {
    const bool rollback = op.kind == kAppRollbackOperation;
    if (op.kind != kAppDeployOperation && !rollback) continue;
    const std::string what = rollback ? "rollback" : "deploy";
    const std::string cut = "adaptd restarted during the " + what;
    Status outcome = Status::Ok();
    auto app = store_.GetApp(op.org_id, op.app_id);
    if (!app.ok()) {
      outcome = Status(Code::kUnavailable, cut + (rollback ? "; app " + op.app_id + " is gone"
                                                           : "; nothing was deployed"));
      // A first deploy cut short after recording its release, before writing its app: the
      // release (and its blob) would be kept by nothing that could ever delete it.
      if (!rollback && app.status().code() == Code::kNotFound) {
        auto blobs = store_.DeleteReleasesOfMissingApp(op.app_id);
        if (blobs.ok())
          RetireReleases(*blobs, std::chrono::seconds(0));
        else
          spdlog::warn("app {}: removing the releases of a deploy cut short: {}", op.app_id,
                       blobs.status().message());
      }
    } else if (op.release_id.empty() || app->release_id != op.release_id) {
      outcome = Status(Code::kUnavailable,
                       cut + "; app " + app->name + " keeps release " + app->release_id);
    } else if (!rollback && app->created_at >= op.started_at) {
      // This deploy made the app: it stays if one of its replicas was ready, as a deploy
      // that ran to its end would have answered.
      bool ready = false;
      if (auto replicas = store_.ListAppReplicas(app->id); replicas.ok())
        for (const auto& r : *replicas) ready = ready || r.state == "ready";
      if (!ready) {
        outcome = Status(Code::kUnavailable, cut + "; no replica was ready, nothing was deployed");
        auto replicas = store_.ListAppReplicas(app->id);
        auto blobs = store_.DeleteApp(app->org_id, app->id);
        if (replicas.ok())
          for (const auto& r : *replicas) RemoveReplica(r);
        if (blobs.ok()) RetireReleases(*blobs, std::chrono::seconds(0));
        if (on_removed_) on_removed_(app->hostname);
      }
    }
    // Otherwise the app records this operation's release: it rolled out (the reconcile that
    // follows removes the other releases' replicas and tops the app up). When it does not,
    // the same reconcile removes the replicas the cut-short rollout started.
    spdlog::info("app {}: {} {} {} at start-up{}", op.app_id, what, op.id,
                 outcome.ok() ? "completed" : "failed",
                 outcome.ok() ? "" : " (" + outcome.message() + ")");
    FinishOperation(store_, op, outcome);
    if (app.ok())
      Emit(op.org_id, op.app_id, outcome.ok() ? "app.deployed" : "app.deploy_failed", "",
           "release " + op.release_id + ": " + (outcome.ok() ? "serving" : outcome.message()));
  }
}

}  // namespace adapt::core

// AppService's deploys as operations (kind "app.deploy", GET /v1/operations/{id}): the checks
// answer at once; the build, the packaging and the rollout run on deploys_ while the caller
// waits a while; a deploy a crash cut short is settled at start-up.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

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

// Where a deploy's outcome meets the caller that waits for it.
struct DeployOutcome {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  Result<App> app = Status(Code::kInternal, "the deploy has not ended");
};

void FinishOperation(store::Store& store, store::OperationRecord op, const Status& outcome) {
  op.phase = outcome.ok() ? "Completed" : "Failed";
  op.error = outcome.ok() ? "" : outcome.message();
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

Result<AppDeployment> AppService::Deploy(const Principal& who, const DeployApp& req,
                                         std::chrono::milliseconds wait, const FieldNames& n) {
  RETURN_IF_ERROR(RequireRegistered(who, "deploy an app"));
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
  std::optional<store::AppRecord> existing;
  ASSIGN_OR_RETURN(auto apps, store_.ListApps(who.org_id));
  for (const auto& a : apps)
    if (a.name == name) existing = a;
  store::AppRecord app;
  if (existing) {
    app = *existing;
    std::lock_guard lock(mu_);
    if (deploying_.count(app.id))
      return Conflict("app " + app.name + " is being deployed; try again once that ends");
  } else {
    app.id = NewId("app");
    app.org_id = who.org_id;
    app.name = name;
    app.source_sandbox_id = source.id;
    app.hostname = name + "-" + NewId("h").substr(2, 8) + "." + options_.domain;
  }
  store::OperationRecord op;
  op.id = NewId("op");
  op.org_id = who.org_id;
  op.kind = kAppDeployOperation;
  op.sandbox_id = source.id;
  op.app_id = app.id;
  op.phase = "Running";
  op.started_at = NowMillis();
  RETURN_IF_ERROR(store_.PutOperation(op).WithContext("recording the deploy operation"));
  if (!existing) app.created_at = NowMillis();  // after the operation's start (SettleDeploys)

  auto outcome = std::make_shared<DeployOutcome>();
  boost::asio::post(
      deploys_, [this, who, req, n, app, existing = existing.has_value(), op, outcome]() mutable {
        Result<App> result = RunDeploy(who, req, n, app, existing, op);
        // RunDeploy recorded the release on the operation: read it back before finishing.
        if (auto now = store_.GetOperation(op.org_id, op.id); now.ok()) op = *now;
        FinishOperation(store_, op, result.status());
        std::lock_guard lock(outcome->mu);
        outcome->app = std::move(result);
        outcome->done = true;
        outcome->done_cv.notify_all();
      });
  std::unique_lock lock(outcome->mu);
  outcome->done_cv.wait_for(lock, wait, [&] { return outcome->done; });
  const bool done = outcome->done;
  lock.unlock();
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
          r.readiness_timeout_seconds == release.readiness_timeout_seconds) {
        objects_.RemoveBlob(release.blob);
        release = r;
        break;
      }
    }
  }
  if (!store_.GetAppRelease(app.id, release.id).ok()) {
    if (Status st = store_.PutAppRelease(release); !st.ok()) {
      objects_.RemoveBlob(release.blob);
      return st;
    }
  }
  op.release_id = release.id;
  RETURN_IF_ERROR(store_.PutOperation(op).WithContext("recording the deploy's release"));
  app.replicas = static_cast<int>(req.replicas);
  return Rollout(who, app, existing, release);
}

void AppService::SettleDeploys() {
  auto open = store_.ListAllOpenOperations();
  if (!open.ok()) return spdlog::error("settling app deploys: {}", open.status().message());
  for (const auto& op : *open) {
    if (op.kind != kAppDeployOperation) continue;
    const std::string cut = "adaptd restarted during the deploy";
    Status outcome = Status::Ok();
    auto app = store_.GetApp(op.org_id, op.app_id);
    if (!app.ok()) {
      outcome = Status(Code::kUnavailable, cut + "; nothing was deployed");
    } else if (op.release_id.empty() || app->release_id != op.release_id) {
      outcome = Status(Code::kUnavailable,
                       cut + "; app " + app->name + " keeps release " + app->release_id);
    } else if (app->created_at >= op.started_at) {
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
        if (blobs.ok())
          for (const auto& b : *blobs) objects_.RemoveBlob(b);
        if (on_removed_) on_removed_(app->hostname);
      }
    }
    // Otherwise the app records this deploy's release: it rolled out (the reconcile that
    // follows removes the previous release's replicas and tops the app up).
    spdlog::info("app {}: deploy {} {} at start-up{}", op.app_id, op.id,
                 outcome.ok() ? "completed" : "failed",
                 outcome.ok() ? "" : " (" + outcome.message() + ")");
    FinishOperation(store_, op, outcome);
    if (app.ok())
      Emit(op.org_id, op.app_id, outcome.ok() ? "app.deployed" : "app.deploy_failed", "",
           "release " + op.release_id + ": " + (outcome.ok() ? "serving" : outcome.message()));
  }
}

}  // namespace adapt::core

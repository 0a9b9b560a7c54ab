#include "core/app_service.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <future>
#include <set>

#include "agent/release_stream.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/app_internal.h"
#include "core/registration_gate.h"
#include "core/release_archive.h"
#include "core/secret_name.h"

namespace adapt::core {
namespace {

using app_internal::BlockUnlessStopping;
using app_internal::kAppLabel;
constexpr size_t kMaxBuildOutput = 16 * 1024;

Status CheckName(const std::string& name) {
  if (name.empty() || name.size() > 30)
    return InvalidArgument("name", "name must be 1 to 30 characters");
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return InvalidArgument("name", "name may hold only a-z, 0-9 and '-'");
  if (name.front() == '-' || name.back() == '-')
    return InvalidArgument("name", "name must not start or end with '-'");
  return Status::Ok();
}

AppReleaseView ReleaseView(const store::AppReleaseRecord& r) {
  return {r.id,
          r.sha256,
          r.size,
          r.source_path,
          r.build_command,
          r.build_path,
          r.build_exit_code,
          r.build_output,
          r.start_command,
          r.port,
          r.created_at,
          r.readiness_path,
          r.readiness_timeout_seconds,
          r.secrets,
          r.readiness_period_seconds,
          r.readiness_failure_threshold};
}

Status CheckAbsolute(const std::string& path, const std::string& field) {
  if (path.empty() || path.front() != '/')
    return InvalidArgument(field, field + " must be an absolute path");
  RETURN_IF_ERROR(ValidateFilePath(path, field));
  return Status::Ok();
}

}  // namespace

AppService::AppService(store::Store& store, SandboxService& sandboxes, CommandService& commands,
                       FileService& files, storage::ObjectStore& objects,
                       net::NetworkManager& network, AppOptions options)
    : store_(store),
      sandboxes_(sandboxes),
      commands_(commands),
      files_(files),
      objects_(objects),
      network_(network),
      options_(std::move(options)) {}

AppService::~AppService() { Stop(); }

void AppService::SetPorts(uint16_t http_port, uint16_t https_port) {
  options_.http_port = http_port;
  options_.https_port = https_port;
}

App AppService::View(const store::AppRecord& a) {
  App v;
  v.id = a.id;
  v.name = a.name;
  v.hostname = a.hostname;
  v.url = "https://" + a.hostname +
          (options_.https_port == 443 ? "" : ":" + std::to_string(options_.https_port));
  v.http_url = "http://" + a.hostname +
               (options_.http_port == 80 ? "" : ":" + std::to_string(options_.http_port));
  v.source_sandbox_id = a.source_sandbox_id;
  v.release_id = a.release_id;
  v.replicas = a.replicas;
  v.created_at_ms = a.created_at;
  v.updated_at_ms = a.updated_at;
  std::string unready;  // a replica that lost its traffic: which, and what its check got
  if (auto replicas = store_.ListAppReplicas(a.id); replicas.ok()) {
    for (const auto& r : *replicas) {
      v.replica_list.push_back({r.sandbox_id, r.release_id, r.state});
      if (r.state == "ready") ++v.ready_replicas;
      if (r.state == "unready" && r.check_failures > 0 && unready.empty())
        unready = "replica " + r.sandbox_id + " failed its readiness check " +
                  std::to_string(r.check_failures) + " times in a row (" + r.check_failure +
                  "); it takes no traffic until a check passes";
    }
  }
  if (auto r = store_.GetAppRelease(a.id, a.release_id); r.ok()) v.release = ReleaseView(*r);
  std::optional<Trouble> trouble;
  {
    std::lock_guard lock(mu_);
    if (auto t = trouble_.find(a.id); t != trouble_.end()) trouble = t->second;
  }
  if (trouble) v.restarts = trouble->failures;
  if (a.replicas == 0) {
    v.status = "stopped";
  } else if (v.ready_replicas >= a.replicas) {
    v.status = "ready";
  } else if (!unready.empty() && !trouble) {
    v.status = "failing";
    v.status_message = unready;
  } else if (trouble) {
    v.status = "failing";
    auto wait = std::chrono::duration_cast<std::chrono::seconds>(trouble->retry_at -
                                                                 std::chrono::steady_clock::now());
    v.status_message = trouble->why + "; " + std::to_string(trouble->failures) +
                       " failed in a row, the next starts " +
                       (wait.count() > 0 ? "in " + std::to_string(wait.count()) + " s" : "now");
  } else {
    v.status = "starting";
  }
  return v;
}

Status AppService::CheckDeploy(const DeployApp& req, const FieldNames& n) const {
  RETURN_IF_ERROR(CheckName(req.name.empty() ? "app" : req.name));
  RETURN_IF_ERROR(CheckAbsolute(req.source_path, n("source_path")));
  if (!req.build_path.empty()) RETURN_IF_ERROR(CheckAbsolute(req.build_path, n("build_path")));
  if (req.start_command.empty() || req.start_command.size() > 4096)
    return InvalidArgument(n("start_command"), n("start_command") + " must be 1 to 4096 bytes");
  if (req.port < 1 || req.port > 65535)
    return InvalidArgument(n("port"), n("port") + " must be an integer from 1 to 65535");
  if (req.replicas < 0 || req.replicas > options_.max_replicas)
    return InvalidArgument(n("replicas"), n("replicas") + " must be from 0 to " +
                                              std::to_string(options_.max_replicas));
  if (req.build_command.size() > 4096)
    return InvalidArgument(n("build_command"), n("build_command") + " must be at most 4096 bytes");
  if (req.build_timeout_seconds < 1 || req.build_timeout_seconds > 3600)
    return InvalidArgument("build_timeout_seconds",
                           n("build_timeout_seconds") + " must be from 1 to 3600");
  if (!req.readiness_path.empty()) {
    bool ok = req.readiness_path.front() == '/' && req.readiness_path.size() <= 1024;
    for (unsigned char c : req.readiness_path) ok = ok && c > 0x20 && c < 0x7f;
    if (!ok)
      return InvalidArgument(n("readiness_path"),
                             n("readiness_path") +
                                 " must start with '/' and be at most 1024 printable ASCII "
                                 "characters without spaces");
  }
  if (req.readiness_timeout_seconds < 1 || req.readiness_timeout_seconds > 600)
    return InvalidArgument(n("readiness_timeout_seconds"),
                           n("readiness_timeout_seconds") + " must be from 1 to 600");
  if (req.readiness_period_seconds < 1 || req.readiness_period_seconds > 300)
    return InvalidArgument(n("readiness_period_seconds"),
                           n("readiness_period_seconds") + " must be from 1 to 300");
  if (req.readiness_failure_threshold < 1 || req.readiness_failure_threshold > 10)
    return InvalidArgument(n("readiness_failure_threshold"),
                           n("readiness_failure_threshold") + " must be from 1 to 10");
  if (req.secrets.size() > kMaxSandboxSecrets)
    return InvalidArgument(n("secrets"), "at most " + std::to_string(kMaxSandboxSecrets) + " " +
                                             n("secrets") + " can be attached to an app");
  for (size_t i = 0; i < req.secrets.size(); ++i) {
    const std::string field = n("secrets") + "[" + std::to_string(i) + "]";
    RETURN_IF_ERROR(ValidateSecretName(req.secrets[i], field));
    for (size_t j = 0; j < i; ++j)
      if (req.secrets[j] == req.secrets[i])
        return InvalidArgument(field, "secret '" + req.secrets[i] + "' is listed twice");
  }
  if (req.env.size() > 64)
    return InvalidArgument(n("env"), "at most 64 " + n("env") + " variables are allowed");
  for (const auto& [k, v] : req.env) {
    bool ok = !k.empty() && k.size() <= 128 && !(k[0] >= '0' && k[0] <= '9');
    for (char c : k)
      ok = ok &&
           ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    if (!ok)
      return InvalidArgument(n("env"), n("env") + " name '" + k.substr(0, 128) + "' is not valid");
    if (v.size() > 32768 || v.find('\0') != std::string::npos)
      return InvalidArgument(n("env") + "." + k, "env values must be at most 32 KiB, without NUL");
  }
  return Status::Ok();
}

Status AppService::CheckReplicaLimit(const std::string& org_id, int64_t replicas,
                                     const FieldNames& n) const {
  if (!accounts_) return Status::Ok();
  ASSIGN_OR_RETURN(store::PlanRecord plan, accounts_->PlanOf(org_id));
  if (!plan.app_replicas || replicas <= *plan.app_replicas) return Status::Ok();
  return Status(
      Code::kResourceExhausted,
      "the plan allows " + std::to_string(*plan.app_replicas) +
          " replicas per app (limit app_replicas = " + std::to_string(*plan.app_replicas) +
          "); ask for fewer " + n("replicas") + ", or ask the operator for a larger plan",
      n("replicas"));
}

Status AppService::Build(const Principal& who, const DeployApp& req,
                         store::AppReleaseRecord& release, const FieldNames& n) {
  release.build_command = req.build_command;
  release.build_path = req.build_path.empty() ? req.source_path : req.build_path;
  if (req.build_command.empty()) return Status::Ok();
  RunCommandRequest command;
  command.argv = {"/bin/sh", "-c", req.build_command};
  command.cwd = release.build_path;
  command.timeout_seconds = req.build_timeout_seconds;
  command.wait_seconds = 0;
  auto started = commands_.Start(who, req.sandbox_id, std::move(command));
  if (!started.ok())
    return Status(started.status().code(),
                  "starting " + n("build_command") + ": " + started.status().message(),
                  n("build_command"));
  // Stop() joins the deploys: one must not wait out a long build then.
  const bool ended = BlockUnlessStopping(
      [&](Waiter::Done done) {
        commands_.AwaitEnd(
            started->id,
            Waiter::Clock::now() + std::chrono::seconds(req.build_timeout_seconds + 30),
            std::move(done));
      },
      [this] {
        std::lock_guard lock(mu_);
        return stopping_;
      });
  if (!ended)
    return Status(Code::kUnavailable,
                  "adaptd stopped while " + n("build_command") +
                      " ran; nothing was deployed. Deploy again once it is back");
  ASSIGN_OR_RETURN(auto outcome, commands_.Outcome(who, req.sandbox_id, started->id));
  const Command& c = outcome.command;
  std::string output = c.stdout_text + c.stderr_text;
  if (output.size() > kMaxBuildOutput) output = output.substr(output.size() - kMaxBuildOutput);
  release.build_exit_code = c.exit_code;
  release.build_output = output;
  if (c.status == "exited" && c.exit_code == 0) return Status::Ok();
  std::string tail = output.size() > 2000 ? output.substr(output.size() - 2000) : output;
  std::string how = c.exit_code ? "exited with code " + std::to_string(*c.exit_code)
                                : "ended " + c.status + (c.error.empty() ? "" : ": " + c.error);
  return InvalidArgument(n("build_command"), n("build_command") + " " + how +
                                                 "; nothing was deployed. Its output: " + tail);
}

Result<store::AppReleaseRecord> AppService::Package(const Principal& who,
                                                    const store::SandboxRecord& source,
                                                    const DeployApp& req, const FieldNames& n) {
  store::AppReleaseRecord release;
  release.id = NewId("rel");
  release.org_id = who.org_id;
  release.source_path = req.source_path;
  release.start_command = req.start_command;
  release.port = static_cast<int>(req.port);
  release.env = req.env;
  release.secrets = req.secrets;
  release.readiness_path = req.readiness_path;
  release.readiness_timeout_seconds = static_cast<int>(req.readiness_timeout_seconds);
  release.readiness_period_seconds = static_cast<int>(req.readiness_period_seconds);
  release.readiness_failure_threshold = static_cast<int>(req.readiness_failure_threshold);
  release.created_at = NowMillis();
  RETURN_IF_ERROR(Build(who, req, release, n));
  auto archive = files_.ArchiveGet(who, source.id, req.source_path);
  if (!archive.ok())
    return Status(
        archive.status().code(),
        "packaging " + n("source_path") + " " + req.source_path + ": " + archive.status().message(),
        n("source_path"));
  auto& reader = *archive;
  // Stored compressed; the content address is the digest of the stored bytes.
  agent::ReleaseCompressor packed([&](char* buf, size_t n) { return reader->Read(buf, n); },
                                  options_.max_release_unpacked_bytes);
  auto blob = objects_.PutBlob([&](char* buf, size_t n) { return packed.Read(buf, n); },
                               options_.max_release_bytes, &release.sha256, &release.size);
  Status finished = reader->Finish();
  if (!blob.ok()) {
    // Whichever limit or failure stopped it says more than "the blob's source failed".
    const bool unpacked_too_large = packed.unpacked() > options_.max_release_unpacked_bytes;
    std::string why = blob.status().message();
    if (blob.status().code() == Code::kPayloadTooLarge)
      why = "compressed, it is " + why;
    else if (unpacked_too_large)
      why = packed.error();
    else if (!finished.ok())
      why = finished.message();
    else if (!packed.error().empty())
      why = packed.error();
    return Status(unpacked_too_large ? Code::kPayloadTooLarge : blob.status().code(),
                  "packaging " + n("source_path") + " " + req.source_path + ": " + why,
                  n("source_path"));
  }
  if (!finished.ok()) {
    objects_.RemoveBlob(*blob);
    return Status(
        finished.code(),
        "packaging " + n("source_path") + " " + req.source_path + ": " + finished.message(),
        n("source_path"));
  }
  release.blob = *blob;
  auto check = objects_.OpenBlob(*blob);
  std::string unsafe =
      check.ok() ? FirstEscapingEntry([&](char* buf, size_t k) { return (*check)->Read(buf, k); },
                                      options_.max_release_unpacked_bytes)
                 : check.status().message();
  if (!unsafe.empty()) {
    objects_.RemoveBlob(*blob);
    return InvalidArgument(n("source_path"), n("source_path") + " cannot be packaged: " + unsafe);
  }
  return release;
}

Result<std::shared_ptr<void>> AppService::ClaimRollout(const store::AppRecord& app) {
  return Claim(deploying_, app.id,
               "app " + app.name + " is being deployed or rolled back; try again once that ends");
}

Result<std::shared_ptr<void>> AppService::Claim(std::set<std::string>& claimed, std::string key,
                                                const std::string& busy) {
  struct Held {
    AppService* self;
    std::set<std::string>* claimed;
    std::string key;
    bool held = false;
    ~Held() {
      if (!held) return;
      std::lock_guard lock(self->mu_);
      claimed->erase(key);
    }
  };
  // Made before mu_ is taken: a failed allocation then claims nothing, and a claim never
  // released under mu_ (its destructor takes mu_).
  auto claim = std::make_shared<Held>(Held{this, &claimed, std::move(key)});
  std::lock_guard lock(mu_);
  if (!claimed.insert(claim->key).second) return Conflict(busy);
  claim->held = true;
  return std::shared_ptr<void>(std::move(claim));
}

Result<App> AppService::Rollout(const Principal& who, store::AppRecord app, bool existing,
                                const store::AppReleaseRecord& release,
                                std::shared_ptr<void> claim) {
  // The reconciler leaves the app alone until this rollout ends.
  if (!claim) {
    ASSIGN_OR_RETURN(claim, ClaimRollout(app));
  }
  const std::string previous = app.release_id;
  app.updated_at = NowMillis();
  if (!existing) {
    app.release_id = release.id;
    RETURN_IF_ERROR(store_.PutApp(app));
  }
  auto discard = [&](const std::vector<std::string>& started) {
    std::vector<store::AppReplicaRecord> removed;
    for (const auto& s : started)
      removed.push_back({s, app.id, app.org_id, release.id, "starting", 0});
    {
      std::lock_guard lock(app_mu_);
      for (const auto& r : removed) ForgetReplica(r);
      if (!existing) {
        // Nothing of this app ever served: its release goes now (unless another app's uses it).
        auto blobs = store_.DeleteApp(app.org_id, app.id);
        if (blobs.ok()) RetireReleases(*blobs, std::chrono::seconds(0));
      }
    }
    DeleteReplicaSandboxes(removed);
  };
  std::vector<std::string> started;
  for (int i = 0; i < app.replicas; ++i) {
    std::unique_lock lock(app_mu_);
    auto id = StartReplica(app, release);
    lock.unlock();
    if (!id.ok()) {
      discard(started);
      return id.status().WithContext("starting a replica");
    }
    started.push_back(*id);
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.ready_wait +
                        std::chrono::seconds(release.readiness_timeout_seconds);
  if (!started.empty() && !AwaitReady(app.id, release.id, deadline)) {
    std::string why;
    {
      std::lock_guard lock(mu_);
      if (auto t = trouble_.find(app.id); t != trouble_.end()) why = " (" + t->second.why + ")";
    }
    // The failures were this release's: the app's serving replicas are not in trouble.
    ClearTrouble(app.id);
    why += LastOutput(app.org_id, started.front());
    discard(started);
    const std::string check = release.readiness_path.empty()
                                  ? "accepted connections on port " + std::to_string(release.port)
                                  : "answered GET " + release.readiness_path + " on port " +
                                        std::to_string(release.port) + " with 2xx or 3xx";
    // The wait also ends early, once no replica's delivery is left (one exited, failed its
    // readiness check, or was deleted or stopped meanwhile): `why` says what, and no time is
    // claimed then.
    const std::string when = std::chrono::steady_clock::now() >= deadline
                                 ? " within " + std::to_string(release.readiness_timeout_seconds) +
                                       " seconds of its start"
                                 : "";
    Emit(app.org_id, app.id, "app.deploy_failed", "",
         "release " + release.id + ": no replica " + check + when + why);
    if (!existing) {
      return Status(Code::kUnavailable, "no replica of app " + app.name + " " + check + when +
                                            "; nothing was deployed" + why);
    }
    return Status(Code::kUnavailable, "no replica of release " + release.id + " " + check + when +
                                          "; app " + app.name + " keeps release " + previous + why);
  }
  if (existing) {
    // The new release serves: the old replicas take no new request, finish theirs, and go.
    // Written `draining` under app_mu_, so that a readiness check cannot write one back ready.
    std::vector<store::AppReplicaRecord> old;
    bool deleted = false;
    {
      std::lock_guard lock(app_mu_);
      // Deleted during the rollout: PutApp would insert it again, with these replicas.
      deleted = store_.GetApp(app.org_id, app.id).status().code() == Code::kNotFound;
      if (!deleted) {
        app.release_id = release.id;
        RETURN_IF_ERROR(store_.PutApp(app));
        if (auto replicas = store_.ListAppReplicas(app.id); replicas.ok()) {
          for (auto r : *replicas) {
            if (r.release_id == release.id) continue;
            r.state = "draining";
            WarnIfError(store_.PutAppReplica(r),
                        "marking an old replica draining (it goes anyway)");
            old.push_back(std::move(r));
          }
        }
      }
    }
    if (deleted) {
      discard(started);  // takes app_mu_: outside the block above
      return NotFound("app " + app.name + " was deleted while its release was rolled out");
    }
    DrainThenRemove(old);
  }
  ASSIGN_OR_RETURN(auto saved, store_.GetApp(who.org_id, app.id));
  Emit(app.org_id, app.id, "app.deployed", "",
       "release " + release.id + " serving, " + std::to_string(app.replicas) + " replicas wanted");
  return View(saved);
}

Result<Page<App>> AppService::List(const Principal& who, const PageRequest& page) {
  ASSIGN_OR_RETURN(auto apps, store_.ListApps(who.org_id));
  ASSIGN_OR_RETURN(
      Page<store::AppRecord> records,
      PageNewestFirst(std::move(apps), page, [](const store::AppRecord& a) { return a.seq; }));
  Page<App> out;
  for (const auto& a : records.items) out.items.push_back(View(a));
  out.next_cursor = records.next_cursor;
  return out;
}

Result<App> AppService::Get(const Principal& who, const std::string& id) {
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  return View(app);
}

Result<App> AppService::Scale(const Principal& who, const std::string& id, int64_t replicas,
                              const FieldNames& n) {
  RETURN_IF_ERROR(RequireRegistered(who, "scale an app"));
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  if (replicas < 0 || replicas > options_.max_replicas)
    return InvalidArgument(n("replicas"), n("replicas") + " must be from 0 to " +
                                              std::to_string(options_.max_replicas));
  std::vector<store::AppReplicaRecord> removed;
  {
    std::lock_guard lock(app_mu_);
    ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
    RETURN_IF_ERROR(CheckReplicaLimit(who.org_id, replicas, n));
    {
      std::lock_guard l(mu_);
      if (deploying_.count(app.id))
        return Conflict("app " + app.name + " is being deployed or rolled back; " +
                        "scale it once that ends");
    }
    app.replicas = static_cast<int>(replicas);
    app.updated_at = NowMillis();
    RETURN_IF_ERROR(store_.PutApp(app));
    Emit(app.org_id, app.id, "app.scaled", "", std::to_string(replicas) + " replicas wanted");
    removed = ReconcileApp(app, /*at_once=*/true);
  }
  DeleteReplicaSandboxes(removed);
  return Get(who, id);
}

Status AppService::Delete(const Principal& who, const std::string& id) {
  RETURN_IF_ERROR(RequireRegistered(who, "delete an app"));
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  std::unique_lock lock(app_mu_);
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  ASSIGN_OR_RETURN(auto replicas, store_.ListAppReplicas(app.id));
  ASSIGN_OR_RETURN(auto blobs, store_.DeleteApp(who.org_id, app.id));
  for (const auto& r : replicas) ForgetReplica(r);
  RetireReleases(blobs, options_.release_grace);
  {
    std::lock_guard l(mu_);
    trouble_.erase(app.id);
    next_.erase(app.id);
  }
  lock.unlock();
  // Gone from the store already: the sandboxes are deleted without holding up other apps.
  DeleteReplicaSandboxes(replicas);
  if (on_removed_) on_removed_(app.hostname);
  Emit(app.org_id, app.id, "app.deleted", "", "app " + app.name + " deleted");
  return Status::Ok();
}

Result<Page<AppReleaseView>> AppService::Releases(const Principal& who, const std::string& id,
                                                  const PageRequest& page) {
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  ASSIGN_OR_RETURN(auto releases, store_.ListAppReleases(app.id));
  ASSIGN_OR_RETURN(auto rows,
                   PageNewestFirst(std::move(releases), page,
                                   [](const store::AppReleaseRecord& r) { return r.seq; }));
  return MapPage(std::move(rows), ReleaseView);
}

}  // namespace adapt::core

#include "core/app_service.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <future>
#include <set>

#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/registration_gate.h"
#include "core/release_archive.h"
#include "net/port_probe.h"

namespace adapt::core {
namespace {

constexpr const char* kAppLabel = "adapt-app";
constexpr size_t kMaxBuildOutput = 16 * 1024;
// Where a replica's start-up waits for its release: written after the release is in place.
constexpr const char* kReadyMarker = "/tmp/.adapt-release-ready";

bool Live(const std::string& status) { return status == "provisioning" || status == "running"; }

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

Status CheckAbsolute(const std::string& path, const std::string& field) {
  if (path.empty() || path.front() != '/')
    return InvalidArgument(field, field + " must be an absolute path");
  RETURN_IF_ERROR(ValidateFilePath(path, field));
  return Status::Ok();
}

// Waits for a callback-style wait to end, on this thread.
template <typename Start>
void Block(Start start) {
  auto done = std::make_shared<std::promise<void>>();
  auto ended = done->get_future();
  start([done](Waiter::End) { done->set_value(); });
  ended.wait();
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
  if (auto replicas = store_.ListAppReplicas(a.id); replicas.ok()) {
    for (const auto& r : *replicas) {
      v.replica_list.push_back({r.sandbox_id, r.release_id, r.state});
      if (r.state == "ready") ++v.ready_replicas;
    }
  }
  if (auto r = store_.GetAppRelease(a.id, a.release_id); r.ok())
    v.release = AppReleaseView{
        r->id,         r->sha256,          r->size,         r->source_path,   r->build_command,
        r->build_path, r->build_exit_code, r->build_output, r->start_command, r->port,
        r->created_at};
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
  Block([&](Waiter::Done done) {
    commands_.AwaitEnd(started->id,
                       Waiter::Clock::now() + std::chrono::seconds(req.build_timeout_seconds + 30),
                       std::move(done));
  });
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
  release.created_at = NowMillis();
  RETURN_IF_ERROR(Build(who, req, release, n));
  auto archive = files_.ArchiveGet(who, source.id, req.source_path);
  if (!archive.ok())
    return Status(
        archive.status().code(),
        "packaging " + n("source_path") + " " + req.source_path + ": " + archive.status().message(),
        n("source_path"));
  auto& reader = *archive;
  auto blob = objects_.PutBlob([&](char* buf, size_t n) { return reader->Read(buf, n); },
                               options_.max_release_bytes, &release.sha256, &release.size);
  Status finished = reader->Finish();
  if (!blob.ok())
    return Status(
        blob.status().code(),
        "packaging " + n("source_path") + " " + req.source_path + ": " + blob.status().message(),
        n("source_path"));
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
      check.ok() ? FirstEscapingEntry([&](char* buf, size_t k) { return (*check)->Read(buf, k); })
                 : check.status().message();
  if (!unsafe.empty()) {
    objects_.RemoveBlob(*blob);
    return InvalidArgument(n("source_path"), n("source_path") + " cannot be packaged: " + unsafe);
  }
  return release;
}

Result<App> AppService::Deploy(const Principal& who, const DeployApp& req, const FieldNames& n) {
  RETURN_IF_ERROR(RequireRegistered(who, "deploy an app"));
  RETURN_IF_ERROR(CheckDeploy(req, n));
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
  const std::string name = req.name.empty() ? "app" : req.name;
  std::optional<store::AppRecord> existing;
  ASSIGN_OR_RETURN(auto apps, store_.ListApps(who.org_id));
  for (const auto& a : apps)
    if (a.name == name) existing = a;
  ASSIGN_OR_RETURN(store::AppReleaseRecord release, Package(who, source, req, n));

  store::AppRecord app;
  if (existing) {
    app = *existing;
  } else {
    app.id = NewId("app");
    app.org_id = who.org_id;
    app.name = name;
    app.source_sandbox_id = source.id;
    app.hostname = name + "-" + NewId("h").substr(2, 8) + "." + options_.domain;
    app.created_at = NowMillis();
  }
  release.app_id = app.id;
  // Content-addressed: the same bytes deploy as the same release, kept once.
  if (auto old = store_.ListAppReleases(app.id); old.ok()) {
    for (const auto& r : *old) {
      if (r.sha256 == release.sha256 && r.start_command == release.start_command &&
          r.port == release.port && r.env == release.env) {
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
  app.replicas = static_cast<int>(req.replicas);
  return Rollout(who, app, existing.has_value(), release);
}

Result<App> AppService::Rollout(const Principal& who, store::AppRecord app, bool existing,
                                const store::AppReleaseRecord& release) {
  // The reconciler leaves the app alone until this rollout ends.
  {
    std::lock_guard lock(mu_);
    if (deploying_.count(app.id))
      return Conflict("app " + app.name + " is being deployed; try again once that ends");
    deploying_.insert(app.id);
  }
  struct Deploying {
    AppService* self;
    std::string id;
    ~Deploying() {
      std::lock_guard lock(self->mu_);
      self->deploying_.erase(id);
    }
  } deploying{this, app.id};
  const std::string previous = app.release_id;
  app.updated_at = NowMillis();
  if (!existing) {
    app.release_id = release.id;
    RETURN_IF_ERROR(store_.PutApp(app));
  }
  auto discard = [&](const std::vector<std::string>& started) {
    std::lock_guard lock(app_mu_);
    for (const auto& s : started) RemoveReplica({s, app.id, app.org_id, release.id, "starting", 0});
    if (existing) return;
    auto blobs = store_.DeleteApp(app.org_id, app.id);
    if (blobs.ok())
      for (const auto& b : *blobs) objects_.RemoveBlob(b);
  };
  std::vector<std::string> started;
  for (int i = 0; i < app.replicas; ++i) {
    std::unique_lock lock(app_mu_);
    auto id = StartReplica(app, release);
    lock.unlock();
    if (!id.ok()) {
      discard(started);
      return Status(id.status().code(), "starting a replica: " + id.status().message());
    }
    started.push_back(*id);
  }
  if (!started.empty() &&
      !AwaitReady(app.id, release.id, std::chrono::steady_clock::now() + options_.ready_wait)) {
    std::string why = LastOutput(app.org_id, started.front());
    discard(started);
    if (!existing) {
      return Status(Code::kUnavailable, "no replica of app " + app.name +
                                            " accepted connections on port " +
                                            std::to_string(release.port) + " within " +
                                            std::to_string(options_.ready_wait.count()) +
                                            " seconds; nothing was deployed" + why);
    }
    return Status(Code::kUnavailable, "no replica of release " + release.id +
                                          " accepted connections on port " +
                                          std::to_string(release.port) + "; app " + app.name +
                                          " keeps release " + previous + why);
  }
  if (existing) {
    // The new release serves: the old replicas go.
    std::lock_guard lock(app_mu_);
    app.release_id = release.id;
    RETURN_IF_ERROR(store_.PutApp(app));
    if (auto replicas = store_.ListAppReplicas(app.id); replicas.ok())
      for (const auto& r : *replicas)
        if (r.release_id != release.id) RemoveReplica(r);
  }
  ASSIGN_OR_RETURN(auto saved, store_.GetApp(who.org_id, app.id));
  return View(saved);
}

Result<App> AppService::Rollback(const Principal& who, const std::string& id,
                                 const std::string& release_id, const FieldNames& n) {
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
               : InvalidArgument(n("release_id"),
                                 "app " + app.name + " has no release " + release_id.substr(0, 64));
  if (target->id == app.release_id) return View(app);
  return Rollout(who, app, true, *target);
}

Result<std::string> AppService::StartReplica(const store::AppRecord& app,
                                             const store::AppReleaseRecord& release) {
  // Replicas copy the source sandbox's image, size and network; once it is gone, a replica's.
  std::optional<store::SandboxRecord> source;
  if (auto s = store_.GetSandbox(app.org_id, app.source_sandbox_id); s.ok()) source = *s;
  if (auto replicas = store_.ListAppReplicas(app.id); !source && replicas.ok())
    for (const auto& r : *replicas)
      if (auto s = store_.GetSandbox(app.org_id, r.sandbox_id); s.ok() && !source) source = *s;
  if (!source)
    return Conflict("app " + app.name + "'s source sandbox " + app.source_sandbox_id +
                    " is gone and no replica is left to copy; deploy it again");
  Principal who;
  who.org_id = app.org_id;
  CreateSandbox req;
  if (source->config.image_id) {
    req.image_id = source->config.image_id;
  } else {
    req.image = source->config.image;
  }
  req.cpu = source->config.cpu;
  req.memory_mib = source->config.memory_mib;
  req.no_expiry = true;
  req.security_profile = "restricted";
  req.startup_class = "instant";
  req.labels[kAppLabel] = app.id;
  req.env = release.env;
  req.env["PORT"] = std::to_string(release.port);
  NetworkRequest network;
  network.egress = source->config.network.egress;
  if (source->config.network.egress == "allowlist") {
    std::vector<AllowRuleRequest> allow;
    for (const auto& r : source->config.network.allow)
      allow.push_back({r.protocol, r.address, r.port});
    network.allow = allow;
    std::vector<HostnameRuleRequest> hostnames;
    for (const auto& h : source->config.network.hostnames)
      hostnames.push_back({h.hostname, h.port});
    network.hostnames = hostnames;
    network.dns = source->config.network.dns;
  }
  req.network = network;
  StartupRequest startup;
  startup.mode = "command";
  startup.argv.given = true;
  // The release arrives through the agent after boot; the app starts once it is in place.
  startup.argv.items = std::vector<std::string>{"/bin/sh", "-c",
                                                std::string("while [ ! -e ") + kReadyMarker +
                                                    " ]; do sleep 0.2; done; cd /workspace && " +
                                                    "exec /bin/sh -c \"$0\"",
                                                release.start_command};
  startup.cwd = "/";
  req.startup = startup;
  auto created = sandboxes_.Create(who, req, std::nullopt);
  if (!created.ok()) return created.status();
  store::AppReplicaRecord replica{created->id, app.id,     app.org_id,
                                  release.id,  "starting", NowMillis()};
  if (Status st = store_.PutAppReplica(replica); !st.ok()) {
    IgnoreError(sandboxes_.Delete(who, created->id).status(), "the replica was not recorded");
    return st;
  }
  {
    std::lock_guard lock(mu_);
    delivering_[replica.sandbox_id] = app.id;
  }
  boost::asio::post(deliveries_, [this, replica] { Deliver(replica); });
  return created->id;
}

void AppService::Deliver(store::AppReplicaRecord replica) {
  Principal who;
  who.org_id = replica.org_id;
  auto finish = [&](bool ok, const std::string& why) {
    {
      std::lock_guard lock(mu_);
      delivering_.erase(replica.sandbox_id);
    }
    if (!ok) spdlog::warn("app {}: replica {}: {}", replica.app_id, replica.sandbox_id, why);
    changed_.notify_all();
  };
  Block([&](Waiter::Done done) {
    sandboxes_.AwaitSettled(who, replica.sandbox_id, Waiter::Clock::now() + std::chrono::minutes(5),
                            std::move(done));
  });
  auto sandbox = store_.GetSandbox(replica.org_id, replica.sandbox_id);
  if (!sandbox.ok() || sandbox->status != "running") return finish(false, "did not start");
  auto release = store_.GetAppRelease(replica.app_id, replica.release_id);
  if (!release.ok()) return finish(false, release.status().message());
  auto blob = objects_.OpenBlob(release->blob);
  if (!blob.ok()) return finish(false, blob.status().message());
  auto& reader = *blob;
  Status put = files_.ArchivePut(who, replica.sandbox_id, "/workspace",
                                 [&](char* buf, size_t n) { return reader->Read(buf, n); });
  if (!put.ok()) return finish(false, "receiving the release: " + put.message());
  Status mark = files_.Upload(who, replica.sandbox_id, kReadyMarker, "0644",
                              [](char*, size_t) -> long { return 0; });
  if (!mark.ok()) return finish(false, "starting the app: " + mark.message());
  auto deadline = std::chrono::steady_clock::now() + options_.ready_wait;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return finish(false, "adaptd is stopping");
    }
    auto now = store_.GetSandbox(replica.org_id, replica.sandbox_id);
    if (!now.ok() || now->status != "running") return finish(false, "ended while starting");
    auto address = network_.AddressOf(replica.sandbox_id);
    if (address && !address->empty() &&
        net::PortAccepts(*address, static_cast<uint16_t>(release->port),
                         std::chrono::milliseconds(500))) {
      replica.state = "ready";
      // Only while the replica is still the app's (a scale down may have removed it).
      bool known = false;
      if (auto replicas = store_.ListAppReplicas(replica.app_id); replicas.ok())
        for (const auto& r : *replicas) known = known || r.sandbox_id == replica.sandbox_id;
      if (known) IgnoreError(store_.PutAppReplica(replica), "the next reconcile retries");
      return finish(true, "");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  finish(false, "its port " + std::to_string(release->port) + " did not accept connections");
}

bool AppService::AwaitReady(const std::string& app_id, const std::string& release_id,
                            std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  for (;;) {
    lock.unlock();
    bool ready = false, pending = false;
    if (auto replicas = store_.ListAppReplicas(app_id); replicas.ok()) {
      for (const auto& r : *replicas) {
        if (r.release_id != release_id) continue;
        ready = ready || r.state == "ready";
      }
    }
    lock.lock();
    for (const auto& [sandbox, app] : delivering_) pending = pending || app == app_id;
    if (ready) return true;
    if (!pending || stopping_) return false;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) return false;
  }
}

std::string AppService::LastOutput(const std::string& org_id, const std::string& sandbox_id) {
  auto s = store_.GetSandbox(org_id, sandbox_id);
  if (!s.ok()) return "";
  std::string out;
  if (s->status != "running") out += " (replica " + sandbox_id + " is " + s->status;
  if (s->result.exit_code) out += ", exit code " + std::to_string(*s->result.exit_code);
  if (s->result.error) out += ", " + *s->result.error;
  std::string text = s->result.stdout_text + s->result.stderr_text;
  if (text.size() > 1000) text = text.substr(text.size() - 1000);
  if (!out.empty()) out += ")";
  if (!text.empty()) out += ". Its last output: " + text;
  return out;
}

void AppService::RemoveReplica(const store::AppReplicaRecord& replica) {
  Principal who;
  who.org_id = replica.org_id;
  IgnoreError(store_.DeleteAppReplica(replica.sandbox_id), "the reconciler finds it again");
  auto deleted = sandboxes_.Delete(who, replica.sandbox_id);
  if (!deleted.ok() && deleted.status().code() != Code::kNotFound)
    spdlog::warn("app {}: deleting replica {}: {}", replica.app_id, replica.sandbox_id,
                 deleted.status().message());
}

Result<std::vector<App>> AppService::List(const Principal& who) {
  ASSIGN_OR_RETURN(auto apps, store_.ListApps(who.org_id));
  std::vector<App> out;
  for (const auto& a : apps) out.push_back(View(a));
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
  {
    std::lock_guard lock(app_mu_);
    ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
    {
      std::lock_guard l(mu_);
      if (deploying_.count(app.id))
        return Conflict("app " + app.name + " is being deployed; scale it once that ends");
    }
    app.replicas = static_cast<int>(replicas);
    app.updated_at = NowMillis();
    RETURN_IF_ERROR(store_.PutApp(app));
    ReconcileApp(app);
  }
  return Get(who, id);
}

Status AppService::Delete(const Principal& who, const std::string& id) {
  RETURN_IF_ERROR(RequireRegistered(who, "delete an app"));
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  std::lock_guard lock(app_mu_);
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  ASSIGN_OR_RETURN(auto replicas, store_.ListAppReplicas(app.id));
  ASSIGN_OR_RETURN(auto blobs, store_.DeleteApp(who.org_id, app.id));
  for (const auto& r : replicas) RemoveReplica(r);
  for (const auto& b : blobs) objects_.RemoveBlob(b);
  if (on_removed_) on_removed_(app.hostname);
  return Status::Ok();
}

Result<std::vector<AppReleaseView>> AppService::Releases(const Principal& who,
                                                         const std::string& id) {
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  ASSIGN_OR_RETURN(auto releases, store_.ListAppReleases(app.id));
  std::vector<AppReleaseView> out;
  for (const auto& r : releases)
    out.push_back({r.id, r.sha256, r.size, r.source_path, r.build_command, r.build_path,
                   r.build_exit_code, r.build_output, r.start_command, r.port, r.created_at});
  return out;
}

std::optional<net::IngressBackend> AppService::Route(const std::string& host) {
  auto app = store_.FindAppByHostname(host);
  if (!app.ok()) return std::nullopt;
  auto release = store_.GetAppRelease(app->id, app->release_id);
  auto replicas = store_.ListAppReplicas(app->id);
  if (!release.ok() || !replicas.ok()) return std::nullopt;
  std::vector<net::IngressBackend> ready;
  for (const auto& r : *replicas) {
    if (r.state != "ready") continue;
    auto address = network_.AddressOf(r.sandbox_id);
    if (!address || address->empty()) continue;
    int port = release->port;
    if (r.release_id != release->id)
      if (auto other = store_.GetAppRelease(app->id, r.release_id); other.ok()) port = other->port;
    ready.push_back({*address, static_cast<uint16_t>(port), {}});
  }
  if (ready.empty()) return net::IngressBackend{};  // known, nothing serving: a 503
  uint64_t first;
  {
    std::lock_guard lock(mu_);
    first = next_[app->id]++;
  }
  net::IngressBackend out = ready[first % ready.size()];
  for (size_t i = 1; i < ready.size(); ++i)
    out.fallbacks.push_back(ready[(first + i) % ready.size()]);
  return out;
}

void AppService::ReconcileApp(const store::AppRecord& app) {
  Principal who;
  who.org_id = app.org_id;
  auto replicas = store_.ListAppReplicas(app.id);
  if (!replicas.ok()) return;
  std::vector<store::AppReplicaRecord> live;
  for (const auto& r : *replicas) {
    auto s = store_.GetSandbox(app.org_id, r.sandbox_id);
    bool busy;
    {
      std::lock_guard lock(mu_);
      busy = delivering_.count(r.sandbox_id) > 0;
    }
    if (!s.ok() || !Live(s->status)) {
      spdlog::info("app {}: replica {} ended ({}); replacing it", app.id, r.sandbox_id,
                   s.ok() ? s->status : s.status().message());
      RemoveReplica(r);
      continue;
    }
    if (r.release_id != app.release_id) {
      // A rollout a restart cut short: the app's recorded release is the one that serves.
      RemoveReplica(r);
      continue;
    }
    if (r.state == "starting" && !busy) {
      // A delivery a restart cut short, or one that gave up: this replica is started again.
      RemoveReplica(r);
      continue;
    }
    live.push_back(r);
  }
  // Extra replicas go, the ones not serving first, then the newest.
  std::stable_sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
    return (a.state == "ready") > (b.state == "ready");
  });
  while (static_cast<int>(live.size()) > app.replicas) {
    RemoveReplica(live.back());
    live.pop_back();
  }
  auto release = store_.GetAppRelease(app.id, app.release_id);
  if (!release.ok()) return;
  for (int i = static_cast<int>(live.size()); i < app.replicas; ++i) {
    auto id = StartReplica(app, *release);
    if (!id.ok()) {
      spdlog::warn("app {}: starting a replica: {}", app.id, id.status().message());
      break;
    }
  }
}

void AppService::ReconcileAll() {
  std::lock_guard lock(app_mu_);
  auto apps = store_.ListApps("");
  if (!apps.ok()) return;
  std::set<std::string> known;
  for (const auto& a : *apps) {
    bool deploying;
    {
      std::lock_guard l(mu_);
      deploying = deploying_.count(a.id) > 0;
    }
    if (!deploying) ReconcileApp(a);
    if (auto replicas = store_.ListAppReplicas(a.id); replicas.ok())
      for (const auto& r : *replicas) known.insert(r.sandbox_id);
  }
  // Sandboxes made for an app whose record was never written (a crash between the two).
  auto sandboxes = store_.ListSandboxesWithStatus({"provisioning", "running"});
  if (!sandboxes.ok()) return;
  for (const auto& s : *sandboxes) {
    auto label = s.config.labels.find(kAppLabel);
    if (label == s.config.labels.end() || known.count(s.id)) continue;
    auto app = store_.GetApp(s.org_id, label->second);
    if (!app.ok() && app.status().code() != Code::kNotFound) continue;
    bool busy;
    {
      std::lock_guard l(mu_);
      busy = delivering_.count(s.id) > 0;
    }
    if (busy) continue;
    Principal who;
    who.org_id = s.org_id;
    spdlog::info("apps: deleting {}, a replica no app knows", s.id);
    IgnoreError(sandboxes_.Delete(who, s.id).status(), "the next reconcile retries");
  }
}

void AppService::Start() {
  ReconcileAll();
  reconciler_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      changed_.wait_for(lock, options_.reconcile_every);
      if (stopping_) break;
      lock.unlock();
      ReconcileAll();
      lock.lock();
    }
  });
}

void AppService::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (reconciler_.joinable()) reconciler_.join();
  deliveries_.stop();
}

}  // namespace adapt::core

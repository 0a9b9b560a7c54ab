// AppService's replicas: started, handed their release, probed, replaced and removed, and the
// ingress's route over the ready ones.
#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <set>

#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/app_internal.h"
#include "core/app_service.h"
#include "net/port_probe.h"

namespace adapt::core {
namespace {

using app_internal::Block;
using app_internal::kAppLabel;
// Where a replica's start-up waits for its release: written after the release is in place.
constexpr const char* kReadyMarker = "/tmp/.adapt-release-ready";

bool Live(const std::string& status) { return status == "provisioning" || status == "running"; }

}  // namespace

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

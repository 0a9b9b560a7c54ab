// AppService's replicas: started, handed their release reference, probed, replaced and
// removed, and the ingress's route over the ready ones; deleted apps' releases retired.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <set>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/ids.h"
#include "base/ignore_error.h"
#include "base/time.h"
#include "core/app_internal.h"
#include "core/app_service.h"
#include "net/port_probe.h"

namespace adapt::core {
namespace {

using app_internal::BlockUnlessStopping;
using app_internal::kAppLabel;
// Where a replica's start-up waits for its release reference (the URL it downloads the
// release from), written by Deliver once the sandbox runs and has its network.
constexpr const char* kReleaseLinkFile = "/tmp/.adapt-release-url";
// The static agent, mounted read-only in every sandbox: it downloads and unpacks the release.
constexpr const char* kAgentInSandbox = "/.adapt/adapt-agent";

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
  req.platform_labels[kAppLabel] = app.id;
  req.env = release.env;
  req.secrets = release.secrets;
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
  // The replica downloads its release itself once Deliver has handed it the reference, then
  // starts the app in it; a failed download ends the replica (replaced after a backoff).
  startup.argv.items = std::vector<std::string>{
      "/bin/sh", "-c",
      std::string("while [ ! -s ") + kReleaseLinkFile + " ]; do sleep 0.2; done; " +
          kAgentInSandbox + " fetch-release " + kReleaseLinkFile + " /workspace " +
          std::to_string(options_.max_release_unpacked_bytes) +
          " && cd /workspace && exec /bin/sh -c \"$0\"",
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
  PostDelivery(replica);
  return created->id;
}

void AppService::EndDelivery(const store::AppReplicaRecord& replica, const std::string& why) {
  spdlog::warn("app {}: replica {}: {}", replica.app_id, replica.sandbox_id, why);
  // A replica removed meanwhile (scaled down, the app deleted) did not fail. Counted while the
  // delivery still shows: a waiting rollout (AwaitReady) or the reconciler that sees it end
  // finds the failure already noted, so neither clears it nor removes the replica uncounted.
  bool known = false;
  if (auto replicas = store_.ListAppReplicas(replica.app_id); replicas.ok())
    for (const auto& r : *replicas) known = known || r.sandbox_id == replica.sandbox_id;
  if (known) NoteFailure(replica, why);
  {
    std::lock_guard lock(mu_);
    delivering_.erase(replica.sandbox_id);
    ++deliveries_ended_;
    reconcile_now_ = true;
  }
  changed_.notify_all();
}

void AppService::Deliver(store::AppReplicaRecord replica) {
  Principal who;
  who.org_id = replica.org_id;
  auto forget = [&] {
    std::lock_guard lock(mu_);
    delivering_.erase(replica.sandbox_id);
    ++deliveries_ended_;
    reconcile_now_ = true;
  };
  auto finish = [&](bool ok, const std::string& why) {
    if (!ok) return EndDelivery(replica, why);
    forget();
    changed_.notify_all();
  };
  // Cut short by adaptd stopping: no failure of the replica's (no backoff is written); the
  // next adaptd's reconcile replaces a replica left starting.
  auto abandon = [&] {
    spdlog::info("app {}: replica {}: delivery ended, adaptd is stopping", replica.app_id,
                 replica.sandbox_id);
    forget();
    changed_.notify_all();
  };
  auto stopping = [this] {
    std::lock_guard lock(mu_);
    return stopping_;
  };
  // Stop() waits for every delivery: one must not wait out a sandbox's start then.
  bool settled = BlockUnlessStopping(
      [&](Waiter::Done done) {
        sandboxes_.AwaitSettled(who, replica.sandbox_id,
                                Waiter::Clock::now() + std::chrono::minutes(5), std::move(done));
      },
      stopping);
  if (!settled) return abandon();
  auto sandbox = store_.GetSandbox(replica.org_id, replica.sandbox_id);
  if (!sandbox.ok() || sandbox->status != "running") return finish(false, "did not start");
  auto release = store_.GetAppRelease(replica.app_id, replica.release_id);
  if (!release.ok()) return finish(false, RecordMessage(release.status()));
  auto link = ReleaseLink(*release, replica.sandbox_id);
  if (!link.ok())
    return finish(false, "making its release reference: " + RecordMessage(link.status()));
  size_t sent = 0;
  Status mark = files_.Upload(who, replica.sandbox_id, kReleaseLinkFile, "0644",
                              [&](char* buf, size_t n) -> long {
                                size_t k = std::min(n, link->size() - sent);
                                std::copy_n(link->data() + sent, k, buf);
                                sent += k;
                                return static_cast<long>(k);
                              });
  if (!mark.ok()) return finish(false, "handing it its release reference: " + RecordMessage(mark));
  // The readiness timeout runs from the release's download (the replica starts it now).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(release->readiness_timeout_seconds);
  const auto port = static_cast<uint16_t>(release->port);
  std::string failure = "did not answer";
  for (;;) {
    // Not under mu_: abandon() takes it, and Stop() joins every delivery.
    if (stopping()) return abandon();
    auto now = store_.GetSandbox(replica.org_id, replica.sandbox_id);
    if (!now.ok() || now->status != "running")
      return finish(false, "ended while starting" +
                               (now.ok() && now->result.exit_code
                                    ? " with exit code " + std::to_string(*now->result.exit_code)
                                    : std::string()));
    auto address = network_.AddressOf(replica.sandbox_id);
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const auto bound =
        std::clamp(left, std::chrono::milliseconds(100), std::chrono::milliseconds(1000));
    if (!address || address->empty()) {
      failure = "has no network address";
    } else if (release->readiness_path.empty()) {
      failure = net::PortAccepts(*address, port, bound) ? "" : "did not accept connections";
    } else {
      failure = net::HttpReadinessFailure(*address, port, release->readiness_path,
                                          *address + ":" + std::to_string(port), bound);
    }
    if (failure.empty()) {
      replica.state = "ready";
      // Only while the replica is still the app's (a scale down may have removed it), checked
      // and written under app_mu_ as RecheckReplicas does: a removal between the two would
      // have the write bring the removed replica back. Nothing holding app_mu_ waits for a
      // delivery.
      bool known = false;
      {
        std::lock_guard apps_lock(app_mu_);
        if (auto replicas = store_.ListAppReplicas(replica.app_id); replicas.ok())
          for (const auto& r : *replicas) known = known || r.sandbox_id == replica.sandbox_id;
        if (known) IgnoreError(store_.PutAppReplica(replica), "the next reconcile retries");
      }
      ClearTrouble(replica.app_id);
      if (known)
        Emit(replica.org_id, replica.app_id, "replica.ready", replica.sandbox_id,
             "release " + replica.release_id);
      return finish(true, "");
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  const std::string check =
      release->readiness_path.empty()
          ? "its port " + std::to_string(port)
          : "GET " + release->readiness_path + " on port " + std::to_string(port);
  finish(false, check + " " + failure + " (not ready within " +
                    std::to_string(release->readiness_timeout_seconds) + " s)");
}

bool AppService::AwaitReady(const std::string& app_id, const std::string& release_id,
                            std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  for (;;) {
    // Taken before the store is read: a delivery writes its replica's state before it stops
    // showing, so one that ends after the read (its wake-up then lost) has the loop read
    // again rather than judge by a stale read or wait for a wake-up that came already.
    const uint64_t ended = deliveries_ended_;
    bool ready = false, pending = false;
    for (const auto& [sandbox, app] : delivering_) pending = pending || app == app_id;
    lock.unlock();
    if (auto replicas = store_.ListAppReplicas(app_id); replicas.ok()) {
      for (const auto& r : *replicas) {
        if (r.release_id != release_id) continue;
        ready = ready || r.state == "ready";
      }
    }
    lock.lock();
    if (ready) return true;
    if (deliveries_ended_ != ended) continue;
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

Result<std::vector<AppReplicaLog>> AppService::Logs(const Principal& who, const std::string& id) {
  constexpr size_t kMaxLogBytes = 64 * 1024;
  if (!IsValidId(id, "app")) return NotFound("app " + id + " not found");
  ASSIGN_OR_RETURN(auto app, store_.GetApp(who.org_id, id));
  ASSIGN_OR_RETURN(auto replicas, store_.ListAppReplicas(app.id));
  std::vector<std::pair<store::AppReplicaRecord, std::string>> wanted;
  for (const auto& r : replicas) wanted.push_back({r, r.state});
  {
    std::lock_guard lock(mu_);
    if (auto t = trouble_.find(app.id); t != trouble_.end()) {
      bool listed = false;
      for (const auto& r : replicas)
        listed = listed || r.sandbox_id == t->second.replica.sandbox_id;
      if (!listed) wanted.push_back({t->second.replica, "failed"});
    }
  }
  auto tail = [&](const std::string& text, bool& truncated) {
    if (text.size() <= kMaxLogBytes) return text;
    truncated = true;
    size_t from = text.size() - kMaxLogBytes;
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;
    return text.substr(from);
  };
  std::vector<AppReplicaLog> out;
  for (const auto& [r, state] : wanted) {
    auto sandbox = sandboxes_.Get(who, r.sandbox_id);
    if (!sandbox.ok()) continue;  // gone meanwhile
    AppReplicaLog log;
    log.sandbox_id = r.sandbox_id;
    log.release_id = r.release_id;
    log.state = state;
    if (sandbox->startup) {
      log.truncated = sandbox->startup->truncated;
      log.stdout_text = tail(sandbox->startup->stdout_text, log.truncated);
      log.stderr_text = tail(sandbox->startup->stderr_text, log.truncated);
      log.exit_code = sandbox->startup->exit_code;
    }
    out.push_back(std::move(log));
  }
  return out;
}

std::optional<net::IngressBackend> AppService::Route(const std::string& host) {
  auto app = store_.FindAppByHostname(host);
  if (!app.ok()) return std::nullopt;
  auto release = store_.GetAppRelease(app->id, app->release_id);
  auto replicas = store_.ListAppReplicas(app->id);
  if (!release.ok() || !replicas.ok()) return std::nullopt;
  std::vector<net::IngressBackend> ready;
  std::vector<std::shared_ptr<std::atomic<int>>> open;
  for (const auto& r : *replicas) {
    if (r.state != "ready") continue;
    // A replica whose sandbox ended is still marked ready until supervision sees it; its
    // network may be going with it, where a connection would hang rather than be refused.
    auto sandbox = store_.GetSandbox(app->org_id, r.sandbox_id);
    if (!sandbox.ok() || sandbox->status != "running") continue;
    auto address = network_.AddressOf(r.sandbox_id);
    if (!address || address->empty()) continue;
    int port = release->port;
    if (r.release_id != release->id)
      if (auto other = store_.GetAppRelease(app->id, r.release_id); other.ok()) port = other->port;
    std::shared_ptr<std::atomic<int>> count;
    {
      std::lock_guard lock(mu_);
      auto& c = open_[r.sandbox_id];
      if (!c) c = std::make_shared<std::atomic<int>>(0);
      count = c;
    }
    // The connection counts against this replica while the ingress holds what this returns.
    auto acquire = [count]() -> std::shared_ptr<void> {
      ++*count;
      return std::shared_ptr<void>(count.get(), [count](void*) { --*count; });
    };
    ready.push_back({*address, static_cast<uint16_t>(port), {}, acquire, app->org_id});
    open.push_back(count);
  }
  if (ready.empty()) return net::IngressBackend{};  // known, nothing serving: a 503
  uint64_t start;
  {
    std::lock_guard lock(mu_);
    start = next_[app->id]++;
  }
  // Least open connections; among equals, round robin from `start`.
  size_t best = start % ready.size();
  for (size_t k = 1; k < ready.size(); ++k) {
    size_t i = (start + k) % ready.size();
    if (open[i]->load() < open[best]->load()) best = i;
  }
  net::IngressBackend out = ready[best];
  for (size_t k = 1; k < ready.size(); ++k)
    out.fallbacks.push_back(ready[(best + k) % ready.size()]);
  return out;
}

std::vector<store::AppReplicaRecord> AppService::ReconcileApp(const store::AppRecord& app,
                                                              bool at_once) {
  std::vector<store::AppReplicaRecord> removed;
  auto replicas = store_.ListAppReplicas(app.id);
  if (!replicas.ok()) return removed;
  auto remove = [&](const store::AppReplicaRecord& r) {
    ForgetReplica(r);
    removed.push_back(r);
  };
  std::vector<store::AppReplicaRecord> live;
  for (const auto& r : *replicas) {
    auto s = store_.GetSandbox(app.org_id, r.sandbox_id);
    bool busy;
    {
      std::lock_guard lock(mu_);
      busy = delivering_.count(r.sandbox_id) > 0;
    }
    if (!s.ok() || !Live(s->status)) {
      std::string why = s.ok() ? s->status : s.status().message();
      if (s.ok() && s->result.exit_code)
        why += " with exit code " + std::to_string(*s->result.exit_code);
      spdlog::info("app {}: replica {} ended ({}); replacing it", app.id, r.sandbox_id, why);
      if (r.release_id == app.release_id) NoteFailure(r, why);
      remove(r);
      continue;
    }
    if (r.release_id != app.release_id) {
      // A rollout a restart cut short: the app's recorded release is the one that serves.
      remove(r);
      continue;
    }
    if (r.state == "starting" && !busy) {
      // A delivery a restart cut short, or one that gave up: this replica is started again.
      remove(r);
      continue;
    }
    live.push_back(r);
  }
  // Extra replicas go, the ones not serving first, then the newest.
  std::stable_sort(live.begin(), live.end(), [](const auto& a, const auto& b) {
    return (a.state == "ready") > (b.state == "ready");
  });
  while (static_cast<int>(live.size()) > app.replicas) {
    remove(live.back());
    live.pop_back();
  }
  auto release = store_.GetAppRelease(app.id, app.release_id);
  if (!release.ok()) return removed;
  if (!at_once) {
    std::lock_guard lock(mu_);
    auto t = trouble_.find(app.id);
    if (t != trouble_.end() && std::chrono::steady_clock::now() < t->second.retry_at)
      return removed;
  }
  for (int i = static_cast<int>(live.size()); i < app.replicas; ++i) {
    auto id = StartReplica(app, *release);
    if (!id.ok()) {
      spdlog::warn("app {}: starting a replica: {}", app.id, id.status().message());
      break;
    }
  }
  return removed;
}

Result<std::string> AppService::ReleaseLink(const store::AppReleaseRecord& release,
                                            const std::string& sandbox_id) {
  if (!release_tokens_ || !gateway_port_)
    return Status(Code::kUnavailable, "the storage gateway is not running");
  std::string host_address;
  ASSIGN_OR_RETURN(auto networks, store_.ListNetworks());
  for (const auto& n : networks)
    if (n.sandbox_id == sandbox_id) host_address = n.host_address;
  if (host_address.empty())
    return Conflict("replica " + sandbox_id + " has no network to reach the storage gateway");
  const int64_t expires = NowMillis() / 1000 + options_.release_link_ttl.count();
  return "http://" + host_address + ":" + std::to_string(gateway_port_) + "/_releases/" +
         release.blob + "?" + release_tokens_->SignRelease(release.org_id, release.blob, expires);
}

void AppService::RetireReleases(const std::vector<std::string>& blobs, std::chrono::seconds grace) {
  if (blobs.empty()) return;
  auto referenced = store_.ListReferencedBlobs();
  if (!referenced.ok()) {
    // Kept rather than risk removing a blob another app's release uses; Init removes it at
    // the next start if nothing does.
    spdlog::warn("apps: keeping {} release blobs: {}", blobs.size(), referenced.status().message());
    return;
  }
  std::set<std::string> used(referenced->begin(), referenced->end());
  const int64_t due = NowMillis() + std::chrono::milliseconds(grace).count();
  for (const auto& b : blobs) {
    if (used.count(b)) continue;  // another app's release has the same content
    if (grace.count() <= 0) {
      objects_.RemoveBlob(b);
    } else if (Status st = objects_.RetireBlob(b, due); !st.ok()) {
      spdlog::warn("apps: retiring release blob {}: {}", b, st.message());
    }
  }
}

void AppService::ReconcileAll() {
  // A deleted app's releases whose grace period is over (a restart finds them too).
  if (size_t n = objects_.SweepRetiredBlobs(NowMillis()))
    spdlog::info("apps: removed {} releases of deleted apps after their grace period", n);
  // The sandboxes to delete, deleted once app_mu_ is released: each may take seconds, and a
  // scale or a deploy of any app waits for app_mu_ meanwhile.
  std::vector<store::AppReplicaRecord> removed;
  std::unique_lock lock(app_mu_);
  auto apps = store_.ListApps("");
  if (!apps.ok()) return;
  std::set<std::string> known;
  for (const auto& a : *apps) {
    bool deploying;
    {
      std::lock_guard l(mu_);
      deploying = deploying_.count(a.id) > 0;
    }
    if (!deploying) {
      for (auto& r : ReconcileApp(a)) {
        known.insert(r.sandbox_id);  // deleted below, not again as unknown
        removed.push_back(std::move(r));
      }
    }
    if (auto replicas = store_.ListAppReplicas(a.id); replicas.ok())
      for (const auto& r : *replicas) known.insert(r.sandbox_id);
  }
  // Sandboxes made for an app whose record was never written (a crash between the two).
  auto sandboxes = store_.ListSandboxesWithStatus({"provisioning", "running"});
  lock.unlock();
  DeleteReplicaSandboxes(removed);
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

void AppService::SandboxEnded(const std::string& sandbox_id) {
  auto s = store_.GetSandbox("", sandbox_id);
  if (!s.ok() || !s->config.labels.count(kAppLabel)) return;
  // The replica's record still says ready until the reconciler runs (a tenant's stop of it
  // once showed the app ready for ~20 s).
  {
    std::lock_guard lock(mu_);
    reconcile_now_ = true;
  }
  changed_.notify_all();
}

void AppService::Recover() {
  if (recovered_) return;
  recovered_ = true;
  SettleOperations();
  LoadTroubles();
}

void AppService::Start() {
  Recover();
  ReconcileAll();
  reconciler_ = std::thread(Guarded("app reconciler", [this] {
    using Clock = std::chrono::steady_clock;
    std::unique_lock lock(mu_);
    auto next_reconcile = Clock::now() + options_.reconcile_every;
    auto next_check = Clock::now();  // the ready replicas' first checks are then due
    while (!stopping_) {
      bool woken =
          reconcile_now_ || changed_.wait_until(lock, std::min(next_reconcile, next_check)) ==
                                std::cv_status::no_timeout;
      woken = woken || reconcile_now_;
      reconcile_now_ = false;
      if (stopping_) break;
      lock.unlock();
      // A replica's state change wakes the loop early; readiness checks keep their own pace
      // (each release's period), so looking for the due ones is all a wake costs them.
      RunGuarded(
          "app reconciler pass",
          [&] {
            if (woken || Clock::now() >= next_reconcile) {
              ReconcileAll();
              next_reconcile = Clock::now() + options_.reconcile_every;
            }
            next_check = RecheckReplicas();
          },
          // Not at once again: a pass that throws every time would spin.
          [&](const std::string&) {
            next_reconcile = Clock::now() + options_.reconcile_every;
            next_check = next_reconcile;
          });
      lock.lock();
    }
  }));
}

void AppService::BeginStop() {
  stop_requested_ = true;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
}

void AppService::Stop() {
  BeginStop();
  if (reconciler_.joinable()) reconciler_.join();
  // Joined, not only stopped: a delivery under way uses the members, which go before the pool
  // does (ASan, app_supervision_test). Each ends within a second of seeing stopping_.
  deliveries_.stop();
  deliveries_.join();
  // A deploy under way ends soon (its waits see stopping_) and records how it ended.
  deploys_.join();
}

}  // namespace adapt::core

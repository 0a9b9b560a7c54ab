#include "core/warm_pool.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <map>
#include <thread>

#include "base/background_work.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "core/startup_plan.h"
#include "runtime/agent_session.h"

namespace adapt::core {
namespace {

// After a member fails to boot, refills wait this long (a broken image must not spin).
constexpr int64_t kFailureBackoffMs = 10'000;
// A refill starts once no claim has come for this long, or at the latest this long after it
// was first wanted (a steady stream of claims must not keep the pools empty).
constexpr int64_t kRefillQuietMs = 1'000;
constexpr int64_t kRefillMaxDeferMs = 5'000;
// How long a booted member's agent gets to connect and run its first process.
constexpr auto kWarmUpWait = std::chrono::seconds(10);
// A member whose teardown failed is tried again after this long.
constexpr int64_t kTeardownRetryMs = 10'000;
constexpr char kTeardownState[] = "teardown";

}  // namespace

WarmPool::WarmPool(store::PoolStore& store, runtime::Runtime& runtime, const ImageCatalog& images,
                   net::NetworkManager* network, boost::asio::thread_pool& workers,
                   std::vector<PoolSpec> specs)
    : store_(store),
      runtime_(runtime),
      images_(images),
      network_(network),
      workers_(workers),
      specs_(std::move(specs)),
      refill_timer_(workers.get_executor()) {}

void WarmPool::TearDown(const std::string& id) {
  Status st = runtime_.Destroy(id, /*keep_disk=*/false);
  if (!st.ok()) spdlog::warn("warm pool member {}: removing: {}", id, st.message());
  if (network_) {
    Status nst = network_->Detach(id);
    if (!nst.ok()) spdlog::warn("warm pool member {}: removing its network: {}", id, nst.message());
  }
  // The row goes last: until then a restart still knows to tear the member down. A failed
  // teardown keeps it, counted in no pool, for a later try.
  Status row = st.ok() ? store_.DeletePoolMember(id)
                       : store_.PutPoolMember({id, kTeardownState, kTeardownState, NowMillis()});
  if (!row.ok()) spdlog::warn("warm pool member {}: updating its row: {}", id, row.message());
}

void WarmPool::RemoveLeftovers() {
  auto left = store_.ListPoolMembers();
  if (left.ok()) {
    for (const auto& m : *left) {
      spdlog::info("warm pool member {}: removing what a previous run left", m.id);
      TearDown(m.id);
    }
  }
}

void WarmPool::StartFilling() {
  for (const auto& s : specs_)
    spdlog::info("warm pool: {} sandboxes of {} (cpu {}, memoryMiB {}, diskMiB {})", s.size,
                 s.image, s.cpu, s.memory_mib, s.disk_mib);
  {
    std::lock_guard lock(mu_);
    filling_ = true;
  }
  ScheduleRefill();
}

void WarmPool::Shutdown() {
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    // An armed refill runs at once, sees stopping_ and ends.
    refill_timer_.cancel();
    idle_.wait(lock, [this] { return !refilling_; });
  }
  auto left = store_.ListPoolMembers();
  if (!left.ok()) return;
  for (const auto& m : *left) TearDown(m.id);
}

void WarmPool::ScheduleRefill() {
  if (specs_.empty()) return;
  std::lock_guard lock(mu_);
  if (!filling_ || refilling_ || stopping_) return;
  refilling_ = true;
  int64_t now = NowMillis();
  wanted_since_ = now;
  ArmRefill(std::max({int64_t{0}, failed_until_ - now, last_claim_ + kRefillQuietMs - now}));
}

void WarmPool::ArmRefill(int64_t delay_ms) {
  // Called with mu_ held (the timer is not thread-safe); the handler runs on a worker.
  refill_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  refill_timer_.async_wait([this](const boost::system::error_code&) {
    RunGuarded(
        "warm pool refill", [this] { Refill(); },
        [this](const std::string&) {
          // As after a failed boot: tried again once the backoff is over.
          {
            std::lock_guard lock(mu_);
            refilling_ = false;
            failed_until_ = NowMillis() + kFailureBackoffMs;
          }
          idle_.notify_all();
          ScheduleRefill();
        });
  });
}

void WarmPool::Refill() {
  {
    std::lock_guard lock(mu_);
    int64_t now = NowMillis();
    int64_t quiet_at = std::min(last_claim_ + kRefillQuietMs, wanted_since_ + kRefillMaxDeferMs);
    if (!stopping_ && quiet_at > now) {
      ArmRefill(quiet_at - now);  // a claim came meanwhile
      return;
    }
    if (stopping_) {
      refilling_ = false;
      idle_.notify_all();
      return;
    }
  }
  // One member per task: between boots the worker is free for API work.
  std::optional<PoolSpec> wanted;
  auto members = store_.ListPoolMembers();
  if (members.ok()) {
    std::map<std::string, int> have;
    for (const auto& m : *members) {
      if (m.state != kTeardownState) {
        ++have[m.pool_key];
      } else if (m.created_at + kTeardownRetryMs < NowMillis()) {
        spdlog::info("warm pool member {}: removing it again", m.id);
        TearDown(m.id);
      }
    }
    for (const auto& s : specs_) {
      if (have[s.Key()] < s.size) {
        wanted = s;
        break;
      }
    }
  }
  bool more = false;
  if (wanted) {
    std::string id = NewId("sbx");
    Status st = Boot(*wanted, id);
    if (!st.ok()) {
      spdlog::warn("warm pool: booting a sandbox of {}: {}", wanted->image, st.message());
      TearDown(id);
      std::lock_guard lock(mu_);
      failed_until_ = NowMillis() + kFailureBackoffMs;
    }
    // After a failure too: the next try waits out the backoff.
    more = true;
  }
  {
    std::lock_guard lock(mu_);
    refilling_ = false;
    if (stopping_) more = false;
  }
  idle_.notify_all();
  if (more) ScheduleRefill();
}

Status WarmPool::Boot(const PoolSpec& spec, const std::string& id) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status(Code::kUnavailable, "adaptd is stopping");
  }
  ASSIGN_OR_RETURN(Image image, images_.Resolve("", spec.image));  // local images only
  ASSIGN_OR_RETURN(runtime::ProcessSpec process, PlanStartup(std::nullopt, image, {}));
  RETURN_IF_ERROR(store_.PutPoolMember({id, spec.Key(), "booting", NowMillis()}));
  runtime::LaunchRequest req;
  req.spec.id = id;
  req.spec.process = process;
  req.spec.cpu = static_cast<int>(spec.cpu);
  req.spec.memory_mib = static_cast<uint64_t>(spec.memory_mib);
  req.spec.hostname = id;
  req.image_rootfs = image.rootfs;
  req.image_layers = image.layers;
  req.disk_mib = static_cast<uint64_t>(spec.disk_mib);
  req.network_none = network_ == nullptr;
  if (network_) {
    ASSIGN_OR_RETURN(net::Attachment attached, network_->Attach(id, PoolMemberNetwork()));
    req.spec.netns_path = attached.netns_path;
    req.spec.resolv_conf = attached.resolv_conf;
  }
  RETURN_IF_ERROR(runtime_.Launch(req));
  WarmUp(id);
  ASSIGN_OR_RETURN(runtime::Observation obs, runtime_.Observe(id));
  if (!obs.monitor_alive || obs.state.phase != runtime::ShimPhase::kRunning)
    return Internal("the pooled sandbox stopped right after its boot");
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Status(Code::kUnavailable, "adaptd is stopping");
  }
  return store_.PutPoolMember({id, spec.Key(), "ready", NowMillis()});
}

void WarmPool::WarmUp(const std::string& id) {
  auto until = std::chrono::steady_clock::now() + kWarmUpWait;
  std::shared_ptr<runtime::AgentSession> agent;
  while (!(agent = runtime_.Agent(id))) {
    if (std::chrono::steady_clock::now() > until) {
      spdlog::info("warm pool member {}: its agent did not connect; commands use runsc exec", id);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // A shell running a program: what a first command loads (linker, libc, sh) gets cached.
  agent::SpawnRequest spawn;
  spawn.argv = {"/bin/sh", "-c", "/bin/true"};
  if (auto d = runtime_.GetExecDefaults(id); d.ok()) {
    spawn.env = d->env;
    spawn.cwd = d->cwd;
    spawn.uid = d->uid;
    spawn.gid = d->gid;
  }
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> ended = done->get_future();
  runtime::AgentCallbacks cb;
  cb.output = [](int, std::string_view) {};
  cb.exit = [done](const runtime::AgentExit&) { done->set_value(); };
  auto channel = agent->Spawn(spawn, std::move(cb));
  if (!channel.ok()) {
    spdlog::info("warm pool member {}: warming it up: {}", id, channel.status().message());
    return;
  }
  if (ended.wait_until(until) != std::future_status::ready)
    spdlog::info("warm pool member {}: its first process did not end in time", id);
}

WarmPool::Claim WarmPool::Take(const store::SandboxConfig& config) {
  PoolFit fit = FitForPool(config, network_ ? network_->options().dns : std::string());
  if (!fit.reason.empty()) return {std::nullopt, fit.reason};
  bool known = false;
  for (const auto& s : specs_) known = known || s.Key() == fit.key;
  if (!known)
    return {std::nullopt, "no warm pool for image " + config.image + " with cpu " +
                              std::to_string(config.cpu) + ", memoryMiB " +
                              std::to_string(config.memory_mib) + ", diskMiB " +
                              std::to_string(config.disk_mib)};
  if (!network_) return {std::nullopt, "the pool's sandboxes have no network"};
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto claimed = store_.ClaimPoolMember(fit.key);
    if (!claimed.ok() || !claimed->has_value()) {
      ScheduleRefill();
      return {std::nullopt, claimed.ok()
                                ? "the warm pool was empty"
                                : "the warm pool could not be read: " + claimed.status().message()};
    }
    std::string id = (*claimed)->id;
    {
      std::lock_guard lock(mu_);
      last_claim_ = NowMillis();
    }
    ScheduleRefill();
    // A member that died while waiting is useless: drop it and try the next.
    auto obs = runtime_.Observe(id);
    if (!obs.ok() || !obs->monitor_alive || obs->state.phase != runtime::ShimPhase::kRunning) {
      spdlog::warn("warm pool member {} is not running; removing it", id);
      Discard(id);
      continue;
    }
    if (network_) {
      Status st = network_->UpdatePolicy(id, config.network);
      if (!st.ok()) {
        Discard(id);
        return {std::nullopt,
                "applying the network policy to a pooled sandbox failed: " + st.message()};
      }
    }
    return {id, ""};
  }
  return {std::nullopt, "the warm pool's sandboxes were not running"};
}

void WarmPool::Discard(const std::string& id) {
  // Claimed members have no row any more; record one so that a crash mid-teardown is seen.
  // Without the marker a crash mid-teardown leaves the sandbox unknown to the reconciler.
  if (Status st = store_.PutPoolMember({id, "discarded", "booting", NowMillis()}); !st.ok())
    spdlog::warn("warm pool member {}: recording the crash marker before teardown: {}", id,
                 st.message());
  boost::asio::post(workers_, Guarded("warm pool member " + id + ": teardown", [this, id] {
                      TearDown(id);
                      ScheduleRefill();
                    }));
}

size_t WarmPool::ReadyCount(const std::string& key) {
  auto members = store_.ListPoolMembers();
  size_t n = 0;
  if (members.ok())
    for (const auto& m : *members) n += m.pool_key == key && m.state == "ready";
  return n;
}

}  // namespace adapt::core

// SandboxService: the typed verbs on sandboxes. REST handlers and (later) MCP tools only
// translate into these. Thread-safe; calls may block briefly (store), never on runsc.
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/org_counter.h"
#include "core/account_service.h"
#include "core/auth.h"
#include "core/event_bus.h"
#include "core/field_names.h"
#include "core/sandbox_lifecycle.h"
#include "core/sandbox_request.h"
#include "core/sandbox_view.h"
#include "core/startup_output.h"
#include "core/waiter.h"

namespace adapt::core {

struct ListSandboxesRequest {
  std::string query;
  int limit = 50;
  std::string cursor;
};

// A create's Idempotency-Key and the caller's fingerprint of the request as it was sent: a
// repeat with the same fingerprint returns the first sandbox, another one is a conflict.
struct IdempotencyRequest {
  std::string key;
  std::string fingerprint;
};

// A stop's or start's answer: the sandbox, and the checkpoint or restore operation that
// GET /v1/operations/{id} follows (core/operation_service.h).
struct PowerChange {
  Sandbox sandbox;
  std::string operation_id;
};

struct DeleteOutcome {
  bool done = false;  // false: cleanup continues in the background (HTTP 202)
};

class ImageService;
class WarmPool;
class SecretService;

class SandboxService {
 public:
  SandboxService(store::Store& store, runtime::Runtime& runtime, SandboxLifecycle& lifecycle,
                 const ImageCatalog& images, boost::asio::thread_pool& workers,
                 std::string default_image);

  // The plan's gpus limit for one more GPU sandbox (and the balance, as a create checks it):
  // kResourceExhausted naming `gpus` when it does not fit. create_gpu_sandbox asks this
  // before it says this host has no GPUs.
  Status CheckGpuLimit(const Principal& who, const FieldNames& names = {});

  // Validates `req` (errors name fields as `names` says), records the sandbox and starts
  // provisioning it in the background.
  Result<Sandbox> Create(const Principal& who, const CreateSandbox& req,
                         const std::optional<IdempotencyRequest>& idempotency,
                         const FieldNames& names = {});
  // Whether `req` may use the image it asks for, as Create judges it first (its organization's
  // saved image by name, an imageId by its reference, then the image policy for req.surface):
  // for a verb that creates its sandboxes later (a job's attempts), so that a refused image
  // is refused when it is asked for. PermissionDenied or InvalidArgument naming the field.
  Status CheckImageChoice(const Principal& who, const CreateSandbox& req,
                          const FieldNames& names = {}) const;
  Result<Sandbox> Get(const Principal& who, const std::string& id);
  // Follows the startup output of sandbox `id` as it is produced (startup_output.cc).
  // Conflict for an interactive sandbox (no startup command).
  Result<StartupOutputFollower> FollowStartup(const Principal& who, const std::string& id);
  // Fills the single-sandbox view's `endpoints` (org id, sandbox id -> endpoints).
  void SetEndpointsView(
      std::function<std::vector<Endpoint>(const std::string&, const std::string&)> fn) {
    endpoints_view_ = std::move(fn);
  }
  Result<SandboxPage> List(const Principal& who, const ListSandboxesRequest& req);
  Result<DeleteOutcome> Delete(const Principal& who, const std::string& id);

  // A fresh instant sandbox with the settings, env and secrets of `id` and its expiry time (not
  // a new TTL), created as Create does (limits, balance); for an automation's retry after an
  // infrastructure failure (sandbox_replace.cc). kConflict for a durable sandbox, kNotFound
  // for one deleted or expired. `id` itself is left as it is. The fresh sandbox carries `id`'s
  // labels but its reserved ones, and `platform_labels` (whose it is).
  Result<Sandbox> Replace(const std::string& org_id, const std::string& id,
                          const std::map<std::string, std::string>& platform_labels);
  // Every organization's sandboxes that are not deleted or being deleted and carry label `key`
  // (a reserved one adaptd set), for recovery at start-up.
  Result<std::vector<store::SandboxRecord>> ListLabelled(const std::string& key);
  // Records a fork of named checkpoint `req.from_checkpoint` of `who`'s organization and
  // restores it in the background (sandbox_fork.cc); returns the fork provisioning and its
  // fork operation (Pending, then Running, Completed once it runs, or Failed with why). The
  // limits, balance and idempotency of Create apply. NotFound (field fromCheckpoint) for
  // another organization's sandbox or a checkpoint not kept; Unsupported when this runtime
  // cannot restore the checkpoint (another runsc version or platform). Errors name fields as
  // `names` says (from_checkpoint, ttl_seconds, labels).
  Result<PowerChange> Fork(const Principal& who, const ForkSandbox& req,
                           const std::optional<IdempotencyRequest>& idempotency,
                           const FieldNames& names = {});
  // Deletes `id` on behalf of the daemon (expiry); returns at once.
  void Expire(const std::string& id);

  // Stops a running sandbox (seed 000 stop_sandbox): a durable one is checkpointed, an
  // instant one's workspace is discarded. Returns the hibernated sandbox and its checkpoint
  // operation (finished: Completed, or Failed when the processes could not be saved).
  // Blocking (minutes for a large durable sandbox). The sandbox is answered as the stop left
  // it, even if a controller has started it again since. Every stop takes one of the
  // organization's places of checkpoint work (checkpoint_work.h): ResourceExhausted at once
  // when it holds them all (adaptd's own callers try again later). `when_busy`: kRefuse for
  // a client's request, which is Conflict at once when the sandbox is busy with another
  // stop, checkpoint or roll back; kWait for adaptd's own callers (controllers,
  // automations), which wait for that one to end.
  Result<PowerChange> Stop(const Principal& who, const std::string& id,
                           WhenBusy when_busy = WhenBusy::kRefuse);
  // Starts a hibernated sandbox in the background; returns it provisioning, and its restore
  // operation (Pending or Running).
  Result<PowerChange> Start(const Principal& who, const std::string& id);
  // Restarts a running sandbox once, so that its processes start again with the sandbox's
  // current environment (attach_sandbox_object_storage): stop without a checkpoint, then
  // start. False when the sandbox is not running (its next start picks the environment up).
  Result<bool> Restart(const std::string& org_id, const std::string& id);
  // Hibernates running sandbox `id` on behalf of the daemon after `idle_ms` without use
  // (idle_tracker.h): the stop above, its note saying why. Blocking; nothing when it no
  // longer runs.
  void HibernateIdle(const std::string& id, int64_t idle_ms);
  // For the idle tracker (IdleTracker::OnIdle: on its thread, without blocking): a place among
  // the organization's checkpoint work (set_checkpoint_work) for hibernating sandbox `id`, and
  // the HibernateIdle to run on a worker holding it; nullopt when the organization holds every
  // place (the tracker asks again later). Fifty sandboxes of one organization idle at the same
  // moment once checkpointed on every worker at once, and the API waited behind them.
  std::optional<std::function<void()>> IdleHibernation(const std::string& id, int64_t idle_ms);
  // The places of checkpoint work each organization has (checkpoint_work.h), shared with
  // CheckpointService; without, no cap. Set before serving.
  void set_checkpoint_work(OrgCounter work) { checkpoint_work_ = std::move(work); }
  // Where a durable sandbox's storage is checked; without it, durable sandboxes are refused.
  void set_volume_service(storage::VolumeService* volumes) { volumes_ = volumes; }

  // Where creates claim pre-booted sandboxes; without one, every create boots.
  void set_warm_pool(WarmPool* pool) { pool_ = pool; }
  // Open egress's resolver when a create names none (adaptd's --dns): recorded in the
  // sandbox's network.dns, so that it shows what the sandbox uses (seed 001: "Public internet
  // mode defaults to 1.1.1.1") and keeps it across restarts. Empty: open mode has no DNS.
  void set_default_dns(std::string dns) { default_dns_ = std::move(dns); }

  // Which images creates accept (image_policy.h); without one, the default policy.
  void set_image_policy(const ImagePolicy* policy) { policy_ = policy; }
  // Where imageId is resolved; without one, imageId is refused as unsupported.
  void set_image_service(ImageService* images) { image_service_ = images; }
  // Where sandbox create's `secrets` are looked up; without one, naming secrets is refused.
  void set_secret_service(SecretService* secrets) { secrets_ = secrets; }
  // The most sandboxes (not deleting, deleted or failed) an organization may have; a create
  // past it is kResourceExhausted. 0: no cap. Set before serving. With an account service,
  // that service folds it into each plan's limits instead.
  void set_max_sandboxes_per_org(int max) { max_per_org_ = max; }
  // Where creates and starts find the organization's plan limits (checked in the transaction
  // that records them); without one, only the cap above applies.
  void set_account_service(AccountService* accounts) { accounts_ = accounts; }
  // Where waits on sandboxes park (AwaitSettled). Set before serving.
  void set_waiter(Waiter* waiter) { waiter_ = waiter; }
  // Calls `done` once sandbox `id` of `who` is no longer provisioning (or is not found), or
  // at `deadline`, holding no thread meanwhile; `ticks` report progress while it waits.
  // Without a waiter, `done` runs at once, on this thread, with kCancelled.
  // (sandbox_await.cc)
  Waiter::Handle AwaitSettled(const Principal& who, const std::string& id,
                              Waiter::Clock::time_point deadline, Waiter::Done done,
                              Waiter::Ticks ticks = {});

 private:
  std::function<std::vector<Endpoint>(const std::string&, const std::string&)> endpoints_view_;
  store::Store& store_;
  runtime::Runtime& runtime_;
  SandboxLifecycle& lifecycle_;
  const ImageCatalog& images_;
  boost::asio::thread_pool& workers_;
  std::string default_image_;
  std::string default_dns_;
  ImageService* image_service_ = nullptr;
  const ImagePolicy* policy_ = nullptr;
  storage::VolumeService* volumes_ = nullptr;
  WarmPool* pool_ = nullptr;
  SecretService* secrets_ = nullptr;
  int max_per_org_ = 0;
  OrgCounter checkpoint_work_;  // see set_checkpoint_work
  AccountService* accounts_ = nullptr;
  Waiter* waiter_ = nullptr;

  // Create's image steps, on the validated `config`: an imageId or a saved image's name
  // becomes its reference, then the image policy judges what the caller chose.
  Status ResolveChosenImage(const Principal& who, const CreateSandbox& create,
                            SandboxConfig& config, const FieldNames& names) const;
  // The single-sandbox view of `r`: its startup output while it runs, and its endpoints.
  Sandbox DetailedView(const store::SandboxRecord& r);
  // The limits that apply to `org_id`'s sandboxes now; kPaymentRequired when its plan has
  // prices and its balance is used up.
  Result<store::SandboxLimits> LimitsOf(const std::string& org_id,
                                        std::optional<store::PlanRecord>* plan = nullptr);
};

}  // namespace adapt::core

// AppService: deployed apps (issue 20, seed 000's deploy_sandbox_app, scale_deployed_app,
// delete_deployed_app). A deploy optionally runs a build command in the running source
// sandbox, packages source_path (a tar made by the agent in the sandbox: symlinks kept as
// links, refused when they point outside the path; zstd-compressed here, size-limited stored
// and unpacked) into an immutable release blob of the object store addressed by the digest
// of its stored bytes, and starts replicas: new restricted instant sandboxes from the
// source's image with no TTL, each downloading the release itself through the storage
// gateway (a release reference: that one blob, read-only, expiring) into its disposable
// /workspace before its start command runs. A deleted app's releases are removed a grace
// period later (the object store's retired blobs, swept by the reconciler). A replica takes
// traffic once its readiness check passes (an HTTP GET of the release's readiness path
// answering 2xx or 3xx, or its port accepting a connection) within the release's readiness
// timeout, and its check runs again every readiness period of the release (failing it the
// release's threshold of times in a row takes its traffic until it passes); one that never
// becomes ready, or that ends, is replaced after a backoff that grows with each failure in a
// row, and the app's status says why. What that supervision learned (the failures in a row,
// the backoff's end, why; each replica's failed checks in a row) is written to the store as it
// changes, so a restart goes on from it. One hostname per app under the ingress domain is
// balanced over the ready replicas: the one with the fewest open connections, round robin
// among equals.
//
// Replicas are recorded with their app (and labelled `platform.app`, a reserved label no caller can
// set) as soon as their sandbox exists; Reconcile, at start-up and then every few seconds, replaces
// replicas whose sandbox ended, finishes deliveries a restart cut short, deletes sandboxes labelled
// for an app that does not know them, and tops up to the wanted count. Thread-safe.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/list_cursor.h"
#include "base/org_counter.h"
#include "core/account_service.h"
#include "core/auth.h"
#include "core/command_service.h"
#include "core/event_bus.h"
#include "core/field_names.h"
#include "core/file_service.h"
#include "core/operation.h"
#include "core/sandbox_service.h"
#include "core/secret_service.h"
#include "net/ingress.h"
#include "net/network_manager.h"
#include "storage/object_store.h"
#include "storage/storage_tokens.h"
#include "store/store.h"

namespace adapt::core {

// Kept per app: the release it serves, the one a deploy rolls out, and the newest others; a
// deploy deletes older ones. Releases count against the object storage quota.
constexpr size_t kMaxAppReleases = 10;
// The daemon's pools for app work, and each organization's share of them: past its share of
// operations a deploy or rollback is refused (429), past its share of deliveries a replica's
// delivery waits in its organization's queue, holding no thread, so that one organization's
// slow builds and rollouts never hold every thread.
constexpr size_t kAppOperationThreads = 4;
constexpr size_t kMaxAppOperationsPerOrg = 2;
constexpr size_t kAppDeliveryThreads = 8;
constexpr size_t kMaxAppDeliveriesPerOrg = kAppDeliveryThreads / 2;

struct AppOptions {
  std::string domain = "adapt.localhost";  // hostnames are <name>-<random>.<domain>
  uint16_t http_port = 0;                  // for the URLs shown
  uint16_t https_port = 0;
  // The most replicas an app may ask for (400 beyond); the plan's app_replicas limit (429
  // beyond) is usually lower.
  int max_replicas = 100;
  // A release's size as stored (zstd) and once unpacked: a bomb stops at the second.
  uint64_t max_release_bytes = 256ull << 20;
  uint64_t max_release_unpacked_bytes = 1ull << 30;
  // How long a deleted app's releases are kept before they are removed.
  std::chrono::seconds release_grace{3600};
  // How long a replica's release reference may be used (a replica fetches once, at start).
  std::chrono::seconds release_link_ttl{24 * 3600};
  // How long a deploy waits for its first replica to boot and receive its release; the
  // release's readiness timeout is added.
  std::chrono::seconds ready_wait{120};
  // How often replicas are reconciled (ended ones replaced, missing ones started). A ready
  // replica's check runs again at its release's own readiness period.
  std::chrono::seconds reconcile_every{5};
};

// A deploy: errors name the fields as here (the edges map their own names).
struct DeployApp {
  std::string sandbox_id;
  std::string name;                        // "": "app"; a-z, 0-9, '-', at most 30
  std::string source_path = "/workspace";  // absolute
  std::string build_command;               // "": no build
  std::string build_path;                  // "": source_path
  int build_timeout_seconds = 600;
  std::string start_command;  // run by /bin/sh -c from /workspace
  int64_t port = 0;           // 1..65535, where the app listens
  int64_t replicas = 1;       // 0..max_replicas
  std::map<std::string, std::string> env;
  std::string readiness_path;               // "": a TCP connect; else "/..." answering 2xx or 3xx
  int64_t readiness_timeout_seconds = 120;  // 1..600, from the app's start
  // A ready replica's check runs again every readiness_period_seconds (1..300); failing it
  // readiness_failure_threshold (1..10) times in a row takes its traffic until it passes.
  int64_t readiness_period_seconds = 5;
  int64_t readiness_failure_threshold = 3;
  std::vector<std::string> secrets;  // organization secrets by name (at most 64)
};

struct AppReleaseView {
  std::string id;
  std::string sha256;
  uint64_t size = 0;
  std::string source_path;
  std::string build_command;
  std::string build_path;
  std::optional<int> build_exit_code;
  std::string build_output;
  std::string start_command;
  int port = 0;
  int64_t created_at_ms = 0;
  std::string readiness_path;
  int readiness_timeout_seconds = 0;
  std::vector<std::string> secrets;  // names only
  int readiness_period_seconds = 0;
  int readiness_failure_threshold = 0;
};

// The wait before a replica is started again after `failures` failures in a row (a replica
// that never became ready, or ended): 2 s, doubling, at most 60 s.
std::chrono::seconds ReplicaRestartDelay(int failures);

struct AppReplicaView {
  std::string sandbox_id;
  std::string release_id;
  // "starting", "ready", or "unready" (it was ready, then failed its check the release's
  // readiness_failure_threshold times in a row: no traffic until it passes again)
  std::string state;
};

// GET /v1/apps/{id}/logs: one replica's latest output.
struct AppReplicaLog {
  std::string sandbox_id;
  std::string release_id;
  std::string state;  // "starting", "ready", or "failed" (the last replica that failed)
  std::string stdout_text;
  std::string stderr_text;
  bool truncated = false;
  std::optional<int64_t> exit_code;
};

struct App {
  std::string id;
  std::string name;
  std::string hostname;
  std::string url;       // https
  std::string http_url;  // http
  std::string source_sandbox_id;
  std::string release_id;
  int replicas = 0;        // wanted
  int ready_replicas = 0;  // serving now
  // "ready" (every wanted replica serves), "starting", "failing" (a replica failed since the
  // last became ready; status_message says why) or "stopped" (0 wanted).
  std::string status;
  std::string status_message;
  int restarts = 0;  // replicas that failed in a row, since one was last ready
  std::vector<AppReplicaView> replica_list;
  std::optional<AppReleaseView> release;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
};

// What Deploy and Rollback answer: their operation (GET /v1/operations/{id}, kind
// "app.deploy" or "app.rollback"), and the app once it finished within the wait.
struct AppDeployment {
  Operation operation;     // as GET /v1/operations/{id} answered it when Deploy returned
  std::optional<App> app;  // nullopt: still running; poll the operation
};

class AppService {
 public:
  AppService(store::Store& store, SandboxService& sandboxes, CommandService& commands,
             FileService& files, storage::ObjectStore& objects, net::NetworkManager& network,
             AppOptions options);
  ~AppService();
  void SetPorts(uint16_t http_port, uint16_t https_port);
  // Where the plan's app_replicas limit comes from; without it, only max_replicas applies.
  void set_account_service(AccountService* accounts) { accounts_ = accounts; }
  // Where the app's `secrets` are checked when it deploys; without one, naming secrets is
  // refused. (Each replica captures their values when it is created.)
  void set_secret_service(SecretService* secrets) { secrets_ = secrets; }
  // Where app events are announced (they are recorded in the store's event stream).
  void set_event_bus(EventBus* bus) { bus_ = bus; }
  // Where replicas download their release: the storage gateway's port (at the host end of
  // each replica's veth) and the tokens that sign release references. Set before Start.
  void SetReleaseGateway(storage::StorageTokens* tokens, uint16_t port) {
    release_tokens_ = tokens;
    gateway_port_ = port;
  }
  // Called with a hostname whose route went away (to close its open connections).
  void OnRemoved(std::function<void(const std::string&)> fn) { on_removed_ = std::move(fn); }

  // Deploys a new app, or a new release of the organization's app of that name (its new
  // replicas serve before the old ones go; when none becomes ready the app keeps its release
  // and the error says why), as an operation ("app.deploy") that survives a restart: a deploy
  // a crash cut short is Failed at start-up, the app keeping its previous release (a new app
  // is removed unless a replica of it was ready). Checks the request, records the operation,
  // then waits up to `wait` for the build, the packaging and the first ready replica
  // (AppOptions::ready_wait bounds that): an answer with the app when it finished, the error
  // when it failed, otherwise the operation to poll. NotFound for another organization's
  // source, Conflict when it is not running or has egress "none", InvalidArgument for bad
  // fields, unknown secrets or a failed build (its exit code and output in the message),
  // kPayloadTooLarge past the size, kResourceExhausted past the plan's app_replicas.
  // `idempotency`: an Idempotency-Key (scope "app_deploy"), written with the deploy's
  // operation. A replay deploys nothing and answers at once: the app when that deploy
  // completed, else its operation (still running, or Failed with why); Conflict for the key
  // with another request, or when the app it deployed has been deleted since;
  // InvalidArgument unless the key is 1 to 255 bytes.
  Result<AppDeployment> Deploy(
      const Principal& who, const DeployApp& request, std::chrono::milliseconds wait,
      const FieldNames& names = {},
      const std::optional<store::IdempotencyKey>& idempotency = std::nullopt);
  // A newest-first page of the organization's apps; InvalidArgument for a bad limit or cursor.
  Result<Page<App>> List(const Principal& who, const PageRequest& page);
  Result<App> Get(const Principal& who, const std::string& id);
  // Sets the wanted replica count; new replicas start at once, extra ones are deleted.
  Result<App> Scale(const Principal& who, const std::string& id, int64_t replicas,
                    const FieldNames& names = {});
  // Deletes the replicas, the route and the releases; the source sandbox is untouched.
  Status Delete(const Principal& who, const std::string& id);
  // One newest-first page of the app's releases; InvalidArgument for a bad limit or cursor.
  Result<Page<AppReleaseView>> Releases(const Principal& who, const std::string& id,
                                        const PageRequest& page);
  // Each replica's latest output (the last 64 KiB of each stream, env values redacted),
  // oldest first, then the last replica that failed while the app is failing.
  Result<std::vector<AppReplicaLog>> Logs(const Principal& who, const std::string& id);
  // Serves `release_id` again ("": the release before the current one) the way a redeploy
  // does: its replicas start, then the others go; none ready: the app stays as it was. An
  // operation ("app.rollback", its release recorded from the start) like a deploy's: checks
  // the request, records it, waits up to `wait` for the rollout and answers the app, the
  // error, or the operation to poll; one a crash cut short is Failed at start-up, the app
  // keeping the release it records. NotFound for another organization's app, InvalidArgument
  // for an unknown release, Conflict when there is no release before or a rollout is under way.
  Result<AppDeployment> Rollback(const Principal& who, const std::string& id,
                                 const std::string& release_id, std::chrono::milliseconds wait,
                                 const FieldNames& names = {});
  // The ingress's lookup: the next ready replica, the others as fallbacks.
  std::optional<net::IngressBackend> Route(const std::string& host);
  // A sandbox ended (stopped, deleted, died; the lifecycle's end hook, once that is recorded):
  // when it is a replica, the apps are reconciled now rather than at the next pass, so that
  // its app's status and route stop counting it at once. One store read for any other sandbox.
  void SandboxEnded(const std::string& sandbox_id);

  // Start-up, before the API answers: settles the deploys a crash cut short and reads the
  // replicas' failures the store kept, so the first GET after a restart already shows them.
  // Start runs it when it has not run.
  void Recover();
  // Brings every app to its wanted replicas (see above) and starts doing so every
  // reconcile_every. Call once, after the sandboxes were reconciled.
  void Start();
  // adaptd is stopping: requests waiting on an operation answer it as it is now (Running; the
  // next start settles it), and the work under way sees stopping_. Before the API server's
  // stop, which waits for every handler.
  void BeginStop();
  // How many requests of one organization may wait on their deploys and rollbacks at once,
  // each holding an API worker (0: no cap); past it a request answers its operation at once,
  // as when its waitSeconds run out (202, to be polled). Set before serving.
  void set_max_waiting_per_org(size_t n) { waiting_ = OrgCounter(n); }
  // How many of `org_id`'s requests wait on their operations now.
  size_t WaitingRequests(const std::string& org_id) const { return waiting_.Held(org_id); }
  void Stop();

 private:
  App View(const store::AppRecord& app);
  Status CheckDeploy(const DeployApp& request, const FieldNames& names) const;
  struct OperationOutcome;
  // Waits up to `wait` for `outcome`, or until BeginStop; whether it is done. Not at all when
  // `org_id` has set_max_waiting_per_org requests waiting already.
  bool AwaitOutcome(const std::string& org_id, OperationOutcome& outcome,
                    std::chrono::milliseconds wait);
  // What a deploy under an Idempotency-Key, whose operation is `operation_id`, answers: after
  // up to `wait` for that operation, when it still runs.
  Result<AppDeployment> DeployedEarlier(const Principal& who, const std::string& operation_id,
                                        std::chrono::milliseconds wait);
  // kResourceExhausted when `replicas` is past the organization's plan's app_replicas.
  Status CheckReplicaLimit(const std::string& org_id, int64_t replicas,
                           const FieldNames& names) const;
  // The deploy's work after its checks (Deploy runs it on deploys_): build, package, roll out.
  Result<App> RunDeploy(const Principal& who, const DeployApp& request, const FieldNames& names,
                        store::AppRecord app, bool existing, store::OperationRecord op);
  // A place among the organization's kMaxAppOperationsPerOrg running deploys and rollbacks,
  // held until the token goes; kResourceExhausted, naming the limit, when all are taken.
  Result<std::shared_ptr<void>> TakeOperationPlace(const std::string& org_id, const char* what);
  // What deploys and rollbacks share: runs `work` on deploys_ as `op` (recorded Running),
  // finishes the operation with its outcome, and waits up to `wait` for it. `place`
  // (TakeOperationPlace's) is given back once the work has ended.
  Result<AppDeployment> RunOperation(store::OperationRecord op, std::chrono::milliseconds wait,
                                     std::function<Result<App>()> work,
                                     std::shared_ptr<void> place);
  // Start-up: fails each deploy or rollback operation a crash cut short and leaves its app
  // consistent.
  void SettleOperations();
  // Checks again each ready (or unready) replica whose release's readiness period has passed
  // since its last check; the release's threshold of failures in a row takes its traffic away
  // until it passes. Answers when the next check is due.
  std::chrono::steady_clock::time_point RecheckReplicas();
  // Start-up: the troubles the store kept (the backoff goes on from them).
  void LoadTroubles();
  Result<store::AppReleaseRecord> Package(const Principal& who, const store::SandboxRecord& source,
                                          const DeployApp& request, const FieldNames& names);
  Status Build(const Principal& who, const DeployApp& request, store::AppReleaseRecord& release,
               const FieldNames& names);
  // Starts `app.replicas` replicas of `release` and waits for one to be ready; then an
  // `existing` app's other replicas go (none ready: they stay, and a new app is removed).
  // `claim`: the caller's ClaimRollout of the app (dropped when this returns); without one,
  // Rollout claims it.
  Result<App> Rollout(const Principal& who, store::AppRecord app, bool existing,
                      const store::AppReleaseRecord& release, std::shared_ptr<void> claim = {});
  // Claims the app for one rollout (deploying_) until the answer is dropped: the reconciler,
  // scales and other rollouts leave it alone meanwhile. Conflict when one is under way.
  Result<std::shared_ptr<void>> ClaimRollout(const store::AppRecord& app);
  // Claims `key` in `claimed` (guarded by mu_) until the answer is dropped; Conflict, saying
  // `busy`, when it is claimed already.
  Result<std::shared_ptr<void>> Claim(std::set<std::string>& claimed, std::string key,
                                      const std::string& busy);
  // Creates one replica sandbox of `release` and hands it its release reference in the
  // background (Deliver); the replica then downloads the release itself.
  Result<std::string> StartReplica(const store::AppRecord& app,
                                   const store::AppReleaseRecord& release);
  void Deliver(store::AppReplicaRecord replica);
  // Runs the replica's Deliver on deliveries_ when its organization has fewer than
  // kMaxAppDeliveriesPerOrg running, else queues it for the next of them to end.
  void PostDelivery(const store::AppReplicaRecord& replica);
  // Posts the replica's Deliver, holding one of its organization's places (DeliveryEnded
  // after it).
  void RunDelivery(const store::AppReplicaRecord& replica);
  // A delivery of `org_id` ended: its place goes to the organization's next queued one.
  void DeliveryEnded(const std::string& org_id);
  // Ends replica's delivery as failed with `why` (unless the replica was removed meanwhile):
  // also where a delivery that threw lands.
  void EndDelivery(const store::AppReplicaRecord& replica, const std::string& why);
  // ForgetReplica, then DeleteReplicaSandboxes: only where app_mu_ is not held.
  void RemoveReplica(const store::AppReplicaRecord& replica);
  // Drops the replica's row and what supervision knows of it, at once; under app_mu_, so that
  // a readiness check cannot write it back. Its sandbox is the caller's to delete.
  void ForgetReplica(const store::AppReplicaRecord& replica);
  // Deletes the forgotten replicas' sandboxes, each up to seconds: never under app_mu_, which
  // every deploy, scale and reconcile of every app waits for.
  void DeleteReplicaSandboxes(const std::vector<store::AppReplicaRecord>& replicas);
  // A rollout's old replicas, already written `draining` (Route picks ready ones only): each
  // finishes the requests it holds, up to kDrainLimit, then goes.
  void DrainThenRemove(const std::vector<store::AppReplicaRecord>& old);
  // True once a replica of `release_id` is ready, false at the deadline.
  bool AwaitReady(const std::string& app_id, const std::string& release_id,
                  std::chrono::steady_clock::time_point deadline);
  // `at_once`: replicas start now, not after the failure backoff (a scale asked for them).
  // REQUIRES: app_mu_ held. Returns the replicas it forgot, whose sandboxes the caller
  // deletes once app_mu_ is released.
  [[nodiscard]] std::vector<store::AppReplicaRecord> ReconcileApp(const store::AppRecord& app,
                                                                  bool at_once = false);
  // A replica of `app_id` failed (never ready, or ended): counted once for the backoff and the
  // app's status, and written to the store.
  void NoteFailure(const store::AppReplicaRecord& replica, const std::string& why);
  // A replica of the app is ready: its trouble, if any, is over (in memory and in the store).
  void ClearTrouble(const std::string& app_id);
  // Records an event of the app in its organization's event stream (`/v1/events`, `event:
  // app`): "app.deployed", "app.deploy_failed", "app.scaled", "app.deleted", "replica.ready",
  // "replica.failed". Best effort: a failed write is logged.
  void Emit(const std::string& org_id, const std::string& app_id, const std::string& type,
            const std::string& replica_id, const std::string& message);
  void ReconcileAll();
  // The URL replica `sandbox_id` downloads `release` from: the gateway at the host end of its
  // veth, a release reference valid for release_link_ttl.
  Result<std::string> ReleaseLink(const store::AppReleaseRecord& release,
                                  const std::string& sandbox_id);
  // Removes a deleted app's release blobs `grace` from now (0: at once); those another
  // app's release still uses are left as they are.
  void RetireReleases(const std::vector<std::string>& blobs, std::chrono::seconds grace);
  // Deletes app `app_id`'s oldest releases until `max_releases` are left (never the one it
  // serves nor `keep_id`) and then their blobs, unless another release shares them.
  // REQUIRES: app_mu_ held (a deploy sharing a blob must not see it go meanwhile).
  void PruneReleases(const std::string& app_id, const std::string& keep_id, size_t max_releases);
  std::string LastOutput(const std::string& org_id, const std::string& sandbox_id);

  store::Store& store_;
  SandboxService& sandboxes_;
  CommandService& commands_;
  FileService& files_;
  storage::ObjectStore& objects_;
  net::NetworkManager& network_;
  // Deliveries block (a sandbox's start, the release's upload, the port's first answer): their
  // own threads, so that the daemon's workers, which run the waits' ends, are never all held.
  boost::asio::thread_pool deliveries_{kAppDeliveryThreads};
  boost::asio::thread_pool deploys_{kAppOperationThreads};  // RunOperation: an operation's work
  AppOptions options_;
  AccountService* accounts_ = nullptr;
  SecretService* secrets_ = nullptr;
  EventBus* bus_ = nullptr;
  storage::StorageTokens* release_tokens_ = nullptr;
  uint16_t gateway_port_ = 0;
  std::function<void(const std::string&)> on_removed_;
  std::mutex mu_;
  std::condition_variable changed_;       // a replica's state changed
  std::map<std::string, uint64_t> next_;  // guarded by mu_: round robin, by app
  // Guarded by mu_: each replica's open connections through the ingress, by sandbox id.
  std::map<std::string, std::shared_ptr<std::atomic<int>>> open_;
  struct Trouble {
    int failures = 0;
    std::chrono::steady_clock::time_point retry_at;
    std::string why;
    store::AppReplicaRecord replica;  // the one that failed last
  };
  std::map<std::string, Trouble> trouble_;  // guarded by mu_: by app id
  // Guarded by mu_: replicas whose failure NoteFailure counted (their sandbox id), so that the
  // delivery that saw it and the reconcile that removes the replica count it once.
  std::set<std::string> counted_;
  // Guarded by mu_: when each ready (or unready) replica's next readiness check is due.
  std::map<std::string, std::chrono::steady_clock::time_point> next_check_;
  std::map<std::string, std::string> delivering_;  // guarded by mu_: sandbox id -> app id
  uint64_t deliveries_ended_ = 0;                  // guarded by mu_: bumped as one leaves it
  std::set<std::string> deploying_;                // guarded by mu_: app ids
  // Guarded by mu_: "org/name" of each deploy under way, from before it looks the name up
  // until it ends, so that two first deploys of one name cannot each make an app.
  std::set<std::string> deploying_names_;
  // Guarded by mu_: each organization's deliveries running on deliveries_, and those queued
  // for a place (PostDelivery); no entry for an organization with neither.
  std::map<std::string, size_t> delivering_per_org_;
  std::map<std::string, std::deque<store::AppReplicaRecord>> queued_deliveries_;
  OrgCounter operations_{kMaxAppOperationsPerOrg};  // running deploys and rollbacks
  // Guarded by mu_: the operations RunOperation runs, by id, until each has ended.
  std::map<std::string, std::shared_ptr<OperationOutcome>> outcomes_;
  std::mutex app_mu_;      // one deploy, scale or reconcile at a time
  bool stopping_ = false;  // guarded by mu_
  // Guarded by mu_: SandboxEnded saw a replica end, or a delivery ended; the reconciler's next
  // turn reconciles even when the wake came while it was not waiting (a notify alone would be
  // lost then).
  bool reconcile_now_ = false;
  std::atomic<bool> stop_requested_{false};
  OrgCounter waiting_;  // requests waiting in AwaitOutcome, per organization  // BeginStop: read by
                        // waits that do not hold mu_
  bool recovered_ = false;  // Recover has run
  std::thread reconciler_;
};

}  // namespace adapt::core

// AppService's supervision of replicas over a MemoryStore and a FakeRuntime: a replica that
// ended is counted and its trouble (failures in a row, the backoff's end, why) is written to
// the store, so a new AppService over that store (adaptd restarted) goes on from it: the count
// continues, the backoff still holds replicas back, and the app's status still says why; a
// ready replica's checks follow its release's readiness period and threshold, and their count
// is kept on the replica's record; a delivery cut short by adaptd stopping is no failure, and
// a stop while a delivery polls its replica's readiness returns; readiness settings out of
// bounds are refused.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <set>
#include <thread>

#include "core/app_service.h"
#include "core/command_service.h"
#include "core/file_service.h"
#include "core/sandbox_service_fixture.h"
#include "core/waiter.h"
#include "net/network_manager.h"
#include "storage/object_store.h"
#include "storage/storage_tokens.h"

namespace adapt::core {
namespace {

using namespace std::chrono_literals;

// A loopback port nothing listens on (bound, read, closed).
int FreeLoopbackPort() {
  boost::asio::io_context io;
  boost::asio::ip::tcp::acceptor acceptor(
      io, {boost::asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(0)});
  return acceptor.local_endpoint().port();
}

class AppSupervisionTest : public testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    commands_ = std::make_unique<CommandService>(store_, runtime_, *images_);
    files_ = std::make_unique<FileService>(store_, runtime_);
    objects_ = std::make_unique<storage::ObjectStore>(store_, dir_ + "/objects");
    network_ = std::make_unique<net::NetworkManager>(store_, net::NetworkOptions{});
    NewService();
    app_.id = NewId("app");
    app_.org_id = org_;
    app_.name = "web";
    app_.hostname = "web-abc.adapt.localhost";
    // A replica can be started from it (once no backoff holds it back).
    store::SandboxRecord source = NewSandbox("running");
    Insert(source);
    app_.source_sandbox_id = source.id;
    app_.replicas = 1;
    app_.created_at = app_.updated_at = NowMillis();
    app_.release_id = Release(5, 3);
    ASSERT_TRUE(store_.PutApp(app_).ok());
  }
  void TearDown() override {
    apps_.reset();
    SandboxServiceFixture::TearDown();
  }

  // A new AppService over the same store: what adaptd has after a restart.
  void NewService(AppOptions options = {}) {
    apps_.reset();
    apps_ = std::make_unique<AppService>(store_, *service_, *commands_, *files_, *objects_,
                                         *network_, options);
  }

  std::string Release(int period, int threshold) {
    store::AppReleaseRecord r;
    r.id = NewId("rel");
    r.app_id = app_.id;
    r.org_id = org_;
    r.start_command = "python3 -m http.server 8000";
    r.port = 8000;
    r.readiness_period_seconds = period;
    r.readiness_failure_threshold = threshold;
    r.created_at = NowMillis();
    EXPECT_TRUE(store_.PutAppRelease(r, 0).ok());
    return r.id;
  }

  // A replica of the app's release whose sandbox has `status` (ended with `exit_code`).
  std::string Replica(const std::string& status, std::optional<int> exit_code,
                      const std::string& state) {
    store::SandboxRecord s = NewSandbox(status);
    s.config.labels["platform.app"] = app_.id;
    s.result.exit_code = exit_code;
    Insert(s);
    EXPECT_TRUE(
        store_.PutAppReplica({s.id, app_.id, org_, app_.release_id, state, NowMillis()}).ok());
    return s.id;
  }

  store::AppTroubleRecord StoredTrouble() {
    auto troubles = store_.ListAppTroubles();
    EXPECT_TRUE(troubles.ok());
    EXPECT_EQ(troubles.ok() ? troubles->size() : 0, 1u);
    return troubles.ok() && !troubles->empty() ? troubles->front() : store::AppTroubleRecord{};
  }

  App Get() {
    auto app = apps_->Get(Caller(), app_.id);
    EXPECT_TRUE(app.ok()) << app.status().message();
    return app.ok() ? *app : App{};
  }

  std::optional<store::AppReplicaRecord> StoredReplica(const std::string& id) {
    auto replicas = store_.ListAppReplicas(app_.id);
    if (replicas.ok())
      for (const auto& r : *replicas)
        if (r.sandbox_id == id) return r;
    return std::nullopt;
  }

  // The replica's record once `done` holds (a bound, not a timing).
  store::AppReplicaRecord ReplicaWhen(
      const std::string& id, const std::function<bool(const store::AppReplicaRecord&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    for (;;) {
      auto r = StoredReplica(id);
      if (r && done(*r)) return *r;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "replica " << id << " never got there";
        return r.value_or(store::AppReplicaRecord{});
      }
      std::this_thread::sleep_for(50ms);
    }
  }

  // Holds the fixture's one worker (a sandbox's boot waits) until Release or its end.
  struct HeldWorker {
    explicit HeldWorker(boost::asio::thread_pool& workers) {
      boost::asio::post(workers, [held = hold.get_future().share()] { held.wait(); });
    }
    ~HeldWorker() { Release(); }
    void Release() {
      if (!released) hold.set_value();
      released = true;
    }
    std::promise<void> hold;
    bool released = false;
  };

  // A Waiter for the service's settled waits, for one test.
  struct ScopedWaiter {
    ScopedWaiter(EventBus& events, SandboxService& service)
        : waiter(events, pool), service(service) {
      service.set_waiter(&waiter);
    }
    ~ScopedWaiter() {
      service.set_waiter(nullptr);
      waiter.Shutdown();
      pool.join();
    }
    boost::asio::thread_pool pool{1};
    Waiter waiter;
    SandboxService& service;
  };

  std::unique_ptr<CommandService> commands_;
  std::unique_ptr<FileService> files_;
  std::unique_ptr<storage::ObjectStore> objects_;
  std::unique_ptr<net::NetworkManager> network_;
  std::unique_ptr<AppService> apps_;
  store::AppRecord app_;
};

TEST_F(AppSupervisionTest, AReplicasFailureIsWrittenAndARestartGoesOnCountingFromIt) {
  const int64_t before = NowMillis();
  const std::string first = Replica("failed", 7, "ready");
  apps_->Start();
  store::AppTroubleRecord t = StoredTrouble();
  EXPECT_EQ(t.org_id, org_);
  EXPECT_EQ(t.failures, 1);
  EXPECT_GT(t.retry_at, before);  // a backoff, not an immediate start
  EXPECT_EQ(t.replica_sandbox_id, first);
  EXPECT_EQ(t.replica_release_id, app_.release_id);
  EXPECT_NE(t.why.find("replica " + first), std::string::npos) << t.why;
  EXPECT_NE(t.why.find("exit code 7"), std::string::npos) << t.why;
  EXPECT_FALSE(StoredReplica(first).has_value());

  // adaptd restarts: the app's status is as it was, and the next failure is the second.
  NewService();
  const std::string second = Replica("failed", 9, "ready");
  apps_->Start();
  t = StoredTrouble();
  EXPECT_EQ(t.failures, 2);
  EXPECT_EQ(t.replica_sandbox_id, second);
  App app = Get();
  EXPECT_EQ(app.restarts, 2);
  EXPECT_EQ(app.status, "failing");
  EXPECT_NE(app.status_message.find("exit code 9"), std::string::npos) << app.status_message;
  EXPECT_NE(app.status_message.find("2 failed in a row"), std::string::npos) << app.status_message;

  // Once the app is deleted, nothing of its trouble stays.
  ASSERT_TRUE(apps_->Delete(Caller(), app_.id).ok());
  auto troubles = store_.ListAppTroubles();
  ASSERT_TRUE(troubles.ok());
  EXPECT_TRUE(troubles->empty());
}

// A sandbox labelled for an app that no replica record knows (a crash between the two) is
// deleted; the organization's own sandbox with a look-alike label never is: only adaptd can set
// the reserved platform.app (a caller's "adapt-app" label once had its sandbox deleted).
TEST_F(AppSupervisionTest, OnlyASandboxAdaptdLabelledForAnAppIsTakenForALostReplica) {
  store::SandboxRecord lost = NewSandbox("running");
  lost.config.labels["platform.app"] = app_.id;
  Insert(lost);
  store::SandboxRecord own = NewSandbox("running");
  own.config.labels["adapt-app"] = app_.id;
  Insert(own);
  apps_->Start();
  EXPECT_NE(StatusOf(lost.id), "running");
  EXPECT_EQ(StatusOf(own.id), "running");
}

TEST_F(AppSupervisionTest, TheBackoffTheStoreKeptHoldsReplicasBackAfterARestart) {
  ASSERT_TRUE(
      store_
          .PutAppTrouble({app_.id, org_, 4, NowMillis() + 60'000,
                          "replica sbx_gone ended with exit code 7", "sbx_gone", app_.release_id})
          .ok());
  apps_->Start();
  auto replicas = store_.ListAppReplicas(app_.id);
  ASSERT_TRUE(replicas.ok());
  EXPECT_TRUE(replicas->empty()) << "a replica started before the backoff's end";
  App app = Get();
  EXPECT_EQ(app.restarts, 4);
  EXPECT_EQ(app.status, "failing");
  EXPECT_NE(app.status_message.find("replica sbx_gone ended with exit code 7"), std::string::npos)
      << app.status_message;
  EXPECT_NE(app.status_message.find("4 failed in a row, the next starts in"), std::string::npos)
      << app.status_message;
  // A scale starts its replicas at once, backoff or not: the source gives one. In the fake
  // runtime that replica then fails and supervision may remove it at any moment, so its start
  // is read from the sandboxes' status events, which stay.
  auto before = store_.ListEvents(org_, "", 0, 1000);
  ASSERT_TRUE(before.ok());
  const int64_t after = before->empty() ? 0 : before->back().seq;
  ASSERT_TRUE(apps_->Scale(Caller(), app_.id, 1).ok());
  auto events = store_.ListEvents(org_, "", after, 1000);
  ASSERT_TRUE(events.ok());
  std::set<std::string> started;
  for (const auto& e : *events)
    if (!e.sandbox_id.empty() && e.sandbox_id != app_.source_sandbox_id)
      started.insert(e.sandbox_id);
  EXPECT_EQ(started.size(), 1u);
}

// A replica stopped or deleted by its tenant (or dead) stops counting as soon as the lifecycle's
// end hook says so: here the reconciler's own pass and the replica's next check are an hour and
// five minutes away, and the replica is still replaced (its app said `ready` until the next
// pass before: ~20 s in a chaos run, the ingress answering 503 meanwhile).
TEST_F(AppSupervisionTest, AReplicaThatEndsIsReplacedWithoutWaitingForTheNextPass) {
  AppOptions options;
  options.reconcile_every = std::chrono::hours(1);
  NewService(options);
  app_.release_id = Release(300, 10);
  ASSERT_TRUE(store_.PutApp(app_).ok());
  const std::string id = Replica("running", std::nullopt, "ready");
  apps_->Start();
  ASSERT_TRUE(StoredReplica(id).has_value());
  EXPECT_EQ(Get().ready_replicas, 1);
  // A sandbox of no app, or an id the store does not know, is passed over.
  store::SandboxRecord other = Insert(NewSandbox("running"));
  apps_->SandboxEnded(other.id);
  apps_->SandboxEnded("sbx_unknown");
  // What the lifecycle does: the end recorded, then the hook.
  store::SandboxRecord stopped = Stored(id);
  stopped.status = "stopped";
  ASSERT_TRUE(store_.UpdateSandbox(stopped, {"running"}).ok());
  apps_->SandboxEnded(id);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (StoredReplica(id) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(StoredReplica(id).has_value()) << "the ended replica still counted";
  App app = Get();
  for (const auto& r : app.replica_list) EXPECT_NE(r.sandbox_id, id);
  EXPECT_EQ(app.ready_replicas, 0);
  EXPECT_NE(app.status, "ready");
}

TEST_F(AppSupervisionTest, ReadyReplicasChecksFollowTheReleasesThresholdAndTheirCountIsKept) {
  // Checked every second; 2 failures in a row take its traffic. The fake network gives the
  // replica no address, so each check fails.
  app_.release_id = Release(1, 2);
  ASSERT_TRUE(store_.PutApp(app_).ok());
  const std::string id = Replica("running", std::nullopt, "ready");
  apps_->Start();
  store::AppReplicaRecord r = ReplicaWhen(id, [](const auto& r) { return r.state == "unready"; });
  EXPECT_GE(r.check_failures, 2);
  EXPECT_EQ(r.check_failure, "its port 8000 has no network address");
  // The event follows the replica's record (a write of its own): waited for, within a bound.
  std::vector<store::EventRecord> unready;
  for (const auto deadline = std::chrono::steady_clock::now() + 60s;;) {
    auto events = store_.ListEvents(org_, "", 0, 100);
    ASSERT_TRUE(events.ok());
    unready.clear();
    for (const auto& e : *events)
      if (e.status == "replica.unready") unready.push_back(e);
    if (!unready.empty() || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(unready.size(), 1u);
  EXPECT_EQ(unready[0].replica_id, id);
  EXPECT_NE(unready[0].message.find("(2 checks in a row)"), std::string::npos)
      << unready[0].message;

  // adaptd restarts: the replica is still unready, and the app still says why.
  NewService();
  apps_->Start();
  App app = Get();
  EXPECT_EQ(app.status, "failing");
  EXPECT_NE(app.status_message.find("replica " + id + " failed its readiness check"),
            std::string::npos)
      << app.status_message;
  EXPECT_NE(app.status_message.find("has no network address"), std::string::npos)
      << app.status_message;
  // The count goes on from the stored one.
  const int kept = StoredReplica(id)->check_failures;
  r = ReplicaWhen(id, [kept](const auto& r) { return r.check_failures > kept; });
  EXPECT_EQ(r.state, "unready");
}

TEST_F(AppSupervisionTest, ADeliveryCutShortByAStoppingAdaptdIsNoFailureOfTheReplicas) {
  // The one worker is held: the new replica's sandbox stays provisioning and its delivery
  // waits for it to settle when adaptd stops. It is let go once the waiter is gone (its
  // provisioning would signal the waiter's waits from the worker meanwhile: ASan).
  HeldWorker held(workers_);  // released however the test ends (TearDown joins the worker)
  {
    ScopedWaiter scoped(events_, *service_);
    Waiter& waiter = scoped.waiter;
    ASSERT_TRUE(apps_->Scale(Caller(), app_.id, 1).ok());
    auto replicas = store_.ListAppReplicas(app_.id);
    ASSERT_TRUE(replicas.ok());
    ASSERT_EQ(replicas->size(), 1u);
    EXPECT_EQ(replicas->front().state, "starting");
    // The delivery is waiting (a bound, not a timing), not merely queued.
    for (int i = 0; i < 1000 && waiter.size() == 0; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_EQ(waiter.size(), 1u);
    apps_->Stop();
    auto troubles = store_.ListAppTroubles();
    ASSERT_TRUE(troubles.ok());
    EXPECT_TRUE(troubles->empty()) << "a backoff was written: " << troubles->front().why;
    // The next adaptd finds no backoff and no failure to report.
    NewService();
    App app = Get();
    EXPECT_EQ(app.restarts, 0);
    EXPECT_NE(app.status, "failing") << app.status_message;
  }
}

// One organization's deliveries hold at most kMaxAppDeliveriesPerOrg of the delivery threads:
// the rest wait in its queue, and another organization's replica is delivered meanwhile.
TEST_F(AppSupervisionTest, AnOrganizationsDeliveriesPastItsShareQueueWithoutHoldingAThread) {
  // The one worker is held: every replica's sandbox stays provisioning, and each delivery
  // running waits for it to settle (counted by the waiter).
  HeldWorker held(workers_);
  {
    ScopedWaiter scoped(events_, *service_);
    Waiter& waiter = scoped.waiter;
    const size_t wanted = kMaxAppDeliveriesPerOrg + 2;
    ASSERT_TRUE(apps_->Scale(Caller(), app_.id, static_cast<int64_t>(wanted)).ok());
    ASSERT_EQ(store_.ListAppReplicas(app_.id)->size(), wanted);
    for (int i = 0; i < 1000 && waiter.size() < kMaxAppDeliveriesPerOrg; ++i)
      std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(200ms);  // room for a delivery past the share to show
    EXPECT_EQ(waiter.size(), kMaxAppDeliveriesPerOrg);
    // Another organization's app, scaled now, is delivered at once.
    const std::string other_org = store_.CreateOrg({NewId("org"), "other", false, NowMillis()})->id;
    store::SandboxRecord source = NewSandbox("running");
    source.org_id = other_org;
    Insert(source);
    store::AppRecord theirs = app_;
    theirs.id = NewId("app");
    theirs.org_id = other_org;
    theirs.hostname = "web-def.adapt.localhost";
    theirs.source_sandbox_id = source.id;
    theirs.replicas = 0;
    store::AppReleaseRecord release = *store_.GetAppRelease(app_.id, app_.release_id);
    release.id = NewId("rel");
    release.app_id = theirs.id;
    release.org_id = other_org;
    ASSERT_TRUE(store_.PutAppRelease(release, 0).ok());
    theirs.release_id = release.id;
    ASSERT_TRUE(store_.PutApp(theirs).ok());
    auto scaled = apps_->Scale(Principal{other_org, "key_2", false}, theirs.id, 1);
    ASSERT_TRUE(scaled.ok()) << scaled.status().message();
    for (int i = 0; i < 1000 && waiter.size() < kMaxAppDeliveriesPerOrg + 1; ++i)
      std::this_thread::sleep_for(10ms);
    EXPECT_EQ(waiter.size(), kMaxAppDeliveriesPerOrg + 1);
    apps_->Stop();
  }
}

// adaptd stops while a delivery polls its replica's readiness (here every probe is refused,
// and the release allows 120 s): Stop() returns, the delivery ending as cut short (no failure
// written). The loop once called its abandon, which takes the service's lock, with that lock
// held: the delivery deadlocked, and Stop() joined it for good.
TEST_F(AppSupervisionTest, AStopWhileADeliveryPollsReadinessReturns) {
  // The worker is held while the replica gets what its delivery needs before its sandbox
  // runs: a network record (the release reference's host end, and the address its readiness
  // is probed at) and a gateway to sign the reference with.
  HeldWorker held(workers_);
  ScopedWaiter scoped(events_, *service_);
  store::AppReleaseRecord refused;
  refused.id = NewId("rel");
  refused.app_id = app_.id;
  refused.org_id = org_;
  refused.start_command = "true";
  refused.port = FreeLoopbackPort();
  refused.created_at = NowMillis();
  ASSERT_TRUE(store_.PutAppRelease(refused, 0).ok());
  app_.release_id = refused.id;
  ASSERT_TRUE(store_.PutApp(app_).ok());
  storage::StorageTokens tokens(store_, dir_ + "/storage-tokens.key");
  apps_->SetReleaseGateway(&tokens, 9);
  // The release reference's upload: a stand-in that takes it and exits 0.
  runtime_.ServeNextExec({"/bin/sh", "-c", "cat > /dev/null"});
  ASSERT_TRUE(apps_->Scale(Caller(), app_.id, 1).ok());
  auto replicas = store_.ListAppReplicas(app_.id);
  ASSERT_TRUE(replicas.ok());
  ASSERT_EQ(replicas->size(), 1u);
  const std::string replica = replicas->front().sandbox_id;
  store::NetworkRecord network;
  network.sandbox_id = replica;
  network.slot = 1;
  // Loopback, on a port just found free: each readiness probe is refused, on this host only.
  network.address = network.host_address = "127.0.0.1";
  ASSERT_TRUE(store_.PutNetwork(network).ok());
  held.Release();
  // The upload ran (a bound, not a timing), then the readiness loop's first passes.
  for (int i = 0; i < 1000 && runtime_.CountCalls(runtime::FakeRuntime::Op::kExec) == 0; ++i)
    std::this_thread::sleep_for(10ms);
  ASSERT_EQ(runtime_.CountCalls(runtime::FakeRuntime::Op::kExec), 1);
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(StoredReplica(replica).value_or(store::AppReplicaRecord{}).state, "starting");
  auto stopped = std::make_shared<std::promise<void>>();
  auto done = stopped->get_future();
  std::thread([this, stopped] {
    apps_->Stop();
    stopped->set_value();
  }).detach();
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready) << "Stop() is stuck on a delivery";
  auto troubles = store_.ListAppTroubles();
  ASSERT_TRUE(troubles.ok());
  EXPECT_TRUE(troubles->empty()) << "a backoff was written: " << troubles->front().why;
}

TEST_F(AppSupervisionTest, ReadinessSettingsOutOfBoundsAreRefusedNamingTheField) {
  struct Case {
    int64_t period, threshold;
    const char* field;
  };
  for (const Case& c :
       {Case{0, 3, "readiness_period_seconds"}, Case{301, 3, "readiness_period_seconds"},
        Case{5, 0, "readiness_failure_threshold"}, Case{5, 11, "readiness_failure_threshold"}}) {
    DeployApp req;
    req.sandbox_id = NewId("sbx");
    req.start_command = "python3 -m http.server 8000";
    req.port = 8000;
    req.readiness_period_seconds = c.period;
    req.readiness_failure_threshold = c.threshold;
    auto done = apps_->Deploy(Caller(), req, 0ms);
    EXPECT_EQ(done.status().code(), Code::kInvalidArgument) << c.field;
    EXPECT_EQ(done.status().field(), c.field);
  }
  auto open = store_.ListAllOpenOperations();
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty());
}

// Two first deploys of one name at once: the second is refused while the first runs, rather
// than both finding no app of that name and each making one.
TEST_F(AppSupervisionTest, ASecondDeployOfANameUnderWayIsRefusedNotMadeAgain) {
  store::SandboxRecord source = NewSandbox("running", false, true);
  source.config.network.egress = "open";
  Insert(source);
  DeployApp req;
  req.name = "api";
  req.sandbox_id = source.id;
  req.start_command = "python3 -m http.server 8000";
  req.port = 8000;
  req.replicas = 0;
  // The first's packaging is a host process that answers nothing for a while.
  runtime_.ServeNextExec({"/bin/sh", "-c", "sleep 1"});
  auto first = apps_->Deploy(Caller(), req, 0ms);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->operation.phase, "Running");
  auto second = apps_->Deploy(Caller(), req, 0ms);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kConflict) << second.status().message();
  // Another name deploys meanwhile.
  req.name = "other";
  runtime_.ServeNextExec({"/bin/sh", "-c", "sleep 1"});
  EXPECT_TRUE(apps_->Deploy(Caller(), req, 0ms).ok());
  // Once the first ended, the name is free again.
  for (int i = 0; i < 3000; ++i) {
    auto op = store_.GetOperation(org_, first->operation.id);
    ASSERT_TRUE(op.ok());
    if (op->phase != "Running") break;
    std::this_thread::sleep_for(10ms);
  }
  req.name = "api";
  runtime_.ServeNextExec({"/bin/sh", "-c", "sleep 1"});
  // At once: the claim is given back before the operation's end is recorded.
  auto again = apps_->Deploy(Caller(), req, 0ms);
  EXPECT_TRUE(again.ok()) << again.status().message();
}

}  // namespace
}  // namespace adapt::core

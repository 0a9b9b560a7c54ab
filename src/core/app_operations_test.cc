// AppService's rollbacks as operations (kind "app.rollback"), over a MemoryStore and a
// FakeRuntime: the apps here want 0 replicas, so a rollout starts no sandbox and the whole
// rollback runs in memory. The checks answer before anything is recorded; the rollback's
// operation ends Completed with the app on the release; a wait of 0 answers the operation; an
// operation a crash cut short is settled at start-up (Failed, the app keeping the release it
// records, the cut-short rollout's replicas removed), as a deploy's is.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "core/app_service.h"
#include "core/command_service.h"
#include "core/file_service.h"
#include "core/sandbox_service_fixture.h"
#include "net/network_manager.h"
#include "os/files.h"
#include "storage/object_store.h"

namespace adapt::core {
namespace {

using namespace std::chrono_literals;

class AppOperationsTest : public testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    commands_ = std::make_unique<CommandService>(store_, runtime_, *images_);
    files_ = std::make_unique<FileService>(store_, runtime_);
    objects_ = std::make_unique<storage::ObjectStore>(store_, dir_ + "/objects");
    network_ = std::make_unique<net::NetworkManager>(store_, net::NetworkOptions{});
    apps_ = std::make_unique<AppService>(store_, *service_, *commands_, *files_, *objects_,
                                         *network_, AppOptions{});
    // "web" on release b, with a older, wanting no replica.
    app_.id = NewId("app");
    app_.org_id = org_;
    app_.name = "web";
    app_.hostname = "web-abc.adapt.localhost";
    app_.source_sandbox_id = NewId("sbx");
    app_.replicas = 0;
    app_.created_at = app_.updated_at = NowMillis();
    older_ = Release();
    newer_ = Release();
    app_.release_id = newer_;
    ASSERT_TRUE(store_.PutApp(app_).ok());
  }
  void TearDown() override {
    apps_.reset();
    SandboxServiceFixture::TearDown();
  }

  std::string Release() {
    store::AppReleaseRecord r;
    r.id = NewId("rel");
    r.app_id = app_.id;
    r.org_id = org_;
    r.start_command = "python3 -m http.server 8000";
    r.port = 8000;
    r.created_at = NowMillis();
    EXPECT_TRUE(store_.PutAppRelease(r, 0).ok());
    return r.id;
  }

  // Gives `other` (a store a test makes faulty) the organization, the app and its releases.
  void MirrorInto(store::MemoryStore& other) {
    ASSERT_TRUE(other.CreateOrg({org_, "acme", false, NowMillis()}).ok());
    ASSERT_TRUE(other.PutApp(app_).ok());
    auto releases = store_.ListAppReleases(app_.id);
    ASSERT_TRUE(releases.ok());
    for (const auto& r : *releases) ASSERT_TRUE(other.PutAppRelease(r, 0).ok());
  }

  store::AppRecord StoredApp() {
    auto a = store_.GetApp(org_, app_.id);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return a.ok() ? *a : store::AppRecord{};
  }

  store::OperationRecord StoredOperation(const std::string& id) {
    auto op = store_.GetOperation(org_, id);
    EXPECT_TRUE(op.ok()) << op.status().message();
    return op.ok() ? *op : store::OperationRecord{};
  }

  // The operation once it is no longer Running (a bound, not a timing: the rollout here is
  // a few store writes).
  store::OperationRecord Ended(const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    store::OperationRecord op = StoredOperation(id);
    while (op.phase == "Running" && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
      op = StoredOperation(id);
    }
    return op;
  }

  // An operation adaptd recorded and then died before finishing.
  // An operation of app `app_id` (the fixture's unless named) left Running by a crash.
  std::string CutShort(const char* kind, const std::string& release_id,
                       const std::string& app_id = "") {
    store::OperationRecord op;
    op.id = NewId("op");
    op.org_id = org_;
    op.kind = kind;
    op.sandbox_id = app_.source_sandbox_id;
    op.app_id = app_id.empty() ? app_.id : app_id;
    op.release_id = release_id;
    op.phase = "Running";
    op.started_at = NowMillis();
    EXPECT_TRUE(store_.PutOperation(op).ok());
    return op.id;
  }

  std::unique_ptr<CommandService> commands_;
  std::unique_ptr<FileService> files_;
  std::unique_ptr<storage::ObjectStore> objects_;
  std::unique_ptr<net::NetworkManager> network_;
  std::unique_ptr<AppService> apps_;
  store::AppRecord app_;
  std::string older_, newer_;
};

// A MemoryStore whose next GetOperation throws once armed: in a rollback, the read-back of its
// operation before it is finished (a disk fault the SQLite store can raise as an exception).
class StoreThatThrowsOnOperationRead : public store::MemoryStore {
 public:
  Result<store::OperationRecord> GetOperation(const std::string& org_id,
                                              const std::string& id) override {
    if (armed.exchange(false)) throw std::runtime_error("disk I/O error");
    return MemoryStore::GetOperation(org_id, id);
  }
  std::atomic<bool> armed{false};
};

// The request waiting on the operation is answered the error at once: it was kept its whole
// wait, and a replay under its Idempotency-Key likewise (the operation never told its end).
TEST_F(AppOperationsTest, AnOperationWhoseFinishThrowsAnswersTheErrorWithoutWaitingItOut) {
  StoreThatThrowsOnOperationRead faulty;
  MirrorInto(faulty);
  if (HasFatalFailure()) return;
  AppService apps(faulty, *service_, *commands_, *files_, *objects_, *network_, AppOptions{});
  faulty.armed = true;
  // A bound, not a timing: before the fix the answer came only when this wait ran out.
  auto done = apps.Rollback(Caller(), app_.id, older_, 20s);
  EXPECT_FALSE(faulty.armed);  // it did throw
  ASSERT_FALSE(done.ok()) << "answered the operation " << done->operation.phase;
  EXPECT_EQ(done.status().code(), Code::kInternal);
  EXPECT_NE(done.status().message().find("disk I/O error"), std::string::npos)
      << done.status().message();
}

// A MemoryStore whose next PutApp (a rollout's write of the app) waits until released.
class StoreThatHoldsAnAppWrite : public store::MemoryStore {
 public:
  Status PutApp(const store::AppRecord& app) override {
    if (armed.exchange(false)) {
      entered.set_value();
      released.get_future().wait();
    }
    return MemoryStore::PutApp(app);
  }
  std::atomic<bool> armed{false};
  std::promise<void> entered, released;
};

// adaptd's stop does not wait out a request's waitSeconds on an operation still running (the
// API server's stop waits for every handler): BeginStop answers it as it is, Running.
TEST_F(AppOperationsTest, BeginStopAnswersARequestWaitingOnAnOperationAsItIsNow) {
  StoreThatHoldsAnAppWrite held;
  MirrorInto(held);
  if (HasFatalFailure()) return;
  AppService apps(held, *service_, *commands_, *files_, *objects_, *network_, AppOptions{});
  held.armed = true;
  auto answer = std::async(std::launch::async,
                           [&] { return apps.Rollback(Caller(), app_.id, older_, 600s); });
  held.entered.get_future().wait();  // the rollout is under way, and held
  apps.BeginStop();
  // A bound, not a timing: before BeginStop existed the answer came only with the release.
  bool answered = answer.wait_for(10s) == std::future_status::ready;
  held.released.set_value();
  auto done = answer.get();
  EXPECT_TRUE(answered) << "the request waited for the operation after BeginStop";
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_FALSE(done->app.has_value());
  EXPECT_EQ(done->operation.phase, "Running");
  apps.Stop();
}

// A MemoryStore whose GetApp, once armed, reads the app and then waits until released when a
// thread other than the request's calls it: the rollback's work, reading the app at its start.
class StoreThatHoldsTheWorksAppRead : public store::MemoryStore {
 public:
  Result<store::AppRecord> GetApp(const std::string& org_id, const std::string& id) override {
    auto app = MemoryStore::GetApp(org_id, id);
    if (std::this_thread::get_id() != request_thread && armed.exchange(false)) {
      entered.set_value();
      released.get_future().wait();  // answered as it was before the wait
    }
    return app;
  }
  std::atomic<std::thread::id> request_thread;
  std::atomic<bool> armed{false};
  std::promise<void> entered, released;
};

// An app deleted while its rollback rolls out stays deleted: the rollout's write of the app
// (an upsert) inserted it again, with its replicas.
TEST_F(AppOperationsTest, AnAppDeletedDuringItsRollbackStaysDeleted) {
  StoreThatHoldsTheWorksAppRead held;
  MirrorInto(held);
  if (HasFatalFailure()) return;
  AppService apps(held, *service_, *commands_, *files_, *objects_, *network_, AppOptions{});
  held.armed = true;
  auto answer = std::async(std::launch::async, [&] {
    held.request_thread = std::this_thread::get_id();
    return apps.Rollback(Caller(), app_.id, older_, 60s);
  });
  held.entered.get_future().wait();  // the work read the app; the delete comes now
  ASSERT_TRUE(apps.Delete(Caller(), app_.id).ok());
  held.released.set_value();
  auto done = answer.get();
  EXPECT_EQ(held.GetApp(org_, app_.id).status().code(), Code::kNotFound);
  EXPECT_FALSE(done.ok() && done->app.has_value()) << "the rollback answered the deleted app";
  apps.Stop();
}

// A MemoryStore whose PutApp calls (the rollouts' writes of their apps) wait until released.
class StoreThatHoldsAppWrites : public store::MemoryStore {
 public:
  Status PutApp(const store::AppRecord& app) override {
    if (holding) {
      {
        std::lock_guard lock(mu);
        ++held;
        cv.notify_all();
      }
      released.wait();
    }
    return MemoryStore::PutApp(app);
  }
  void AwaitHeld(int n) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, 10s, [&] { return held >= n; });
  }
  std::atomic<bool> holding{false};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::mutex mu;
  std::condition_variable cv;
  int held = 0;
};

// One organization's requests wait on their operations with at most its share of the API's
// workers: past set_max_waiting_per_org, a request answers its operation at once (Running).
TEST_F(AppOperationsTest, WaitsPastTheOrganizationsShareAnswerTheOperationAtOnce) {
  StoreThatHoldsAppWrites held;
  ASSERT_TRUE(held.CreateOrg({org_, "acme", false, NowMillis()}).ok());
  store::AppRecord second = app_;
  second.id = NewId("app");
  second.name = "api";
  second.hostname = "api-abc.adapt.localhost";
  auto releases = store_.ListAppReleases(app_.id);
  ASSERT_TRUE(releases.ok());
  std::string second_older;
  for (auto r : *releases) {
    ASSERT_TRUE(held.PutAppRelease(r, 0).ok());
    const bool was_older = r.id == older_;
    r.app_id = second.id;
    r.id = NewId("rel");
    if (was_older)
      second_older = r.id;
    else
      second.release_id = r.id;
    ASSERT_TRUE(held.PutAppRelease(r, 0).ok());
  }
  ASSERT_TRUE(held.PutApp(app_).ok());
  ASSERT_TRUE(held.PutApp(second).ok());
  AppService apps(held, *service_, *commands_, *files_, *objects_, *network_, AppOptions{});
  apps.set_max_waiting_per_org(1);
  held.holding = true;
  auto waiting =
      std::async(std::launch::async, [&] { return apps.Rollback(Caller(), app_.id, older_, 60s); });
  held.AwaitHeld(1);  // its rollout is held
  for (int i = 0; i < 1000 && apps.WaitingRequests(org_) == 0; ++i)
    std::this_thread::sleep_for(10ms);
  const bool waits = apps.WaitingRequests(org_) == 1;  // and its request waits
  if (!waits) held.release.set_value();                // so that the test can end
  ASSERT_TRUE(waits);
  // A bound, not a timing: the answer comes while the rollout is still held.
  auto at_once = apps.Rollback(Caller(), second.id, second_older, 60s);
  ASSERT_TRUE(at_once.ok()) << at_once.status().message();
  EXPECT_FALSE(at_once->app.has_value());
  EXPECT_EQ(at_once->operation.phase, "Running");
  held.release.set_value();
  auto done = waiting.get();
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_TRUE(done->app.has_value());
  EXPECT_EQ(done->app->release_id, older_);
  apps.Stop();
}

// One organization runs at most kMaxAppOperationsPerOrg deploys and rollbacks at once: the
// next is refused before an operation is recorded, naming the limit, and goes once one ends.
// Another organization's are not counted with them.
TEST_F(AppOperationsTest, AnOrganizationsOperationsPastItsShareAreRefusedUntilOneEnds) {
  StoreThatHoldsAppWrites held;
  ASSERT_TRUE(held.CreateOrg({org_, "acme", false, NowMillis()}).ok());
  const std::string other_org = held.CreateOrg({NewId("org"), "other", false, NowMillis()})->id;
  struct Made {
    std::string id, older;
  };
  auto make = [&](const std::string& org_id, const std::string& name) {
    store::AppRecord a = app_;
    a.id = NewId("app");
    a.org_id = org_id;
    a.name = name;
    a.hostname = name + "-abc.adapt.localhost";
    store::AppReleaseRecord r;
    r.app_id = a.id;
    r.org_id = org_id;
    r.start_command = "python3 -m http.server 8000";
    r.port = 8000;
    r.created_at = NowMillis();
    r.id = NewId("rel");
    EXPECT_TRUE(held.PutAppRelease(r, 0).ok());
    const std::string older = r.id;
    r.id = NewId("rel");
    EXPECT_TRUE(held.PutAppRelease(r, 0).ok());
    a.release_id = r.id;
    EXPECT_TRUE(held.PutApp(a).ok());
    return Made{a.id, older};
  };
  std::vector<Made> mine;
  for (size_t i = 0; i <= kMaxAppOperationsPerOrg; ++i)
    mine.push_back(make(org_, "web" + std::to_string(i)));
  Made theirs = make(other_org, "web");
  AppService apps(held, *service_, *commands_, *files_, *objects_, *network_, AppOptions{});
  held.holding = true;
  std::vector<std::future<Result<AppDeployment>>> running;
  for (size_t i = 0; i < kMaxAppOperationsPerOrg; ++i)
    running.push_back(std::async(std::launch::async, [&, i] {
      return apps.Rollback(Caller(), mine[i].id, mine[i].older, 60s);
    }));
  held.AwaitHeld(1);  // the first rollout is held (the others wait for it)
  for (int i = 0; i < 1000 && held.ListAllOpenOperations()->size() < kMaxAppOperationsPerOrg; ++i)
    std::this_thread::sleep_for(10ms);
  auto refused = apps.Rollback(Caller(), mine.back().id, mine.back().older, 0ms);
  Principal other{other_org, "k", false};
  auto elsewhere = apps.Rollback(other, theirs.id, theirs.older, 0ms);
  held.release.set_value();
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find(std::to_string(kMaxAppOperationsPerOrg) +
                                            " app deploys or rollbacks running"),
            std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(elsewhere.ok()) << elsewhere.status().message();
  for (auto& r : running) {
    auto done = r.get();
    EXPECT_TRUE(done.ok() && done->app.has_value()) << done.status().message();
  }
  // Places given back: it goes now.
  auto later = apps.Rollback(Caller(), mine.back().id, mine.back().older, 60s);
  ASSERT_TRUE(later.ok()) << later.status().message();
  ASSERT_TRUE(later->app.has_value());
  EXPECT_EQ(later->app->release_id, mine.back().older);
  apps.Stop();
}

TEST_F(AppOperationsTest, ARollbackIsAnOperationThatEndsWithTheAppOnTheEarlierRelease) {
  auto done = apps_->Rollback(Caller(), app_.id, "", 60s);
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_TRUE(done->app.has_value());
  EXPECT_EQ(done->app->release_id, older_);
  EXPECT_EQ(done->operation.kind, "app.rollback");
  EXPECT_EQ(done->operation.phase, "Completed");
  EXPECT_EQ(done->operation.app_id, app_.id);
  EXPECT_EQ(done->operation.release_id, older_);
  EXPECT_EQ(done->operation.sandbox_id, app_.source_sandbox_id);
  EXPECT_FALSE(done->operation.error.has_value());
  store::OperationRecord op = StoredOperation(done->operation.id);
  EXPECT_EQ(op.phase, "Completed");
  EXPECT_GT(op.finished_at, 0);
  EXPECT_EQ(StoredApp().release_id, older_);
  // Named, the newer release serves again the same way.
  done = apps_->Rollback(Caller(), app_.id, newer_, 60s);
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_TRUE(done->app.has_value());
  EXPECT_EQ(done->app->release_id, newer_);
  EXPECT_EQ(StoredApp().release_id, newer_);
}

TEST_F(AppOperationsTest, AWaitOfZeroAnswersTheOperationWhichThenEndsCompleted) {
  auto done = apps_->Rollback(Caller(), app_.id, older_, 0ms);
  ASSERT_TRUE(done.ok()) << done.status().message();
  // The rollout may already have ended: then the answer is the app, as with any wait.
  if (!done->app) {
    EXPECT_EQ(done->operation.phase, "Running");
    EXPECT_EQ(done->operation.release_id, older_);
    EXPECT_FALSE(done->operation.finished_at.has_value());
  }
  store::OperationRecord op = Ended(done->operation.id);
  EXPECT_EQ(op.phase, "Completed") << op.error;
  EXPECT_EQ(op.kind, "app.rollback");
  EXPECT_EQ(StoredApp().release_id, older_);
}

TEST_F(AppOperationsTest, ARollbackToTheReleaseServingCompletesWithTheAppAsItIs) {
  auto done = apps_->Rollback(Caller(), app_.id, newer_, 60s);
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_TRUE(done->app.has_value());
  EXPECT_EQ(done->app->release_id, newer_);
  EXPECT_EQ(done->operation.phase, "Completed");
}

TEST_F(AppOperationsTest, BadRequestsAreRefusedBeforeAnOperationIsRecorded) {
  Principal other{store_.CreateOrg({NewId("org"), "other", false, NowMillis()})->id, "k", false};
  EXPECT_EQ(apps_->Rollback(other, app_.id, "", 60s).status().code(), Code::kNotFound);
  EXPECT_EQ(apps_->Rollback(Caller(), "app_nosuch", "", 60s).status().code(), Code::kNotFound);
  EXPECT_EQ(apps_->Rollback(Caller(), "../x", "", 60s).status().code(), Code::kNotFound);
  auto unknown = apps_->Rollback(Caller(), app_.id, "rel_nosuch", 60s);
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  EXPECT_EQ(unknown.status().field(), "release_id");
  Principal unregistered = Caller();
  unregistered.registered = false;
  EXPECT_EQ(apps_->Rollback(unregistered, app_.id, "", 60s).status().code(),
            Code::kPermissionDenied);
  app_.release_id = older_;  // nothing before the oldest release
  ASSERT_TRUE(store_.PutApp(app_).ok());
  auto none = apps_->Rollback(Caller(), app_.id, "", 60s);
  EXPECT_EQ(none.status().code(), Code::kConflict);
  EXPECT_NE(none.status().message().find("has no release before " + older_), std::string::npos)
      << none.status().message();
  auto open = store_.ListAllOpenOperations();
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty());
  EXPECT_EQ(StoredApp().release_id, older_);
}

TEST_F(AppOperationsTest, ARollbackACrashCutShortFailsAtStartUpAndTheAppKeepsItsRelease) {
  // The cut-short rollout had started a replica of the older release.
  store::SandboxRecord replica = NewSandbox("running");
  replica.config.labels["platform.app"] = app_.id;
  Insert(replica);
  ASSERT_TRUE(
      store_.PutAppReplica({replica.id, app_.id, org_, older_, "starting", NowMillis()}).ok());
  const std::string cut = CutShort(kAppRollbackOperation, older_);
  // One whose release the app already records had rolled out: it completes.
  const std::string rolled_out = CutShort(kAppRollbackOperation, newer_);
  // A deploy's is settled by the same code, in its own words.
  const std::string deploy = CutShort(kAppDeployOperation, older_);
  apps_->Start();
  store::OperationRecord op = StoredOperation(cut);
  EXPECT_EQ(op.phase, "Failed");
  EXPECT_EQ(op.error, "adaptd restarted during the rollback; app web keeps release " + newer_);
  EXPECT_GT(op.finished_at, 0);
  EXPECT_EQ(StoredOperation(rolled_out).phase, "Completed");
  EXPECT_EQ(StoredOperation(deploy).error,
            "adaptd restarted during the deploy; app web keeps release " + newer_);
  EXPECT_EQ(StoredApp().release_id, newer_);
  // The reconcile removed the older release's replica.
  auto replicas = store_.ListAppReplicas(app_.id);
  ASSERT_TRUE(replicas.ok());
  EXPECT_TRUE(replicas->empty());
  auto open = store_.ListAllOpenOperations();
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty());
}

TEST_F(AppOperationsTest, ARollbackOfAnAppDeletedMeanwhileFailsAtStartUpSayingSo) {
  const std::string cut = CutShort(kAppRollbackOperation, older_);
  ASSERT_TRUE(store_.DeleteApp(org_, app_.id).ok());
  apps_->Start();
  store::OperationRecord op = StoredOperation(cut);
  EXPECT_EQ(op.phase, "Failed");
  EXPECT_EQ(op.error, "adaptd restarted during the rollback; app " + app_.id + " is gone");
}

TEST_F(AppOperationsTest, AFirstDeployCutShortBeforeItsAppWasWrittenLeavesNoReleaseOrBlob) {
  // The deploy recorded its release (and stored its blob), then adaptd died before the app's
  // row was written: nothing could ever delete that release.
  ASSERT_TRUE(objects_->Init().ok());
  std::string sha;
  uint64_t size = 0;
  bool given = false;
  auto blob = objects_->PutBlob(
      [&](char* buf, size_t n) -> long {
        if (given || n == 0) return 0;
        given = true;
        buf[0] = 'x';
        return 1;
      },
      1 << 20, &sha, &size);
  ASSERT_TRUE(blob.ok()) << blob.status().message();
  const std::string blob_path = dir_ + "/objects/blobs/" + *blob;
  ASSERT_TRUE(os::Exists(blob_path));
  store::AppReleaseRecord orphan;
  orphan.id = NewId("rel");
  orphan.app_id = NewId("app");  // never written
  orphan.org_id = org_;
  orphan.blob = *blob;
  orphan.port = 8000;
  orphan.created_at = NowMillis();
  ASSERT_TRUE(store_.PutAppRelease(orphan, 0).ok());
  const std::string cut = CutShort(kAppDeployOperation, orphan.id, orphan.app_id);
  apps_->Start();
  EXPECT_EQ(StoredOperation(cut).error, "adaptd restarted during the deploy; nothing was deployed");
  auto left = store_.ListAppReleases(orphan.app_id);
  ASSERT_TRUE(left.ok());
  EXPECT_TRUE(left->empty());
  EXPECT_FALSE(os::Exists(blob_path));
  // The app that exists keeps its releases.
  auto kept = store_.ListAppReleases(app_.id);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->size(), 2u);
  // The store deletes nothing of an app that exists.
  auto none = store_.DeleteReleasesOfMissingApp(app_.id);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(store_.ListAppReleases(app_.id)->size(), 2u);
}

}  // namespace
}  // namespace adapt::core

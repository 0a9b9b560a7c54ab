// AppStore's contract (store/app_store.h), against SQLite and MemoryStore alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/ids.h"
#include "store/sqlite_store_test_fixture.h"

namespace adapt::store {
namespace {

using testing_support::StoreTest;

AppRecord App(const std::string& org_id, const std::string& hostname) {
  AppRecord a;
  a.id = NewId("app");
  a.org_id = org_id;
  a.name = "web";
  a.hostname = hostname;
  a.source_sandbox_id = NewId("sbx");
  a.release_id = NewId("rel");
  a.replicas = 2;
  a.created_at = a.updated_at = 1000;
  return a;
}

AppReleaseRecord Release(const AppRecord& app) {
  AppReleaseRecord r;
  r.id = app.release_id;
  r.app_id = app.id;
  r.org_id = app.org_id;
  r.blob = "blob-" + app.id;
  r.sha256 = std::string(64, 'a');
  r.size = 10240;
  r.source_path = "/workspace/site";
  r.build_command = "make";
  r.build_path = "/workspace";
  r.build_exit_code = 0;
  r.build_output = "built\n";
  r.start_command = "python3 -m http.server 8000";
  r.port = 8000;
  r.env = {{"TOKEN", "app-secret-value"}};
  r.readiness_path = "/healthz";
  r.readiness_timeout_seconds = 30;
  r.readiness_period_seconds = 2;
  r.readiness_failure_threshold = 7;
  r.secrets = {"API_TOKEN", "DB_URL"};
  r.created_at = 1000;
  return r;
}

TEST_P(StoreTest, AppsReleasesAndReplicasRoundTripAndStayInTheirOrganization) {
  AppRecord a = App(org_.id, "web-abc.example");
  ASSERT_TRUE(store_->PutApp(a).ok());
  ASSERT_TRUE(store_->PutAppRelease(Release(a), 0).ok());
  AppReplicaRecord rep{"sbx_one", a.id, org_.id, a.release_id, "starting", 1001};
  ASSERT_TRUE(store_->PutAppReplica(rep).ok());
  rep.state = "ready";
  ASSERT_TRUE(store_->PutAppReplica(rep).ok());
  rep.check_failures = 2;
  rep.check_failure = "GET /healthz on port 8000 answered 503";
  ASSERT_TRUE(store_->PutAppReplica(rep).ok());
  Reopen();
  auto got = store_->GetApp(org_.id, a.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->hostname, "web-abc.example");
  EXPECT_EQ(got->replicas, 2);
  EXPECT_EQ(store_->GetApp(other_org_.id, a.id).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->ListApps(other_org_.id)->empty());
  EXPECT_EQ(store_->FindAppByHostname("web-abc.example")->id, a.id);
  auto release = store_->GetAppRelease(a.id, a.release_id);
  ASSERT_TRUE(release.ok()) << release.status().message();
  EXPECT_EQ(release->env.at("TOKEN"), "app-secret-value");
  EXPECT_EQ(release->build_exit_code, 0);
  EXPECT_EQ(release->port, 8000);
  EXPECT_EQ(release->readiness_path, "/healthz");
  EXPECT_EQ(release->readiness_timeout_seconds, 30);
  EXPECT_EQ(release->readiness_period_seconds, 2);
  EXPECT_EQ(release->readiness_failure_threshold, 7);
  EXPECT_EQ(release->secrets, (std::vector<std::string>{"API_TOKEN", "DB_URL"}));
  auto replicas = store_->ListAppReplicas(a.id);
  ASSERT_EQ(replicas->size(), 1u);
  EXPECT_EQ((*replicas)[0].state, "ready");
  EXPECT_EQ((*replicas)[0].check_failures, 2);
  EXPECT_EQ((*replicas)[0].check_failure, "GET /healthz on port 8000 answered 503");
  auto blobs = store_->ListReferencedBlobs();
  EXPECT_NE(std::find(blobs->begin(), blobs->end(), "blob-" + a.id), blobs->end());

  EXPECT_EQ(store_->PutApp(App(org_.id, "web-abc.example")).code(), Code::kConflict);
  EXPECT_EQ(store_->DeleteApp(other_org_.id, a.id).status().code(), Code::kNotFound);
  auto deleted = store_->DeleteApp(org_.id, a.id);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, std::vector<std::string>{"blob-" + a.id});
  EXPECT_TRUE(store_->ListAppReplicas(a.id)->empty());
  EXPECT_TRUE(store_->ListAppReleases(a.id)->empty());
}

TEST_P(StoreTest, TheReleasesOfAnAppNeverWrittenAreDeletedThoseOfAnAppThatExistsAreNot) {
  AppRecord kept = App(org_.id, "kept.example");
  ASSERT_TRUE(store_->PutApp(kept).ok());
  ASSERT_TRUE(store_->PutAppRelease(Release(kept), 0).ok());
  AppRecord missing = App(org_.id, "missing.example");  // its row is never written
  ASSERT_TRUE(store_->PutAppRelease(Release(missing), 0).ok());
  auto none = store_->DeleteReleasesOfMissingApp(kept.id);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(store_->ListAppReleases(kept.id)->size(), 1u);
  auto blobs = store_->DeleteReleasesOfMissingApp(missing.id);
  ASSERT_TRUE(blobs.ok()) << blobs.status().message();
  EXPECT_EQ(*blobs, std::vector<std::string>{"blob-" + missing.id});
  EXPECT_TRUE(store_->ListAppReleases(missing.id)->empty());
  auto referenced = store_->ListReferencedBlobs();
  EXPECT_EQ(std::find(referenced->begin(), referenced->end(), "blob-" + missing.id),
            referenced->end());
}

TEST_P(StoreTest, PruningKeepsTheServingReleaseTheOneRolledOutAndTheNewestOthers) {
  AppRecord a = App(org_.id, "pruned.example");
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    AppReleaseRecord r = Release(a);
    r.id = NewId("rel");
    r.blob = "blob-" + std::to_string(i);
    ids.push_back(r.id);
    ASSERT_TRUE(store_->PutAppRelease(r, 0).ok());
  }
  a.release_id = ids[0];  // serving the oldest (rolled back)
  ASSERT_TRUE(store_->PutApp(a).ok());
  auto blobs = store_->PruneAppReleases(a.id, ids[2], 4);
  ASSERT_TRUE(blobs.ok()) << blobs.status().message();
  std::sort(blobs->begin(), blobs->end());
  EXPECT_EQ(*blobs, (std::vector<std::string>{"blob-1", "blob-3"}));
  auto releases = store_->ListAppReleases(a.id);
  ASSERT_TRUE(releases.ok());
  std::vector<std::string> left;
  for (const auto& r : releases.value()) left.push_back(r.id);
  EXPECT_EQ(left, (std::vector<std::string>{ids[5], ids[4], ids[2], ids[0]}));
  // Within the limit nothing more goes.
  EXPECT_TRUE(store_->PruneAppReleases(a.id, "", 4)->empty());
}

TEST_P(StoreTest, ObjectBytesCountSiteAndAppReleasesOfTheOrganizationOnly) {
  AppRecord a = App(org_.id, "counted.example");
  ASSERT_TRUE(store_->PutApp(a).ok());
  ASSERT_TRUE(store_->PutAppRelease(Release(a), 0).ok());  // 10240 bytes
  SiteRecord s{NewId("site"), org_.id, "docs", "docs-x.example", NewId("rel"), 1000};
  SiteReleaseRecord r{s.release_id, s.id, org_.id, "web/", {}, 1000};
  r.files["index.html"] = {"blob-site", 100, "text/html", ""};
  ASSERT_TRUE(store_->PublishSite(s, r, {}).ok());
  EXPECT_EQ(*store_->ObjectBytes(org_.id), 10240u + 100u);
  EXPECT_EQ(*store_->ObjectBytes("org_other"), 0u);
}

TEST_P(StoreTest, AnAppReleasePastTheQuotaIsRefusedInItsTransactionAndLeavesNothing) {
  AppRecord a = App(org_.id, "quota.example");
  ASSERT_TRUE(store_->PutApp(a).ok());
  ObjectRecord o;  // committed after a check of the room left and before the release's insert
  o.org_id = org_.id;
  o.key = "filler.bin";
  o.blob = "blob-filler";
  o.size = 5000;
  o.sha256 = std::string(64, 'b');
  o.etag = "etag";
  o.created_at = 1000;
  ASSERT_TRUE(store_->PutObject(o).ok());
  AppReleaseRecord r = Release(a);  // 10240 bytes
  Status refused = store_->PutAppRelease(r, 15239);
  EXPECT_EQ(refused.code(), Code::kResourceExhausted) << refused.message();
  EXPECT_NE(refused.message().find("15240"), std::string::npos) << refused.message();
  EXPECT_EQ(store_->GetAppRelease(a.id, r.id).status().code(), Code::kNotFound);
  EXPECT_EQ(*store_->ObjectBytes(org_.id), 5000u);
  // Exactly full is within it.
  ASSERT_TRUE(store_->PutAppRelease(r, 15240).ok());
  EXPECT_EQ(*store_->ObjectBytes(org_.id), 15240u);
}

TEST_P(StoreTest, PublishingASitePrunesOldReleasesAndRefusesPastTheQuotaOrSiteCap) {
  SiteRecord s{NewId("site"), org_.id, "docs", "docs-y.example", "", 1000};
  std::vector<std::string> releases;
  auto publish = [&](uint64_t quota, size_t max_sites) {
    s.release_id = NewId("rel");
    SiteReleaseRecord r{s.release_id, s.id, org_.id, "web/", {}, 1000};
    r.files["index.html"] = {"blob-" + s.release_id, 100, "text/html", ""};
    return store_->PublishSite(s, r, {quota, 3, max_sites});
  };
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(publish(0, 1).ok());
    releases.push_back(s.release_id);
  }
  auto pruned = publish(0, 1);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  EXPECT_EQ(*pruned, std::vector<std::string>{"blob-" + releases[0]});
  EXPECT_EQ(store_->GetSiteRelease(releases[0]).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->GetSiteRelease(releases[1]).ok());
  EXPECT_EQ(*store_->ObjectBytes(org_.id), 300u);
  // Past the quota (the pruned release's bytes freed first), nothing changes.
  const std::string live = s.release_id;
  auto refused = publish(299, 1);
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(store_->GetSite(org_.id, s.id)->release_id, live);
  EXPECT_TRUE(store_->GetSiteRelease(releases[1]).ok());
  EXPECT_TRUE(publish(300, 1).ok());
  // A second site past the cap of one.
  s = {NewId("site"), org_.id, "blog", "blog-y.example", "", 1000};
  EXPECT_EQ(publish(0, 1).status().code(), Code::kResourceExhausted);
  EXPECT_EQ(store_->ListSites(org_.id)->size(), 1u);
}

TEST_P(StoreTest, AReleaseWithoutReadinessSettingsHasTheDefaultPeriodAndThreshold) {
  AppRecord a = App(org_.id, "web-def.example");
  ASSERT_TRUE(store_->PutApp(a).ok());
  AppReleaseRecord r = Release(a);
  r.readiness_period_seconds = AppReleaseRecord{}.readiness_period_seconds;
  r.readiness_failure_threshold = AppReleaseRecord{}.readiness_failure_threshold;
  ASSERT_TRUE(store_->PutAppRelease(r, 0).ok());
  Reopen();
  auto got = store_->GetAppRelease(a.id, r.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->readiness_period_seconds, 5);
  EXPECT_EQ(got->readiness_failure_threshold, 3);
}

TEST_P(StoreTest, AnAppsTroubleIsReplacedSurvivesAReopenAndGoesWithTheApp) {
  AppRecord a = App(org_.id, "web-trouble.example");
  ASSERT_TRUE(store_->PutApp(a).ok());
  AppTroubleRecord t{a.id,      org_.id,     1, 5000, "replica sbx_one ended with exit code 7",
                     "sbx_one", a.release_id};
  ASSERT_TRUE(store_->PutAppTrouble(t).ok());
  t.failures = 2;
  t.retry_at = 9000;
  t.why = "replica sbx_two ended with exit code 9";
  t.replica_sandbox_id = "sbx_two";
  ASSERT_TRUE(store_->PutAppTrouble(t).ok());
  Reopen();
  auto troubles = store_->ListAppTroubles();
  ASSERT_TRUE(troubles.ok()) << troubles.status().message();
  ASSERT_EQ(troubles->size(), 1u);
  const AppTroubleRecord& got = troubles->front();
  EXPECT_EQ(got.app_id, a.id);
  EXPECT_EQ(got.org_id, org_.id);
  EXPECT_EQ(got.failures, 2);
  EXPECT_EQ(got.retry_at, 9000);
  EXPECT_EQ(got.why, "replica sbx_two ended with exit code 9");
  EXPECT_EQ(got.replica_sandbox_id, "sbx_two");
  EXPECT_EQ(got.replica_release_id, a.release_id);
  ASSERT_TRUE(store_->DeleteAppTrouble(a.id).ok());
  EXPECT_TRUE(store_->ListAppTroubles()->empty());
  ASSERT_TRUE(store_->DeleteAppTrouble(a.id).ok());  // nothing to delete: no error
  ASSERT_TRUE(store_->PutAppTrouble(t).ok());
  ASSERT_TRUE(store_->DeleteApp(org_.id, a.id).ok());
  EXPECT_TRUE(store_->ListAppTroubles()->empty());
}

TEST_P(StoreTest, AppEventsJoinTheOrganizationsStreamButNoSandboxesOwn) {
  EventRecord e;
  e.org_id = org_.id;
  e.status = "replica.failed";
  e.at = 2000;
  e.app_id = "app_one";
  e.replica_id = "sbx_replica";
  e.message = "GET /healthz answered 503";
  ASSERT_TRUE(store_->AppendAppEvent(e).ok());
  Reopen();
  auto events = store_->ListEvents(org_.id, "", 0, 100);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 1u);
  const EventRecord& got = events->front();
  EXPECT_GT(got.seq, 0);
  EXPECT_EQ(got.sandbox_id, "");
  EXPECT_EQ(got.status, "replica.failed");
  EXPECT_EQ(got.app_id, "app_one");
  EXPECT_EQ(got.replica_id, "sbx_replica");
  EXPECT_EQ(got.message, "GET /healthz answered 503");
  EXPECT_EQ(*store_->LatestEventSeq(), got.seq);
  EXPECT_TRUE(store_->ListEvents(other_org_.id, "", 0, 100)->empty());
  EXPECT_TRUE(store_->ListEvents(org_.id, "sbx_replica", 0, 100)->empty());
}

}  // namespace
}  // namespace adapt::store

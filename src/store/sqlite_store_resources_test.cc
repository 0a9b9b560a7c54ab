// The SQLite store's per-resource tables: commands, networks, sites, OAuth grants and API keys.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
#include "os/temp_dir.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using nlohmann::json;
using testing_support::SqliteStoreTest;
using testing_support::StoreTest;

TEST_P(StoreTest, CommandsAreUpdatedInPlaceListedNewestFirstAndScopedToTheOrg) {
  SandboxRecord sbx = MustCreate(Sandbox(org_.id, "cmds"));
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    CommandRecord c;
    c.id = NewId("cmd");
    c.org_id = org_.id;
    c.sandbox_id = sbx.id;
    c.status = "running";
    c.argv = {"echo", std::to_string(i)};
    c.created_at = 1000 + i;
    ASSERT_TRUE(store_->PutCommand(c).ok());
    ids.push_back(c.id);
  }
  auto first = store_->GetCommand(org_.id, sbx.id, ids[0]);
  ASSERT_TRUE(first.ok()) << first.status().message();
  first->status = "exited";
  first->stdout_text = "done";
  first->exit_code = 0;
  ASSERT_TRUE(store_->PutCommand(*first).ok());
  Reopen();

  auto got = store_->GetCommand(org_.id, sbx.id, ids[0]);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "exited");
  EXPECT_EQ(got->stdout_text, "done");
  EXPECT_EQ(got->exit_code, 0);
  EXPECT_EQ(got->argv, (std::vector<std::string>{"echo", "0"}));
  EXPECT_EQ(store_->GetCommand(other_org_.id, sbx.id, ids[0]).status().code(), Code::kNotFound);

  auto page = store_->ListCommands(org_.id, sbx.id, 2, std::nullopt);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].id, ids[2]);
  EXPECT_EQ(page->items[1].id, ids[1]);
  ASSERT_TRUE(page->next_seq.has_value());
  auto rest = store_->ListCommands(org_.id, sbx.id, 2, page->next_seq);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_EQ(rest->items[0].id, ids[0]);
  EXPECT_FALSE(rest->next_seq.has_value());

  auto running = store_->ListCommandsWithStatus("running");
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->size(), 2u);
}

NetworkRecord Network(const std::string& sandbox_id, int64_t slot) {
  NetworkRecord n;
  n.sandbox_id = sandbox_id;
  n.slot = slot;
  n.address = "10.88.0." + std::to_string(slot * 4 + 2);
  n.host_address = "10.88.0." + std::to_string(slot * 4 + 1);
  n.created_at = 1 + slot;
  return n;
}

TEST_P(StoreTest, NetworksAreUniqueBySlotAndSandboxAndTheirPolicyIsReplacedInPlace) {
  NetworkRecord a = Network("sbx_a", 3);
  a.address6 = "fd61:6461:7074::a58:e";
  a.host_address6 = "fd61:6461:7074::a58:d";
  a.policy.egress = "allowlist";
  a.policy.allow = {{"udp", "1.1.1.1", 53}};
  a.policy.hostnames = {{"api.example.com", 443}};
  a.policy.dns_upstream = "9.9.9.9";
  a.policy.dns_all_names = true;
  ASSERT_TRUE(store_->PutNetwork(a).ok());
  EXPECT_EQ(store_->PutNetwork(Network("sbx_b", 3)).code(), Code::kConflict);
  EXPECT_EQ(store_->PutNetwork(Network("sbx_a", 4)).code(), Code::kConflict);
  ASSERT_TRUE(store_->PutNetwork(Network("sbx_b", 1)).ok());
  auto all = store_->ListNetworks();
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].sandbox_id, "sbx_b");
  const NetworkRecord& read = (*all)[1];
  EXPECT_EQ(read.slot, 3);
  EXPECT_EQ(read.address, a.address);
  EXPECT_EQ(read.host_address, a.host_address);
  EXPECT_EQ(read.address6, a.address6);
  EXPECT_EQ(read.host_address6, a.host_address6);
  EXPECT_EQ(read.policy, a.policy);
  EXPECT_EQ(read.created_at, a.created_at);

  NetworkPolicyRecord open;
  open.dns = "1.1.1.1";
  ASSERT_TRUE(store_->UpdateNetworkPolicy("sbx_a", open).ok());
  EXPECT_EQ(store_->UpdateNetworkPolicy("sbx_zz", open).code(), Code::kNotFound);
  all = store_->ListNetworks();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].slot, 3);
  EXPECT_EQ((*all)[1].address6, a.address6);
  EXPECT_EQ((*all)[1].policy, open);
  auto by_slot = store_->GetNetworkBySlot(3);
  ASSERT_TRUE(by_slot.ok()) << by_slot.status().message();
  EXPECT_EQ(by_slot->sandbox_id, "sbx_a");
  EXPECT_EQ(by_slot->address, a.address);
  EXPECT_EQ(store_->GetNetworkBySlot(2).status().code(), Code::kNotFound);
  ASSERT_TRUE(store_->DeleteNetwork("sbx_a").ok());
  ASSERT_TRUE(store_->DeleteNetwork("sbx_a").ok());
  EXPECT_EQ(store_->ListNetworks()->size(), 1u);
  EXPECT_EQ(store_->GetNetworkBySlot(3).status().code(), Code::kNotFound);
}

TEST(SqliteStoreNetworks, AttachmentsSurviveReopening) {
  os::TempDir tmp("store-net");
  const std::string dir = tmp.path();
  NetworkRecord a = Network("sbx_a", 3);
  a.policy.egress = "allowlist";
  a.policy.allow = {{"tcp", "10.0.0.1", 443}};
  {
    auto s = OpenSqliteStore(dir + "/adapt.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    ASSERT_TRUE((*s)->PutNetwork(a).ok());
  }
  auto s = OpenSqliteStore(dir + "/adapt.db");
  ASSERT_TRUE(s.ok());
  auto all = (*s)->ListNetworks();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].address, a.address);
  EXPECT_EQ((*all)[0].policy, a.policy);
}

TEST(SqliteStoreNetworks, RowsWrittenBeforeTheRecordWasTypedReadBackTheSame) {
  os::TempDir tmp("store-net");
  const std::string dir = tmp.path();
  ASSERT_TRUE(OpenSqliteStore(dir + "/adapt.db").ok());
  {
    // As net/ wrote the data column when the record held JSON.
    SQLite::Database db(dir + "/adapt.db", SQLite::OPEN_READWRITE);
    db.exec(R"(INSERT INTO sandbox_networks(sandbox_id, slot, data, created_at) VALUES
      ('sbx_old', 5, '{"address":"10.88.0.22","hostAddress":"10.88.0.21","address6":"",
      "hostAddress6":"","egress":"allowlist","dns":"","allow":[{"protocol":"udp",
      "address":"1.1.1.1","port":53}],"hostnames":[{"hostname":"pypi.org","port":443}],
      "dnsUpstream":"1.1.1.1","dnsAllNames":false}', 7),
      ('sbx_bad', 6, 'not json', 8))");
  }
  auto s = OpenSqliteStore(dir + "/adapt.db");
  ASSERT_TRUE(s.ok());
  auto all = (*s)->ListNetworks();
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 2u);
  const NetworkRecord& old = (*all)[0];
  EXPECT_EQ(old.sandbox_id, "sbx_old");
  EXPECT_EQ(old.address, "10.88.0.22");
  EXPECT_EQ(old.host_address, "10.88.0.21");
  EXPECT_EQ(old.address6, "");
  EXPECT_EQ(old.policy.egress, "allowlist");
  EXPECT_EQ(old.policy.allow, (std::vector<AllowRuleConfig>{{"udp", "1.1.1.1", 53}}));
  EXPECT_EQ(old.policy.hostnames, (std::vector<HostnameRuleConfig>{{"pypi.org", 443}}));
  EXPECT_EQ(old.policy.dns_upstream, "1.1.1.1");
  EXPECT_EQ(old.created_at, 7);
  // Unreadable data keeps the slot (so it is removed at start-up) with an open policy.
  EXPECT_EQ((*all)[1].sandbox_id, "sbx_bad");
  EXPECT_EQ((*all)[1].address, "");
  EXPECT_EQ((*all)[1].policy, NetworkPolicyRecord{});
}

TEST_P(StoreTest, SiteReleasesKeepTheirFilesAndDeletingASiteGivesBackTheirBlobs) {
  SiteRecord site{NewId("site"), org_.id, "docs", "docs-1.example.test", "", 10};
  SiteReleaseRecord release{NewId("rel"), site.id, org_.id, "web/", {}, 11};
  release.files["index.html"] = {"blob_a", 12, "text/html", "ab12"};
  release.files["css/site.css"] = {"blob_b", 0, "text/css", "cd34"};
  site.release_id = release.id;
  ASSERT_TRUE(store_->PutSite(site, &release).ok());
  auto read = store_->GetSiteRelease(release.id);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->source_prefix, "web/");
  EXPECT_EQ(read->files, release.files);
  auto blobs = store_->ListReferencedBlobs();
  ASSERT_TRUE(blobs.ok());
  EXPECT_EQ(std::count(blobs->begin(), blobs->end(), "blob_b"), 1);
  EXPECT_EQ(store_->DeleteSite("org_other", site.id).status().code(), Code::kNotFound);
  auto freed = store_->DeleteSite(org_.id, site.id);
  ASSERT_TRUE(freed.ok()) << freed.status().message();
  std::sort(freed->begin(), freed->end());
  EXPECT_EQ(*freed, (std::vector<std::string>{"blob_a", "blob_b"}));
  EXPECT_EQ(store_->GetSiteRelease(release.id).status().code(), Code::kNotFound);
}

TEST(SqliteStoreSites, ReleasesWrittenBeforeTheRecordWasTypedReadBackTheSame) {
  os::TempDir tmp("store-site");
  const std::string dir = tmp.path();
  ASSERT_TRUE(OpenSqliteStore(dir + "/adapt.db").ok());
  {
    SQLite::Database db(dir + "/adapt.db", SQLite::OPEN_READWRITE);
    db.exec(R"(INSERT INTO site_releases(id, site_id, org_id, source_prefix, files, created_at)
      VALUES ('rel_old', 'site_old', 'org_x', 'www/', '{"index.html":{"blob":"b1","size":5,
      "type":"text/html","sha256":"aa"},"raw":{"blob":"b2","size":3}}', 9))");
  }
  auto s = OpenSqliteStore(dir + "/adapt.db");
  ASSERT_TRUE(s.ok());
  auto r = (*s)->GetSiteRelease("rel_old");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->files.size(), 2u);
  EXPECT_EQ(r->files.at("index.html"), (SiteFileRecord{"b1", 5, "text/html", "aa"}));
  // A file without a type is served as bytes, as before.
  EXPECT_EQ(r->files.at("raw").content_type, "application/octet-stream");
  EXPECT_EQ(r->files.at("raw").size, 3u);
}

TEST_P(StoreTest, OAuthGrantsExpireAndCodesAreSingleUse) {
  OAuthClientRecord client{"oac_1", "assistant", {"https://a.example.com/cb"}, 1000};
  ASSERT_TRUE(store_->CreateOAuthClient(client).ok());
  auto read = store_->GetOAuthClient("oac_1");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->redirect_uris, client.redirect_uris);
  EXPECT_EQ(store_->GetOAuthClient("oac_2").status().code(), Code::kNotFound);

  OAuthGrantRecord code{Sha256Hex("code"),
                        "code",
                        "oac_1",
                        org_.id,
                        "key_1",
                        "https://a.example.com/cb",
                        "challenge",
                        "https://adapt.example.com/mcp",
                        5000,
                        1000};
  ASSERT_TRUE(store_->PutOAuthGrant(code).ok());
  EXPECT_FALSE(store_->FindOAuthGrant(Sha256Hex("code"), "access", 2000).ok());  // other kind
  EXPECT_FALSE(store_->FindOAuthGrant(Sha256Hex("code"), "code", 5000).ok());    // expired
  auto taken = store_->TakeOAuthGrant(Sha256Hex("code"), "code", 2000);
  ASSERT_TRUE(taken.ok());
  EXPECT_EQ(taken->org_id, org_.id);
  EXPECT_EQ(taken->redirect_uri, "https://a.example.com/cb");
  EXPECT_EQ(taken->code_challenge, "challenge");
  EXPECT_EQ(taken->resource, "https://adapt.example.com/mcp");
  EXPECT_EQ(store_->TakeOAuthGrant(Sha256Hex("code"), "code", 2000).status().code(),
            Code::kNotFound);
}

TEST_P(StoreTest, OAuthClientsWithoutALiveGrantAreForgottenOnceOld) {
  for (const char* id : {"oac_old_unused", "oac_old_used", "oac_old_lapsed", "oac_new"})
    ASSERT_TRUE(store_
                    ->CreateOAuthClient(
                        {id, "a", {"https://a/cb"}, id == std::string("oac_new") ? 9000 : 1000})
                    .ok());
  for (auto [client, expires] : {std::pair{"oac_old_used", 50000}, {"oac_old_lapsed", 5000}}) {
    OAuthGrantRecord g{Sha256Hex(client), "refresh", client, org_.id, "key_1", "", "", "",
                       expires,           1000};
    ASSERT_TRUE(store_->PutOAuthGrant(g).ok());
  }
  auto left = store_->PruneOAuthClients(/*registered_before=*/8000, /*now=*/10000);
  ASSERT_TRUE(left.ok()) << left.status().message();
  EXPECT_EQ(*left, 2);
  EXPECT_FALSE(store_->GetOAuthClient("oac_old_unused").ok());
  EXPECT_FALSE(store_->GetOAuthClient("oac_old_lapsed").ok());
  EXPECT_TRUE(store_->GetOAuthClient("oac_old_used").ok());
  EXPECT_TRUE(store_->GetOAuthClient("oac_new").ok());
}

// One organization authorizing client after client keeps the grants of its newest ones only:
// a grant keeps its client registered, and the client table is capped for everyone.
TEST_P(StoreTest, AnOrganizationKeepsTheGrantsOfItsNewestClientsOnly) {
  for (const char* id : {"oac_1", "oac_2", "oac_3", "oac_theirs"})
    ASSERT_TRUE(store_->CreateOAuthClient({id, "a", {"https://a/cb"}, 1000}).ok());
  auto grant = [&](const std::string& hash, const std::string& client, const std::string& org,
                   int64_t at) {
    OAuthGrantRecord g{hash, "refresh", client, org, "key_1", "", "", "", 90000, at};
    return store_->PutOAuthGrant(g, /*max_clients_of_org=*/2);
  };
  ASSERT_TRUE(grant("h1", "oac_1", org_.id, 1000).ok());
  ASSERT_TRUE(grant("h1b", "oac_1", org_.id, 1100).ok());
  ASSERT_TRUE(grant("theirs", "oac_theirs", other_org_.id, 1200).ok());
  ASSERT_TRUE(grant("h2", "oac_2", org_.id, 2000).ok());
  // Two clients: nothing goes. The same client again adds none.
  EXPECT_TRUE(store_->FindOAuthGrant("h1", "refresh", 5000).ok());
  ASSERT_TRUE(grant("h2b", "oac_2", org_.id, 2500).ok());
  EXPECT_TRUE(store_->FindOAuthGrant("h1b", "refresh", 5000).ok());
  // A third: the one granted least recently loses all its grants, in this organization only.
  ASSERT_TRUE(grant("h3", "oac_3", org_.id, 3000).ok());
  EXPECT_FALSE(store_->FindOAuthGrant("h1", "refresh", 5000).ok());
  EXPECT_FALSE(store_->FindOAuthGrant("h1b", "refresh", 5000).ok());
  for (const char* kept : {"h2", "h2b", "h3", "theirs"})
    EXPECT_TRUE(store_->FindOAuthGrant(kept, "refresh", 5000).ok()) << kept;
  // Without a cap, nothing is trimmed.
  ASSERT_TRUE(
      store_->PutOAuthGrant({"h1c", "refresh", "oac_1", org_.id, "key_1", "", "", "", 90000, 4000})
          .ok());
  EXPECT_TRUE(store_->FindOAuthGrant("h2", "refresh", 5000).ok());
}

TEST_P(StoreTest, DeletingAKeyDeletesItsOAuthGrantsAndOnlyInItsOrg) {
  ASSERT_TRUE(store_->CreateApiKey({"key_a", org_.id, "a", Sha256Hex("a"), false, 1000}).ok());
  ASSERT_TRUE(store_->CreateApiKey({"key_b", org_.id, "b", Sha256Hex("b"), false, 1001}).ok());
  ASSERT_TRUE(store_->CreateOAuthClient({"oac_1", "assistant", {"https://a/cb"}, 1000}).ok());
  for (const char* key : {"key_a", "key_b"}) {
    OAuthGrantRecord g{Sha256Hex(std::string("token-") + key),
                       "access",
                       "oac_1",
                       org_.id,
                       key,
                       "",
                       "",
                       "",
                       9000,
                       1000};
    ASSERT_TRUE(store_->PutOAuthGrant(g).ok());
  }
  auto keys = store_->ListApiKeys(org_.id);
  ASSERT_TRUE(keys.ok());
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ((*keys)[0].id, "key_a");

  // Another organization cannot delete it, and that changes nothing.
  EXPECT_EQ(store_->DeleteApiKey(other_org_.id, "key_a").code(), Code::kNotFound);
  EXPECT_TRUE(store_->FindApiKey(Sha256Hex("a")).ok());

  ASSERT_TRUE(store_->DeleteApiKey(org_.id, "key_a").ok());
  EXPECT_EQ(store_->FindApiKey(Sha256Hex("a")).status().code(), Code::kNotFound);
  EXPECT_FALSE(store_->FindOAuthGrant(Sha256Hex("token-key_a"), "access", 2000).ok());
  EXPECT_TRUE(store_->FindOAuthGrant(Sha256Hex("token-key_b"), "access", 2000).ok());
  EXPECT_EQ(store_->DeleteApiKey(org_.id, "key_a").code(), Code::kNotFound);
  EXPECT_EQ(store_->ListApiKeys(org_.id)->size(), 1u);
}

}  // namespace
}  // namespace adapt::store

namespace adapt::store {
namespace {

TEST_P(StoreTest, SandboxCapCountsTheOrgsLiveSandboxesInTheInsertTransaction) {
  SandboxRecord first = MustCreate(Sandbox(org_.id, "a"));
  ASSERT_TRUE(
      store_->CreateSandbox(Sandbox(org_.id, "b"), std::nullopt, testing_support::Limits(2)).ok());
  auto over =
      store_->CreateSandbox(Sandbox(org_.id, "c"), std::nullopt, testing_support::Limits(2));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("2 sandboxes"), std::string::npos);
  EXPECT_EQ(ListIds(org_.id, "").size(), 2u);
  EXPECT_TRUE(
      store_->CreateSandbox(Sandbox(other_org_.id, "c"), std::nullopt, testing_support::Limits(2))
          .ok());
  // A failed sandbox no longer counts.
  first.status = "failed";
  ASSERT_TRUE(store_->UpdateSandbox(first, {"provisioning"}).ok());
  EXPECT_TRUE(
      store_->CreateSandbox(Sandbox(org_.id, "c"), std::nullopt, testing_support::Limits(2)).ok());

  // Concurrent creates of a fresh organization stop at the cap.
  OrgRecord busy = MustCreateOrg("busy");
  std::atomic<int> created{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      if (store_->CreateSandbox(Sandbox(busy.id, "x"), std::nullopt, testing_support::Limits(3))
              .ok())
        ++created;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(created.load(), 3);
  EXPECT_EQ(ListIds(busy.id, "").size(), 3u);
}

TEST_P(StoreTest, ImageCapsCountTheOrgsImagesAndThoseInProgress) {
  auto image = [&](const std::string& org_id, const std::string& status) {
    ImageRecord r;
    r.id = NewId("img");
    r.org_id = org_id;
    r.reference = "registry.example/app:" + r.id;
    r.status = status;
    r.created_at = 1000;
    return r;
  };
  ASSERT_TRUE(store_->InsertImageWithinCaps(image(org_.id, "pulling"), 3, 1).ok());
  auto busy = store_->InsertImageWithinCaps(image(org_.id, "importing"), 3, 1);
  EXPECT_EQ(busy.code(), Code::kResourceExhausted);
  EXPECT_NE(busy.message().find("in progress"), std::string::npos);
  EXPECT_TRUE(store_->InsertImageWithinCaps(image(other_org_.id, "importing"), 3, 1).ok());
  ASSERT_TRUE(store_->InsertImageWithinCaps(image(org_.id, "ready"), 3, 1).ok());
  ASSERT_TRUE(store_->InsertImageWithinCaps(image(org_.id, "failed"), 3, 1).ok());
  auto full = store_->InsertImageWithinCaps(image(org_.id, "ready"), 3, 0);
  EXPECT_EQ(full.code(), Code::kResourceExhausted);
  EXPECT_NE(full.message().find("3 images"), std::string::npos);
  auto listed = store_->ListImages(org_.id);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 3u);
}

TEST_F(SqliteStoreTest, ImageFieldsSurviveTheRoundTrip) {
  ImageRecord r;
  r.id = NewId("img");
  r.org_id = org_.id;
  r.reference = "import:" + r.id;
  r.status = "ready";
  r.imported = true;
  r.import_name = "app:1";
  r.import_format = "oci";
  r.digest = "sha256:abc";
  r.size = 1234;
  r.platform = "linux/amd64";
  r.config_json = R"({"Cmd":["/bin/cat"]})";
  r.created_at = 1000;
  ASSERT_TRUE(store_->PutImage(r).ok());
  auto got = store_->GetImage(org_.id, r.id);
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->imported);
  EXPECT_EQ(got->import_name, "app:1");
  EXPECT_EQ(got->import_format, "oci");
  EXPECT_EQ(got->digest, "sha256:abc");
  EXPECT_EQ(got->size, 1234);
  EXPECT_EQ(got->platform, "linux/amd64");
  EXPECT_EQ(got->config_json, r.config_json);
  EXPECT_EQ(got->error, "");

  r = ImageRecord();
  r.id = NewId("img");
  r.org_id = org_.id;
  r.reference = "a/b:1";
  r.status = "failed";
  r.error = "401 from registry";
  ASSERT_TRUE(store_->PutImage(r).ok());
  got = store_->GetImage(org_.id, r.id);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(got->imported);
  EXPECT_FALSE(got->size.has_value());
  EXPECT_EQ(got->config_json, "");
  EXPECT_EQ(got->error, "401 from registry");
}

TEST_P(StoreTest, OperationsAreScopedToTheOrgUpdatedInPlaceAndListedWhileOpen) {
  OperationRecord op;
  op.id = NewId("op");
  op.org_id = org_.id;
  op.kind = "checkpoint";
  op.sandbox_id = "sbx_a";
  op.phase = "Running";
  op.started_at = 1000;
  ASSERT_TRUE(store_->PutOperation(op).ok());
  OperationRecord other = op;
  other.id = NewId("op");
  other.org_id = other_org_.id;
  other.sandbox_id = "sbx_b";
  other.phase = "Pending";
  ASSERT_TRUE(store_->PutOperation(other).ok());

  EXPECT_EQ(store_->GetOperation(other_org_.id, op.id).status().code(), Code::kNotFound);
  auto open = store_->ListOpenOperations("sbx_a");
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].id, op.id);
  auto all = store_->ListAllOpenOperations();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);

  op.phase = "Failed";
  op.error = "runsc checkpoint failed";
  op.bytes = 42;
  op.total_bytes = 42;
  op.finished_at = 2000;
  op.kind = "restore";  // ignored: an operation's kind never changes
  ASSERT_TRUE(store_->PutOperation(op).ok());
  Reopen();
  auto got = store_->GetOperation(org_.id, op.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->kind, "checkpoint");
  EXPECT_EQ(got->sandbox_id, "sbx_a");
  EXPECT_EQ(got->phase, "Failed");
  EXPECT_EQ(got->error, "runsc checkpoint failed");
  EXPECT_EQ(got->bytes, 42u);
  EXPECT_EQ(got->started_at, 1000);
  EXPECT_EQ(got->finished_at, 2000);
  open = store_->ListOpenOperations("sbx_a");
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty());
}

TEST_P(StoreTest, AnAppDeploysOperationKeepsItsAppAndLearnsItsRelease) {
  OperationRecord op;
  op.id = NewId("op");
  op.org_id = org_.id;
  op.kind = "app.deploy";
  op.sandbox_id = "sbx_source";
  op.app_id = "app_one";
  op.phase = "Running";
  op.started_at = 1000;
  ASSERT_TRUE(store_->PutOperation(op).ok());
  op.release_id = "rel_one";
  op.app_id = "app_other";  // ignored: who the operation is for never changes
  ASSERT_TRUE(store_->PutOperation(op).ok());
  Reopen();
  auto got = store_->GetOperation(org_.id, op.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->app_id, "app_one");
  EXPECT_EQ(got->release_id, "rel_one");
  EXPECT_EQ(got->phase, "Running");
  auto all = store_->ListAllOpenOperations();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].release_id, "rel_one");
}

}  // namespace
}  // namespace adapt::store

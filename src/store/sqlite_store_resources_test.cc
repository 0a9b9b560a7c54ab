// The SQLite store's per-resource tables: commands, networks, OAuth grants and API keys.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "base/ids.h"
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
    c.data = {{"id", c.id}, {"n", i}};
    c.created_at = 1000 + i;
    ASSERT_TRUE(store_->PutCommand(c).ok());
    ids.push_back(c.id);
  }
  auto first = store_->GetCommand(org_.id, sbx.id, ids[0]);
  ASSERT_TRUE(first.ok()) << first.status().message();
  first->status = "exited";
  first->data["stdout"] = "done";
  ASSERT_TRUE(store_->PutCommand(*first).ok());
  Reopen();

  auto got = store_->GetCommand(org_.id, sbx.id, ids[0]);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, "exited");
  EXPECT_EQ(got->data["stdout"], "done");
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

TEST(SqliteStoreNetworks, AttachmentsAreRecordedUniqueBySlotAndSandboxAndSurviveReopening) {
  char tmpl[] = "/tmp/adapt-store-net.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  {
    auto s = OpenSqliteStore(dir + "/adapt.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    NetworkRecord a{"sbx_a", 3, {{"address", "10.88.0.14"}}, 1};
    ASSERT_TRUE((*s)->PutNetwork(a).ok());
    EXPECT_EQ((*s)->PutNetwork({"sbx_b", 3, {}, 2}).code(), Code::kConflict);
    EXPECT_EQ((*s)->PutNetwork({"sbx_a", 4, {}, 2}).code(), Code::kConflict);
    ASSERT_TRUE((*s)->PutNetwork({"sbx_b", 1, {}, 2}).ok());
  }
  auto s = OpenSqliteStore(dir + "/adapt.db");
  ASSERT_TRUE(s.ok());
  auto all = (*s)->ListNetworks();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].sandbox_id, "sbx_b");
  EXPECT_EQ((*all)[1].data["address"], "10.88.0.14");
  // A policy change rewrites the data in place; the slot stays the sandbox's.
  ASSERT_TRUE(
      (*s)->UpdateNetworkData("sbx_a", {{"address", "10.88.0.14"}, {"egress", "none"}}).ok());
  EXPECT_EQ((*s)->UpdateNetworkData("sbx_zz", {}).code(), Code::kNotFound);
  all = (*s)->ListNetworks();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].slot, 3);
  EXPECT_EQ((*all)[1].data["egress"], "none");
  ASSERT_TRUE((*s)->DeleteNetwork("sbx_a").ok());
  ASSERT_TRUE((*s)->DeleteNetwork("sbx_a").ok());
  EXPECT_EQ((*s)->ListNetworks()->size(), 1u);
  std::filesystem::remove_all(dir);
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

}  // namespace
}  // namespace adapt::store

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/ids.h"
#include "store/migrations.h"
#include "store/sqlite_store_test_fixture.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using nlohmann::json;

using testing_support::SqliteStoreTest;
using testing_support::StoreTest;

TEST_F(SqliteStoreTest, MigrationsAreAppliedOnceAndReopeningKeepsData) {
  SandboxRecord r = MustCreate(Sandbox(org_.id, "kept"));
  Reopen();
  Reopen();
  auto got = store_->GetSandbox(org_.id, r.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->id, r.id);
  auto org = store_->FindOrgByName("acme");
  ASSERT_TRUE(org.ok());
  EXPECT_EQ(org->id, org_.id);

  store_.reset();
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM schema_migrations").getInt64(),
            static_cast<int64_t>(SqliteMigrations().size()));
  EXPECT_EQ(db.execAndGet("SELECT MAX(version) FROM schema_migrations").getInt(),
            SqliteMigrations().back().version);
}

TEST_F(SqliteStoreTest, OpeningAPathThatCannotBeCreatedFails) {
  auto s = OpenSqliteStore(dir_ + "/no/such/dir/adapt.db");
  EXPECT_FALSE(s.ok());
}

TEST_P(StoreTest, OrgsAreCreatedFoundAndNamesAreUnique) {
  auto byId = store_->GetOrg(org_.id);
  ASSERT_TRUE(byId.ok());
  EXPECT_EQ(byId->name, "acme");
  EXPECT_FALSE(byId->is_admin);
  EXPECT_EQ(byId->created_at, 1000);

  auto dup = store_->CreateOrg({NewId("org"), "acme", false, 2000});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().code(), Code::kConflict);

  EXPECT_EQ(store_->GetOrg("org_missing").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->FindOrgByName("missing").status().code(), Code::kNotFound);

  EXPECT_TRUE(byId->registered);
  auto signedUp = store_->CreateOrg({NewId("org"), "signed-up", false, 3000, false});
  ASSERT_TRUE(signedUp.ok());
  auto read = store_->FindOrgByName("signed-up");
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->registered);

  auto all = store_->ListOrgs();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);  // the fixture's two and signed-up
}

TEST_P(StoreTest, ApiKeysAreFoundByHashOnly) {
  ApiKeyRecord key{NewId("key"), org_.id, "ci", Sha256Hex("adapt_text"), true, 1234};
  ASSERT_TRUE(store_->CreateApiKey(key).ok());
  auto found = store_->FindApiKey(Sha256Hex("adapt_text"));
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->id, key.id);
  EXPECT_EQ(found->org_id, org_.id);
  EXPECT_EQ(found->name, "ci");
  EXPECT_TRUE(found->is_admin);
  EXPECT_EQ(found->created_at, 1234);
  EXPECT_EQ(store_->FindApiKey(Sha256Hex("other")).status().code(), Code::kNotFound);
  EXPECT_EQ(store_->FindApiKey("adapt_text").status().code(), Code::kNotFound);
  EXPECT_EQ(found->expires_at, 0);
}

TEST_P(StoreTest, ApiKeyExpiryRoundTrips) {
  ApiKeyRecord key{NewId("key"), org_.id, "ci", Sha256Hex("expiring"), false, 1000, 5000};
  ASSERT_TRUE(store_->CreateApiKey(key).ok());
  auto found = store_->FindApiKey(Sha256Hex("expiring"));
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->expires_at, 5000);
  auto listed = store_->ListApiKeys(org_.id);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].expires_at, 5000);
}

TEST_P(StoreTest, ApiKeyForAnUnknownOrgIsRefused) {
  EXPECT_FALSE(
      store_->CreateApiKey({NewId("key"), "org_missing", "x", Sha256Hex("k"), false, 1}).ok());
}

TEST_P(StoreTest, ASandboxNamingAnImageThatIsGoneIsNotRecorded) {
  // An image deleted (and its layers collected) between a create's look at it and its insert:
  // the sandbox booted without its layers ("failed to load /bin/sleep").
  SandboxRecord r = Sandbox(org_.id, "from-image");
  r.config.image_id = "img_gone";
  auto out = store_->CreateSandbox(r, std::nullopt);
  EXPECT_EQ(out.status().code(), Code::kNotFound);
  EXPECT_EQ(out.status().field(), "imageId");
  EXPECT_FALSE(store_->GetSandbox("", r.id).ok());
  ImageRecord pulling;
  pulling.id = "img_gone";
  pulling.org_id = org_.id;
  pulling.reference = "import:img_gone";
  pulling.status = "importing";
  ASSERT_TRUE(store_->InsertImageWithinCaps(pulling, 0, 0).ok());
  EXPECT_EQ(store_->CreateSandbox(r, std::nullopt).status().code(), Code::kNotFound);
  // Another organization's image of that id is not this one's.
  auto other = store_->CreateOrg({NewId("org"), "other-org", false, 1});
  ASSERT_TRUE(other.ok()) << other.status().message();
  SandboxRecord theirs = Sandbox(other->id, "theirs");
  theirs.config.image_id = "img_gone";
  EXPECT_EQ(store_->CreateSandbox(theirs, std::nullopt).status().code(), Code::kNotFound);
}

TEST_P(StoreTest, SandboxRecordRoundTripsEveryField) {
  SandboxRecord r = Sandbox(org_.id, "round-trip");
  r.expires_at = std::nullopt;
  r.config.ttl_seconds = 60;
  r.config.image_id = "img_1";
  ImageRecord image;
  image.id = "img_1";
  image.org_id = org_.id;
  image.reference = "import:img_1";
  image.status = "ready";
  image.created_at = 1;
  ASSERT_TRUE(store_->InsertImageWithinCaps(image, 0, 0).ok());
  r.config.network = {
      "allowlist", {{"tcp", "1.1.1.1", 443}}, "9.9.9.9", {{"api.example.com", 443}}};
  r.config.startup = StartupConfig{
      "command", std::vector<std::string>{"sh", "-c", "x"}, {}, {}, "/tmp", "1000:1000"};
  r.config.storage = "default";
  r.config.startup_class = "durable";
  r.config.secrets = {{"TOKEN", 3}};
  r.config.pool = PoolUseConfig{false, "the warm pool was empty"};
  r.result.exit_code = 0;
  r.result.stdout_text = "hi";
  r.result.hibernation = HibernationState{"stopped", true, true, 5, "note", false};
  r.error = "none really";
  auto out = store_->CreateSandbox(r, std::nullopt);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->replayed);
  EXPECT_GT(out->sandbox.seq, 0);
  auto got = store_->GetSandbox("", r.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->org_id, org_.id);
  EXPECT_EQ(got->status, "provisioning");
  EXPECT_EQ(got->config, r.config);
  EXPECT_EQ(got->env, r.env);
  EXPECT_EQ(got->created_at, r.created_at);
  EXPECT_EQ(got->updated_at, r.updated_at);
  EXPECT_FALSE(got->expires_at.has_value());
  EXPECT_FALSE(got->deleted_at.has_value());
  EXPECT_EQ(got->result, r.result);
  EXPECT_EQ(got->error, "none really");
  EXPECT_TRUE(got->termination_reason.empty());
}

TEST_P(StoreTest, AnotherOrgsSandboxIsNotFound) {
  SandboxRecord r = MustCreate(Sandbox(org_.id, "mine"));
  EXPECT_EQ(store_->GetSandbox(other_org_.id, r.id).status().code(), Code::kNotFound);
  EXPECT_TRUE(store_->GetSandbox(org_.id, r.id).ok());
  EXPECT_TRUE(ListIds(other_org_.id, "").empty());
}

TEST_P(StoreTest, IdempotencyKeyReplaysTheSameSandboxForTheSameBody) {
  SandboxRecord first = Sandbox(org_.id, "idem");
  IdempotencyKey key{"create-1", Sha256Hex("body-a")};
  auto a = store_->CreateSandbox(first, key);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->replayed);

  SandboxRecord retry = Sandbox(org_.id, "idem");  // a fresh id, as a retried request would make
  auto b = store_->CreateSandbox(retry, key);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_TRUE(b->replayed);
  EXPECT_EQ(b->sandbox.id, first.id);
  EXPECT_EQ(store_->GetSandbox(org_.id, retry.id).status().code(), Code::kNotFound);
  EXPECT_EQ(ListIds(org_.id, "").size(), 1u);
  EXPECT_EQ(EventStatuses(org_.id, "").size(), 1u) << "a replay records no event";
}

TEST_P(StoreTest, IdempotencyKeyWithADifferentBodyIsAConflict) {
  IdempotencyKey key{"create-1", Sha256Hex("body-a")};
  ASSERT_TRUE(store_->CreateSandbox(Sandbox(org_.id, "a"), key).ok());
  SandboxRecord other = Sandbox(org_.id, "b");
  auto r = store_->CreateSandbox(other, IdempotencyKey{"create-1", Sha256Hex("body-b")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().field(), "Idempotency-Key");
  EXPECT_EQ(store_->GetSandbox(org_.id, other.id).status().code(), Code::kNotFound);
  EXPECT_EQ(ListIds(org_.id, "").size(), 1u);
}

TEST_P(StoreTest, IdempotencyKeysAreScopedToTheOrganization) {
  IdempotencyKey key{"shared-key", Sha256Hex("body")};
  auto a = store_->CreateSandbox(Sandbox(org_.id, "a"), key);
  auto b = store_->CreateSandbox(Sandbox(other_org_.id, "b"), key);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_FALSE(b->replayed);
  EXPECT_NE(a->sandbox.id, b->sandbox.id);
  EXPECT_EQ(b->sandbox.org_id, other_org_.id);
}

TEST_P(StoreTest, PurgedIdempotencyKeysNoLongerReplay) {
  SandboxRecord old = Sandbox(org_.id, "old", /*at=*/1000);
  ASSERT_TRUE(store_->CreateSandbox(old, IdempotencyKey{"k-old", "h1"}).ok());
  SandboxRecord recent = Sandbox(org_.id, "recent", /*at=*/9000);
  ASSERT_TRUE(store_->CreateSandbox(recent, IdempotencyKey{"k-new", "h2"}).ok());

  ASSERT_TRUE(store_->PurgeIdempotencyKeys(5000).ok());

  auto again_old =
      store_->CreateSandbox(Sandbox(org_.id, "old2"), IdempotencyKey{"k-old", "other"});
  ASSERT_TRUE(again_old.ok()) << "a purged key is free again: " << again_old.status().message();
  EXPECT_FALSE(again_old->replayed);
  EXPECT_NE(again_old->sandbox.id, old.id);

  auto again_new = store_->CreateSandbox(Sandbox(org_.id, "new2"), IdempotencyKey{"k-new", "h2"});
  ASSERT_TRUE(again_new.ok());
  EXPECT_TRUE(again_new->replayed) << "a key newer than the cut-off is kept";
  EXPECT_EQ(again_new->sandbox.id, recent.id);
}

TEST_P(StoreTest, ListIsNewestFirstAndPagesCoverEverythingOnce) {
  std::vector<std::string> created;
  for (int i = 0; i < 10; ++i) {
    std::string name = "s";  // not "s" + to_string(i): GCC 12 -O3 false -Wrestrict
    name += std::to_string(i);
    created.push_back(MustCreate(Sandbox(org_.id, name)).id);
    MustCreate(Sandbox(other_org_.id, "noise"));
  }
  std::vector<std::string> newest_first(created.rbegin(), created.rend());
  EXPECT_EQ(ListIds(org_.id, ""), newest_first);

  std::vector<std::string> paged;
  std::optional<int64_t> cursor;
  int pages = 0;
  do {
    auto page = store_->ListSandboxes(org_.id, "", 3, cursor);
    ASSERT_TRUE(page.ok()) << page.status().message();
    EXPECT_LE(page->items.size(), 3u);
    for (const auto& r : page->items) paged.push_back(r.id);
    cursor = page->next_seq;
    // Inserts between pages must neither repeat nor shift what the cursor still has to show.
    if (pages == 0) MustCreate(Sandbox(org_.id, "late"));
    ASSERT_LT(++pages, 10) << "pagination does not end";
  } while (cursor);
  EXPECT_EQ(pages, 4);
  EXPECT_EQ(paged, newest_first);
  EXPECT_EQ(std::set<std::string>(paged.begin(), paged.end()).size(), paged.size());
}

TEST_P(StoreTest, ExactlyFullLastPageHasNoCursor) {
  for (int i = 0; i < 4; ++i) MustCreate(Sandbox(org_.id, "x"));
  auto first = store_->ListSandboxes(org_.id, "", 2, std::nullopt);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->next_seq.has_value());
  auto second = store_->ListSandboxes(org_.id, "", 2, first->next_seq);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->items.size(), 2u);
  EXPECT_FALSE(second->next_seq.has_value());
}

TEST_P(StoreTest, QueryMatchesNameSubstringIgnoringCase) {
  SandboxRecord worker = MustCreate(Sandbox(org_.id, "Research-Worker"));
  SandboxRecord other = MustCreate(Sandbox(org_.id, "billing"));
  MustCreate(Sandbox(org_.id, ""));
  EXPECT_EQ(ListIds(org_.id, "research"), std::vector<std::string>{worker.id});
  EXPECT_EQ(ListIds(org_.id, "WORKER"), std::vector<std::string>{worker.id});
  EXPECT_EQ(ListIds(org_.id, "ch-wo"), std::vector<std::string>{worker.id});
  EXPECT_EQ(ListIds(org_.id, "LLIN"), std::vector<std::string>{other.id});
  EXPECT_TRUE(ListIds(org_.id, "nothing-like-it").empty());
}

TEST_P(StoreTest, QueryIgnoresCaseBeyondAscii) {
  SandboxRecord omega = MustCreate(Sandbox(org_.id, "\xCE\xA9mega"));                  // Ωmega
  SandboxRecord ete = MustCreate(Sandbox(org_.id, "\xC3\xA9t\xC3\xA9-job"));           // été-job
  EXPECT_EQ(ListIds(org_.id, "\xCF\x89mega"), std::vector<std::string>{omega.id});     // ωmega
  EXPECT_EQ(ListIds(org_.id, "\xCE\xA9MEGA"), std::vector<std::string>{omega.id});     // ΩMEGA
  EXPECT_EQ(ListIds(org_.id, "\xC3\x89T\xC3\x89"), std::vector<std::string>{ete.id});  // ÉTÉ
}

TEST_P(StoreTest, QueryMatchesTheStartOfTheIdOnly) {
  SandboxRecord r = MustCreate(Sandbox(org_.id, "unrelated"));
  MustCreate(Sandbox(org_.id, "unrelated too"));
  EXPECT_EQ(ListIds(org_.id, r.id.substr(0, 12)), std::vector<std::string>{r.id});
  EXPECT_EQ(ListIds(org_.id, r.id), std::vector<std::string>{r.id});
  // Both stores ignore the case of an id's start, as of a name (SQLite's LIKE folds ASCII).
  std::string upper = r.id.substr(0, 12);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(ListIds(org_.id, upper), std::vector<std::string>{r.id});
  // The middle of an id is not a match (names here contain no part of it).
  EXPECT_TRUE(ListIds(org_.id, r.id.substr(6, 10)).empty());
}

TEST_P(StoreTest, LikeWildcardsInAQueryAreLiteral) {
  SandboxRecord percent = MustCreate(Sandbox(org_.id, "100% done"));
  SandboxRecord underscore = MustCreate(Sandbox(org_.id, "snake_case"));
  SandboxRecord backslash = MustCreate(Sandbox(org_.id, "dir\\name"));
  MustCreate(Sandbox(org_.id, "plain name"));
  MustCreate(Sandbox(org_.id, "snakeXcase"));  // what "e_c" would match were "_" a wildcard
  EXPECT_EQ(ListIds(org_.id, "%"), std::vector<std::string>{percent.id});
  EXPECT_EQ(ListIds(org_.id, "0% d"), std::vector<std::string>{percent.id});
  EXPECT_EQ(ListIds(org_.id, "e_c"), std::vector<std::string>{underscore.id});
  // As a raw LIKE pattern "sbx%" would match every id.
  EXPECT_TRUE(ListIds(org_.id, "sbx%").empty());
  EXPECT_EQ(ListIds(org_.id, "\\"), std::vector<std::string>{backslash.id});
}

TEST_P(StoreTest, DeletedSandboxesAreNotListedButStayReadable) {
  SandboxRecord gone = MustCreate(Sandbox(org_.id, "gone"));
  SandboxRecord kept = MustCreate(Sandbox(org_.id, "kept"));
  gone.status = "deleted";
  gone.deleted_at = 7000;
  gone.updated_at = 7000;
  ASSERT_TRUE(store_->UpdateSandbox(gone, {"provisioning"}).ok());
  EXPECT_EQ(ListIds(org_.id, ""), std::vector<std::string>{kept.id});
  EXPECT_TRUE(ListIds(org_.id, "gone").empty());
  auto read = store_->GetSandbox(org_.id, gone.id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, "deleted");
  EXPECT_EQ(read->deleted_at, 7000);
}

TEST_P(StoreTest, UpdateWithAnUnexpectedStatusIsAConflictAndChangesNothing) {
  SandboxRecord r = MustCreate(Sandbox(org_.id, "s"));
  SandboxRecord change = r;
  change.status = "completed";
  change.error = "should not be written";
  change.updated_at = 9999;
  Status st = store_->UpdateSandbox(change, {"running", "deleting"});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kConflict);
  auto read = store_->GetSandbox(org_.id, r.id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, "provisioning");
  EXPECT_EQ(read->error, "");
  EXPECT_EQ(read->updated_at, r.updated_at);
  EXPECT_EQ(EventStatuses(org_.id, r.id), std::vector<std::string>{"provisioning"});
}

TEST_P(StoreTest, UpdateOfAMissingSandboxIsNotFound) {
  SandboxRecord ghost = Sandbox(org_.id, "ghost");
  EXPECT_EQ(store_->UpdateSandbox(ghost, {"provisioning"}).code(), Code::kNotFound);
}

TEST_P(StoreTest, EventsAreRecordedOnStatusChangesOnly) {
  SandboxRecord r = MustCreate(Sandbox(org_.id, "s"));
  EXPECT_EQ(EventStatuses(org_.id, r.id), std::vector<std::string>{"provisioning"});

  r.result.started_at = "1970-01-01T00:00:06Z";
  r.updated_at = 6000;
  ASSERT_TRUE(store_->UpdateSandbox(r, {"provisioning"}).ok());
  EXPECT_EQ(EventStatuses(org_.id, r.id), std::vector<std::string>{"provisioning"});

  r.status = "running";
  r.updated_at = 6500;
  ASSERT_TRUE(store_->UpdateSandbox(r, {"provisioning"}).ok());
  r.status = "completed";
  r.termination_reason = "completed";
  r.updated_at = 7000;
  ASSERT_TRUE(store_->UpdateSandbox(r, {"running"}).ok());
  EXPECT_EQ(EventStatuses(org_.id, r.id),
            (std::vector<std::string>{"provisioning", "running", "completed"}));

  auto events = store_->ListEvents(org_.id, r.id, 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[1].at, 6500);
  EXPECT_EQ((*events)[2].at, 7000);
  EXPECT_EQ((*events)[2].sandbox_id, r.id);
  EXPECT_LT((*events)[0].seq, (*events)[1].seq);
  // after_seq and limit.
  auto tail = store_->ListEvents(org_.id, r.id, (*events)[0].seq, 1);
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0].status, "running");

  auto read = store_->GetSandbox(org_.id, r.id);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->termination_reason, "completed");
  EXPECT_EQ(read->result.started_at, "1970-01-01T00:00:06Z");
}

TEST_P(StoreTest, EventsAreListedPerOrganization) {
  SandboxRecord mine = MustCreate(Sandbox(org_.id, "a"));
  MustCreate(Sandbox(other_org_.id, "b"));
  auto events = store_->ListEvents(org_.id, "", 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].sandbox_id, mine.id);
}

TEST_P(StoreTest, LatestEventSeqFollowsTheNewestEvent) {
  auto empty = store_->LatestEventSeq();
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, 0);
  SandboxRecord r = MustCreate(Sandbox(org_.id, "a"));
  MustCreate(Sandbox(other_org_.id, "b"));
  r.status = "running";
  ASSERT_TRUE(store_->UpdateSandbox(r, {"provisioning"}).ok());
  auto latest = store_->LatestEventSeq();
  ASSERT_TRUE(latest.ok());
  auto events = store_->ListEvents(org_.id, r.id, 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_FALSE(events->empty());
  EXPECT_EQ(*latest, events->back().seq);
  EXPECT_TRUE(store_->ListEvents(org_.id, "", *latest, 100)->empty());
}

TEST_P(StoreTest, ListExpiredReturnsDueSandboxesNotBeingDeleted) {
  SandboxRecord due = Sandbox(org_.id, "due");
  due.expires_at = 10000;
  SandboxRecord exactly = Sandbox(org_.id, "exactly");
  exactly.expires_at = 20000;
  SandboxRecord later = Sandbox(org_.id, "later");
  later.expires_at = 20001;
  SandboxRecord never = Sandbox(org_.id, "never");
  never.expires_at = std::nullopt;
  SandboxRecord deleting = Sandbox(other_org_.id, "deleting");
  deleting.expires_at = 5000;
  SandboxRecord deleted = Sandbox(org_.id, "deleted");
  deleted.expires_at = 5000;
  for (auto* r : {&exactly, &due, &later, &never, &deleting, &deleted}) MustCreate(*r);
  deleting.status = "deleting";
  ASSERT_TRUE(store_->UpdateSandbox(deleting, {"provisioning"}).ok());
  deleted.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(deleted, {"provisioning"}).ok());

  auto expired = store_->ListExpired(20000);
  ASSERT_TRUE(expired.ok());
  std::vector<std::string> ids;
  for (const auto& r : *expired) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::string>{due.id, exactly.id}));
}

TEST_P(StoreTest, ListSandboxesWithStatusSpansOrganizations) {
  SandboxRecord a = MustCreate(Sandbox(org_.id, "a"));
  SandboxRecord b = MustCreate(Sandbox(other_org_.id, "b"));
  SandboxRecord c = MustCreate(Sandbox(org_.id, "c"));
  c.status = "running";
  ASSERT_TRUE(store_->UpdateSandbox(c, {"provisioning"}).ok());
  auto running = store_->ListSandboxesWithStatus({"running"});
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ((*running)[0].id, c.id);
  auto both = store_->ListSandboxesWithStatus({"provisioning", "running"});
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->size(), 3u);
}

}  // namespace
}  // namespace adapt::store

namespace adapt::store::testing_support {
namespace {

// A stand-in for the daemon's AES-GCM sealer: reversible, bound to organization and aad.
ValueSealer ToySealer() {
  ValueSealer s;
  s.seal = [](const std::string& org, const std::string& aad,
              const std::string& plain) -> Result<std::string> {
    return org + "|" + aad + "|" + std::string(plain.rbegin(), plain.rend());
  };
  s.open = [](const std::string& org, const std::string& aad,
              const std::string& sealed) -> Result<std::string> {
    std::string prefix = org + "|" + aad + "|";
    if (sealed.rfind(prefix, 0) != 0) return Internal("does not open");
    std::string body = sealed.substr(prefix.size());
    return std::string(body.rbegin(), body.rend());
  };
  return s;
}

std::string EnvColumn(const std::string& db_path, const std::string& id) {
  SQLite::Database db(db_path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, "SELECT env FROM sandboxes WHERE id = ?");
  q.bind(1, id);
  return q.executeStep() ? q.getColumn(0).getString() : "";
}

TEST_F(SqliteStoreTest, SandboxEnvironmentsAreSealedAtRestAndDroppedOnDelete) {
  // Written before the store had a sealer (an older adaptd): plaintext, sealed on SetValueSealer.
  SandboxRecord old = MustCreate(Sandbox(org_.id, "old"));
  SandboxRecord gone = MustCreate(Sandbox(org_.id, "gone"));
  gone.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(gone, {"provisioning"}).ok());
  ASSERT_NE(EnvColumn(path_, old.id).find("secret-value"), std::string::npos);
  ASSERT_TRUE(store_->SetValueSealer(ToySealer()).ok());
  EXPECT_EQ(EnvColumn(path_, old.id).find("secret-value"), std::string::npos);
  EXPECT_EQ(EnvColumn(path_, gone.id), R"({"MODE":"","TOKEN":""})");
  EXPECT_EQ(store_->GetSandbox(org_.id, old.id)->env, old.env);

  SandboxRecord fresh = MustCreate(Sandbox(org_.id, "fresh"));
  EXPECT_EQ(EnvColumn(path_, fresh.id).find("secret-value"), std::string::npos);
  EXPECT_EQ(EnvColumn(path_, fresh.id).rfind("sealed:v1:", 0), 0u);
  ASSERT_TRUE(
      store_->SetSandboxEnv(org_.id, fresh.id, {{"SANDBOX_STORAGE_TOKEN", "stk_x.y"}}).ok());
  auto got = store_->GetSandbox(org_.id, fresh.id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->env.at("TOKEN"), "secret-value");
  EXPECT_EQ(got->env.at("SANDBOX_STORAGE_TOKEN"), "stk_x.y");
  EXPECT_EQ(EnvColumn(path_, fresh.id).find("stk_x.y"), std::string::npos);

  // Deleted: the names stay (environmentSources), the values go.
  fresh.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(fresh, {"provisioning"}).ok());
  got = store_->GetSandbox(org_.id, fresh.id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->env, (std::map<std::string, std::string>{
                          {"MODE", ""}, {"SANDBOX_STORAGE_TOKEN", ""}, {"TOKEN", ""}}));
}

TEST_F(SqliteStoreTest, TheListReadsEnvironmentNamesWithoutOpeningTheSealedValues) {
  ValueSealer sealer = ToySealer();
  auto opens = std::make_shared<int>(0);
  sealer.open = [opens, open = sealer.open](const std::string& org, const std::string& aad,
                                            const std::string& sealed) {
    ++*opens;
    return open(org, aad, sealed);
  };
  ASSERT_TRUE(store_->SetValueSealer(sealer).ok());
  SandboxRecord a = MustCreate(Sandbox(org_.id, "a"));
  SandboxRecord b = MustCreate(Sandbox(org_.id, "b"));
  ASSERT_TRUE(store_->SetSandboxEnv(org_.id, b.id, {{"ADDED", "stk_x.y"}}).ok());
  const std::map<std::string, std::string> names_a{{"MODE", ""}, {"TOKEN", ""}};
  const std::map<std::string, std::string> names_b{{"ADDED", ""}, {"MODE", ""}, {"TOKEN", ""}};
  auto listed = [&] {
    auto page = store_->ListSandboxes(org_.id, "", 10, std::nullopt);
    EXPECT_TRUE(page.ok()) << page.status().message();
    std::map<std::string, std::map<std::string, std::string>> env;
    if (page.ok())
      for (const auto& r : page->items) env[r.id] = r.env;
    return env;
  };
  *opens = 0;
  auto env = listed();
  EXPECT_EQ(env[a.id], names_a);
  EXPECT_EQ(env[b.id], names_b);
  EXPECT_EQ(*opens, 0);
  // A single read still opens the values.
  EXPECT_EQ(store_->GetSandbox(org_.id, b.id)->env.at("ADDED"), "stk_x.y");
  EXPECT_EQ(*opens, 1);

  // A row an older adaptd wrote has no names apart: listed from its sealed column, and given
  // them at the next start (SetValueSealer).
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("UPDATE sandboxes SET env_names = NULL WHERE id = '" + a.id + "'");
  }
  *opens = 0;
  env = listed();
  EXPECT_EQ(env[a.id], names_a);
  EXPECT_EQ(*opens, 1);
  ASSERT_TRUE(store_->SetValueSealer(sealer).ok());
  *opens = 0;
  env = listed();
  EXPECT_EQ(env[a.id], names_a);
  EXPECT_EQ(env[b.id], names_b);
  EXPECT_EQ(*opens, 0);
  // Deleted: both columns keep the names only.
  a.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(a, {"provisioning"}).ok());
  EXPECT_EQ(store_->GetSandbox(org_.id, a.id)->env, names_a);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         testing::Values(testing_support::Backend::kSqlite,
                                         testing_support::Backend::kMemory),
                         testing_support::BackendName);

}  // namespace
}  // namespace adapt::store::testing_support

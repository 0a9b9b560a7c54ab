// CheckpointService::ListOrganization over a MemoryStore and a FakeRuntime: the caller's
// organization's checkpoints across its sandboxes, its live sandboxes' and the kept ones of
// its deleted sandboxes, newest first and paged; never another organization's; bad limits,
// cursors and sandbox ids are refused naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/checkpoint_service.h"
#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

class CheckpointListingTest : public testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    checkpoints_ = std::make_unique<CheckpointService>(store_, runtime_, *lifecycle_, *service_);
  }

  // A running durable sandbox of `org` labelled name=`label`.
  std::string Running(const std::string& org, const std::string& label) {
    store::SandboxRecord r = NewSandbox("provisioning", false, true);
    r.org_id = org;
    r.config.labels = {{"name", label}};
    Insert(r);
    lifecycle_->Provision(r.id);
    EXPECT_EQ(StatusOf(r.id), "running");
    return r.id;
  }

  void Take(const Principal& who, const std::string& id, const std::string& name,
            bool keep = false) {
    auto taken = checkpoints_->Take(who, id, name, keep);
    ASSERT_TRUE(taken.ok()) << taken.status().message();
  }

  std::string OtherOrg() {
    auto org = store_.CreateOrg({NewId("org"), "other", false, NowMillis()});
    EXPECT_TRUE(org.ok()) << org.status().message();
    return org.ok() ? org->id : "";
  }

  Result<CheckpointPage> List(const Principal& who, ListCheckpointsRequest req = {}) {
    return checkpoints_->ListOrganization(who, req);
  }

  static ListCheckpointsRequest Request(int limit, const std::string& cursor = "",
                                        const std::string& sandbox_id = "",
                                        std::optional<bool> kept = std::nullopt) {
    ListCheckpointsRequest req;
    req.limit = limit;
    req.cursor = cursor;
    req.sandbox_id = sandbox_id;
    req.kept = kept;
    return req;
  }

  // "<sandboxId>/<name>" of every item, in the page's order.
  static std::vector<std::string> Names(const CheckpointPage& page) {
    std::vector<std::string> out;
    for (const auto& c : page.items) out.push_back(c.sandbox_id + "/" + c.name);
    return out;
  }

  std::unique_ptr<CheckpointService> checkpoints_;
};

TEST_F(CheckpointListingTest, ListsLiveSandboxesCheckpointsAndDeletedSandboxesKeptOnesOnly) {
  const std::string live = Running(org_, "live");
  const std::string gone = Running(org_, "gone");
  Take(Caller(), live, "one");
  Take(Caller(), live, "two", true);
  Take(Caller(), gone, "kept", true);
  Take(Caller(), gone, "dropped");
  ASSERT_TRUE(service_->Delete(Caller(), gone).ok());
  ASSERT_EQ(StatusOf(gone), "deleted");

  auto page = List(Caller());
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_FALSE(page->next_cursor.has_value());
  std::vector<std::string> got = Names(*page);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()),
            (std::set<std::string>{live + "/one", live + "/two", gone + "/kept"}));
  for (const auto& c : page->items) {
    EXPECT_EQ(c.sandbox_deleted, c.sandbox_id == gone) << c.name;
    EXPECT_EQ(c.sandbox_labels.at("name"), c.sandbox_id == gone ? "gone" : "live") << c.name;
    EXPECT_EQ(c.keep, c.name != "one") << c.name;
    EXPECT_GT(c.size_bytes, 0u) << c.name;
  }
  // Newest first.
  for (size_t i = 1; i < page->items.size(); ++i)
    EXPECT_GE(page->items[i - 1].created_at, page->items[i].created_at);
}

TEST_F(CheckpointListingTest, AnotherOrganizationsCheckpointsNeverAppear) {
  const std::string mine = Running(org_, "mine");
  Take(Caller(), mine, "mine", true);
  const std::string other_org = OtherOrg();
  Principal other{other_org, "key_2", false};
  const std::string theirs = Running(other_org, "theirs");
  Take(other, theirs, "theirs", true);
  const std::string theirs_gone = Running(other_org, "theirs-gone");
  Take(other, theirs_gone, "kept", true);
  ASSERT_TRUE(service_->Delete(other, theirs_gone).ok());

  auto page = List(Caller());
  ASSERT_TRUE(page.ok()) << page.status().message();
  EXPECT_EQ(Names(*page), std::vector<std::string>{mine + "/mine"});
  // Asking for their sandbox by id lists nothing, as an unknown sandbox does.
  for (const std::string& id : {theirs, theirs_gone, std::string("sbx_0123456789abcdef")}) {
    auto filtered = List(Caller(), Request(50, "", id));
    ASSERT_TRUE(filtered.ok()) << filtered.status().message();
    EXPECT_TRUE(filtered->items.empty()) << id;
  }
  // A principal with no organization is not "every organization".
  auto nobody = List(Principal{"", "key_3", false});
  ASSERT_TRUE(nobody.ok());
  EXPECT_TRUE(nobody->items.empty());
  auto nobody_filtered = List(Principal{"", "key_3", false}, Request(50, "", mine));
  ASSERT_TRUE(nobody_filtered.ok());
  EXPECT_TRUE(nobody_filtered->items.empty());
  auto theirs_page = List(other);
  ASSERT_TRUE(theirs_page.ok());
  std::vector<std::string> got = Names(*theirs_page);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()),
            (std::set<std::string>{theirs + "/theirs", theirs_gone + "/kept"}));
}

TEST_F(CheckpointListingTest, PagesFollowTheCursorWithNoRepeatAndNoGapWhileItemsComeAndGo) {
  std::vector<std::string> ids;
  for (const char* label : {"a", "b", "c"}) {
    ids.push_back(Running(org_, label));
    for (const char* name : {"x", "y", "z"}) Take(Caller(), ids.back(), name);
  }
  auto whole = List(Caller());
  ASSERT_TRUE(whole.ok());
  ASSERT_EQ(whole->items.size(), 9u);

  auto first = List(Caller(), Request(4));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(first->next_cursor.has_value());
  std::vector<std::string> walked = Names(*first);
  // Between pages: one already listed is deleted and a new one is taken (newer than all).
  const std::string deleted_from = first->items[0].sandbox_id;
  ASSERT_TRUE(checkpoints_->Delete(Caller(), deleted_from, first->items[0].name).ok());
  // (FakeRuntime dates a checkpoint by its sandbox's count: a sandbox still holding all three
  // gives it the newest date.)
  Take(Caller(), deleted_from == ids[0] ? ids[1] : ids[0], "newer");
  std::optional<std::string> cursor = first->next_cursor;
  int pages = 1;
  while (cursor) {
    auto next = List(Caller(), Request(4, *cursor));
    ASSERT_TRUE(next.ok()) << next.status().message();
    for (const auto& name : Names(*next)) walked.push_back(name);
    cursor = next->next_cursor;
    ASSERT_LT(++pages, 10);
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(walked, Names(*whole));
}

TEST_F(CheckpointListingTest, FiltersBySandboxAndByKeep) {
  const std::string a = Running(org_, "a");
  const std::string b = Running(org_, "b");
  Take(Caller(), a, "a-kept", true);
  Take(Caller(), a, "a-not");
  Take(Caller(), b, "b-kept", true);
  Take(Caller(), b, "b-not");
  ASSERT_TRUE(service_->Delete(Caller(), b).ok());

  auto only_a = List(Caller(), Request(50, "", a));
  ASSERT_TRUE(only_a.ok());
  std::vector<std::string> got = Names(*only_a);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()),
            (std::set<std::string>{a + "/a-kept", a + "/a-not"}));
  auto only_b = List(Caller(), Request(50, "", b));
  ASSERT_TRUE(only_b.ok());
  EXPECT_EQ(Names(*only_b), std::vector<std::string>{b + "/b-kept"});

  auto kept = List(Caller(), Request(50, "", "", true));
  ASSERT_TRUE(kept.ok());
  got = Names(*kept);
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()),
            (std::set<std::string>{a + "/a-kept", b + "/b-kept"}));
  auto not_kept = List(Caller(), Request(50, "", "", false));
  ASSERT_TRUE(not_kept.ok());
  EXPECT_EQ(Names(*not_kept), std::vector<std::string>{a + "/a-not"});
}

TEST_F(CheckpointListingTest, BadLimitCursorOrSandboxIdIsInvalidArgumentNamingTheField) {
  const std::string id = Running(org_, "a");
  Take(Caller(), id, "one");
  for (int limit : {0, -1, 201}) {
    auto page = List(Caller(), Request(limit));
    ASSERT_FALSE(page.ok()) << limit;
    EXPECT_EQ(page.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(page.status().field(), "limit");
  }
  for (const std::string& cursor : std::vector<std::string>{
           "c5", "k", "k5", "k5.", "k5." + id, "kx." + id + ".one", "k-1." + id + ".one",
           "k5.sbx_nope!.one", "k5." + id + ".Bad_Name", "k5." + id + ".one.two",
           "k99999999999999999999." + id + ".one", "k." + id + ".one"}) {
    auto page = List(Caller(), Request(50, cursor));
    ASSERT_FALSE(page.ok()) << cursor;
    EXPECT_EQ(page.status().code(), Code::kInvalidArgument) << cursor;
    EXPECT_EQ(page.status().field(), "cursor") << cursor;
  }
  for (const std::string sandbox : {"nonsense", "sbx_", "../sbx_x"}) {
    auto page = List(Caller(), Request(50, "", sandbox));
    ASSERT_FALSE(page.ok()) << sandbox;
    EXPECT_EQ(page.status().field(), "sandboxId") << sandbox;
  }
  // A well-formed cursor past everything is an empty last page, not an error.
  auto past = List(Caller(), Request(50, "k0." + id + ".a"));
  ASSERT_TRUE(past.ok()) << past.status().message();
  EXPECT_TRUE(past->items.empty());
  EXPECT_FALSE(past->next_cursor.has_value());
}

// One sandbox's list (GET /v1/sandboxes/{id}/checkpoints) pages the same way: newest first,
// a page at a time, its cursors the organization's listing's.
TEST_F(CheckpointListingTest, ASandboxsCheckpointsArePagedNewestFirstToo) {
  const std::string id = Running(org_, "paged");
  for (const char* name : {"first", "second", "third"}) Take(Caller(), id, name);
  auto first = checkpoints_->List(Caller(), id, PageRequest{2, ""});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->items.size(), 2u);
  for (size_t i = 1; i < first->items.size(); ++i)
    EXPECT_GE(first->items[i - 1].created_at, first->items[i].created_at);
  ASSERT_TRUE(first->next_cursor);
  auto rest = checkpoints_->List(Caller(), id, PageRequest{2, *first->next_cursor});
  ASSERT_TRUE(rest.ok()) << rest.status().message();
  ASSERT_EQ(rest->items.size(), 1u);
  EXPECT_FALSE(rest->next_cursor);
  std::set<std::string> seen = {first->items[0].name, first->items[1].name, rest->items[0].name};
  EXPECT_EQ(seen, (std::set<std::string>{"first", "second", "third"}));
  EXPECT_EQ(checkpoints_->List(Caller(), id, PageRequest{0, ""}).status().field(), "limit");
  EXPECT_EQ(checkpoints_->List(Caller(), id, PageRequest{2, "c5"}).status().field(), "cursor");
  Principal other{OtherOrg(), "key_2", false};
  EXPECT_EQ(checkpoints_->List(other, id).status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace adapt::core

// What only MemoryStore has: its fault hook. (Its contract is store_test's StoreTest/Memory.)
#include "store/memory_store.h"

#include <gtest/gtest.h>

namespace adapt::store {
namespace {

TEST(MemoryStore, WhileWritesFailNothingChangesAndReadsStillAnswer) {
  MemoryStore store;
  ASSERT_TRUE(store.CreateOrg({"org_1", "acme", false, 1}).ok());
  SandboxRecord r;
  r.id = "sbx_1";
  r.org_id = "org_1";
  r.status = "provisioning";
  ASSERT_TRUE(store.CreateSandbox(r, std::nullopt).ok());

  store.FailWrites(Internal("database or disk is full"));
  r.status = "running";
  Status st = store.UpdateSandbox(r, {"provisioning"});
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_EQ(st.message(), "database or disk is full");
  EXPECT_FALSE(store.PutPoolMember({"sbx_2", "k", "ready", 1}).ok());
  EXPECT_FALSE(store.CreateOrg({"org_2", "other", false, 1}).ok());
  EXPECT_EQ(store.GetSandbox("", "sbx_1")->status, "provisioning");
  EXPECT_TRUE(store.ListPoolMembers()->empty());
  EXPECT_EQ(store.ListEvents("org_1", "", 0, 10)->size(), 1u);

  store.FailWrites(std::nullopt);
  EXPECT_TRUE(store.UpdateSandbox(r, {"provisioning"}).ok());
  EXPECT_EQ(store.GetSandbox("", "sbx_1")->status, "running");
}

}  // namespace
}  // namespace adapt::store

// The store's persistent storage volumes (SQLite and MemoryStore): unique names per organization,
// attachments (sandboxes not yet ended that mount a volume) and the delete guard.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/ids.h"
#include "os/temp_dir.h"
#include "store/memory_store.h"
#include "store/store.h"

namespace adapt::store {
namespace {

using nlohmann::json;

class VolumeStoreTest : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      store_ = std::make_unique<MemoryStore>();
    } else {
      auto s = OpenSqliteStore(dir_ + "/adapt.db");
      ASSERT_TRUE(s.ok()) << s.status().message();
      store_ = std::move(*s);
    }
    org_ = store_->CreateOrg({NewId("org"), "acme", false, 1000})->id;
    other_ = store_->CreateOrg({NewId("org"), "other", false, 1000})->id;
  }
  void TearDown() override { store_.reset(); }

  VolumeRecord Volume(const std::string& org, const std::string& name) {
    VolumeRecord v;
    v.id = NewId("vol");
    v.org_id = org;
    v.name = name;
    v.size_mib = 64;
    v.status = "ready";
    v.created_at = 1000;
    return v;
  }

  std::string Sandbox(const std::string& org, const std::optional<std::string>& storage,
                      const std::string& status) {
    SandboxRecord r;
    r.id = NewId("sbx");
    r.org_id = org;
    r.status = "provisioning";
    r.config.storage = storage;
    r.created_at = r.updated_at = 2000;
    EXPECT_TRUE(store_->CreateSandbox(r, std::nullopt).ok());
    r.status = status;
    EXPECT_TRUE(store_->UpdateSandbox(r, {"provisioning"}).ok());
    return r.id;
  }

  os::TempDir tmp_{"volumes-test"};
  const std::string dir_ = tmp_.path();
  std::string org_, other_;
  std::unique_ptr<Store> store_;
};

TEST_P(VolumeStoreTest, NamesAreUniquePerOrganization) {
  VolumeRecord a = Volume(org_, "data");
  ASSERT_TRUE(store_->PutVolume(a).ok());
  EXPECT_EQ(store_->PutVolume(Volume(org_, "data")).code(), Code::kConflict);
  EXPECT_TRUE(store_->PutVolume(Volume(other_, "data")).ok());
  a.key_identifier = "00ff";
  ASSERT_TRUE(store_->PutVolume(a).ok());
  auto got = store_->GetVolumeByName(org_, "data");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->id, a.id);
  EXPECT_EQ(got->key_identifier, "00ff");
  EXPECT_EQ(store_->GetVolumeByName(org_, "nope").status().code(), Code::kNotFound);
  EXPECT_EQ(store_->ListVolumes(org_)->size(), 1u);
  EXPECT_EQ(store_->ListVolumes("")->size(), 2u);
}

TEST_P(VolumeStoreTest, DeleteIsRefusedWhileALiveSandboxMountsIt) {
  VolumeRecord v = Volume(org_, "data");
  ASSERT_TRUE(store_->PutVolume(v).ok());
  Sandbox(org_, "data", "completed");  // ended: not an attachment
  Sandbox(org_, "other", "running");
  Sandbox(org_, std::nullopt, "running");
  Sandbox(other_, "data", "running");  // another organization's "data"
  EXPECT_TRUE(store_->ListVolumeAttachments(org_, "data")->empty());
  std::string user = Sandbox(org_, "data", "running");
  auto users = store_->ListVolumeAttachments(org_, "data");
  ASSERT_EQ(users->size(), 1u);
  EXPECT_EQ((*users)[0].id, user);
  Status st = store_->BeginDeleteVolume(org_, v.id);
  EXPECT_EQ(st.code(), Code::kConflict);
  EXPECT_NE(st.message().find(user), std::string::npos);
  EXPECT_EQ(store_->GetVolumeByName(org_, "data")->status, "ready");
  EXPECT_EQ(store_->BeginDeleteVolume(other_, v.id).code(), Code::kNotFound);

  SandboxRecord r = *store_->GetSandbox(org_, user);
  r.status = "deleted";
  ASSERT_TRUE(store_->UpdateSandbox(r, {"running"}).ok());
  ASSERT_TRUE(store_->BeginDeleteVolume(org_, v.id).ok());
  EXPECT_EQ(store_->GetVolumeByName(org_, "data")->status, "deleting");
  ASSERT_TRUE(store_->DeleteVolume(v.id).ok());
  EXPECT_EQ(store_->GetVolumeByName(org_, "data").status().code(), Code::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(Backends, VolumeStoreTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Memory" : "Sqlite";
                         });

}  // namespace
}  // namespace adapt::store

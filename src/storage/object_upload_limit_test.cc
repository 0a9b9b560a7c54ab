// ObjectStore::CreateUpload's cap on one organization's unfinished multipart uploads.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "os/files.h"
#include "storage/object_store.h"
#include "storage/object_store_fixture.h"

namespace adapt::storage {
namespace {

using UploadLimitTest = testing_support::ObjectStoreFixture;

TEST_F(UploadLimitTest, PastTheCapABeginIsRefusedNamingItAndMakesNothing) {
  objects_->SetMaxUploadsPerOrg(3);
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    auto id = objects_->CreateUpload("org_a", "k" + std::to_string(i), "");
    ASSERT_TRUE(id.ok()) << id.status().message();
    ids.push_back(*id);
  }
  auto refused = objects_->CreateUpload("org_a", "k3", "");
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("3 unfinished multipart uploads"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(os::ListDir(dir_ + "/objects/uploads").size(), 3u);
  // Another organization has its own count; an aborted or completed upload frees a place.
  EXPECT_TRUE(objects_->CreateUpload("org_b", "k", "").ok());
  ASSERT_TRUE(objects_->AbortUpload("org_a", ids[0], "k0").ok());
  EXPECT_TRUE(objects_->CreateUpload("org_a", "k3", "").ok());
  EXPECT_FALSE(objects_->CreateUpload("org_a", "k4", "").ok());
}

TEST_F(UploadLimitTest, ConcurrentBeginsCannotPassTheCapTogether) {
  objects_->SetMaxUploadsPerOrg(5);
  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4; ++i)
        if (objects_->CreateUpload("org_a", "k" + std::to_string(t * 10 + i), "").ok()) ++made;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 5);
  EXPECT_EQ(objects_->ListUploads("org_a", {})->uploads.size(), 5u);
}

TEST_F(UploadLimitTest, TheDefaultCapIsTenThousand) {
  EXPECT_EQ(objects_->max_uploads_per_org(), 10000u);
}

}  // namespace
}  // namespace adapt::storage

// Multipart uploads ended while something else of them runs (a chaos run of the storage
// gateway, 2026-12-06): two aborts at once, a part and an abort at once, completes at once, a
// PUT of the key while a complete stores it. None is a host failure, none leaves a directory
// or a blob behind, and the key always names a blob that is there.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "os/files.h"
#include "storage/object_store_fixture.h"

namespace adapt::storage {
namespace {

using testing_support::FromString;

class ObjectUploadRaceTest : public testing_support::ObjectStoreFixture {
 protected:
  // Runs `n` copies of `fn(i)` released together.
  template <typename Fn>
  void AtOnce(int n, Fn fn) {
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        ++ready;
        while (ready < n) std::this_thread::yield();
        fn(i);
      });
    for (auto& t : threads) t.join();
  }

  std::vector<std::string> Uploads() { return os::ListDir(dir_ + "/objects/uploads"); }
  std::vector<std::string> Blobs() { return os::ListDir(dir_ + "/objects/blobs"); }
};

TEST_F(ObjectUploadRaceTest, TwoAbortsAtOnceBothSucceedOrFindItGone) {
  for (int round = 0; round < 20; ++round) {
    auto id = objects_->CreateUpload("org_a", "k", "");
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(objects_->PutPart("org_a", *id, "k", 1, FromString("abc")).ok());
    std::vector<Code> codes(2);
    AtOnce(2, [&](int i) { codes[i] = objects_->AbortUpload("org_a", *id, "k").code(); });
    for (Code c : codes) EXPECT_TRUE(c == Code::kOk || c == Code::kNotFound) << int(c);
    EXPECT_TRUE(Uploads().empty());
  }
  EXPECT_EQ(objects_->UsedBytes("org_a").value(), 0u);
}

TEST_F(ObjectUploadRaceTest, APartAndAnAbortAtOnceLeaveNothing) {
  for (int round = 0; round < 20; ++round) {
    auto id = objects_->CreateUpload("org_a", "k", "");
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(objects_->PutPart("org_a", *id, "k", 1, FromString("abc")).ok());
    Code part = Code::kOk, abort = Code::kOk;
    AtOnce(2, [&](int i) {
      if (i == 0)
        part = objects_->PutPart("org_a", *id, "k", 2, FromString(std::string(100000, 'x')))
                   .status()
                   .code();
      else
        abort = objects_->AbortUpload("org_a", *id, "k").code();
    });
    EXPECT_TRUE(part == Code::kOk || part == Code::kNotFound) << int(part);
    EXPECT_EQ(abort, Code::kOk);
    EXPECT_TRUE(Uploads().empty());
  }
  EXPECT_EQ(objects_->UsedBytes("org_a").value(), 0u);
}

TEST_F(ObjectUploadRaceTest, CompletesAtOnceStoreTheObjectOnceAndLeaveNoBlobBehind) {
  for (int round = 0; round < 10; ++round) {
    auto id = objects_->CreateUpload("org_a", "k", "");
    ASSERT_TRUE(id.ok());
    auto e1 = objects_->PutPart("org_a", *id, "k", 1, FromString(std::string(70000, 'a')));
    auto e2 = objects_->PutPart("org_a", *id, "k", 2, FromString("bc"));
    ASSERT_TRUE(e1.ok() && e2.ok());
    std::atomic<int> stored{0};
    AtOnce(4, [&](int) {
      auto rec = objects_->CompleteUpload("org_a", *id, "k", {{1, *e1}, {2, *e2}});
      if (rec.ok())
        ++stored;
      else
        EXPECT_EQ(rec.status().code(), Code::kNotFound) << rec.status().message();
    });
    EXPECT_EQ(stored, 1);
    EXPECT_EQ(Blobs().size(), 1u);
    auto opened = objects_->Open("org_a", "k");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(opened->first.size, 70002u);
    EXPECT_TRUE(Uploads().empty());
  }
}

TEST_F(ObjectUploadRaceTest, APutOfTheKeyBesideACompleteLeavesTheKeyOnABlobThatIsThere) {
  for (int round = 0; round < 10; ++round) {
    auto id = objects_->CreateUpload("org_a", "k", "");
    ASSERT_TRUE(id.ok());
    auto e1 = objects_->PutPart("org_a", *id, "k", 1, FromString(std::string(200000, 'a')));
    ASSERT_TRUE(e1.ok());
    AtOnce(2, [&](int i) {
      if (i == 0)
        EXPECT_TRUE(objects_->CompleteUpload("org_a", *id, "k", {{1, *e1}}).ok());
      else
        EXPECT_TRUE(objects_->Put("org_a", "k", "", FromString("put")).ok());
    });
    auto opened = objects_->Open("org_a", "k");
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(Blobs().size(), 1u);
  }
}

}  // namespace
}  // namespace adapt::storage

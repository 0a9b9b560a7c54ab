#include "storage/object_store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <limits>

#include "os/files.h"
#include "storage/object_store_fixture.h"
#include "storage/storage_tokens.h"
#include "store/store.h"

namespace adapt::storage {
namespace {

std::string ReadAll(os::FileReader& r) {
  std::string out;
  char buf[4096];
  long n;
  while ((n = r.Read(buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

using testing_support::FromString;
using ObjectStoreTest = testing_support::ObjectStoreFixture;

TEST_F(ObjectStoreTest, PutGetOverwriteDeleteKeepsHashesAndNoStrayBlobs) {
  auto rec = objects_->Put("org_a", "dir/x.txt", "text/plain", FromString("hello"));
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ(rec->size, 5u);
  EXPECT_EQ(rec->sha256, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  EXPECT_EQ(rec->etag, "5d41402abc4b2a76b9719d911017c592");
  ASSERT_TRUE(objects_->Put("org_a", "dir/x.txt", "", FromString("bye")).ok());
  auto opened = objects_->Open("org_a", "dir/x.txt");
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(ReadAll(*opened->second), "bye");
  EXPECT_EQ(opened->first.content_type, "application/octet-stream");
  EXPECT_EQ(os::ListDir(dir_ + "/objects/blobs").size(), 1u);  // the old blob is gone
  // Another organization sees nothing.
  EXPECT_EQ(objects_->Open("org_b", "dir/x.txt").status().code(), Code::kNotFound);
  EXPECT_EQ(objects_->Delete("org_b", "dir/x.txt").code(), Code::kNotFound);
  ASSERT_TRUE(objects_->Delete("org_a", "dir/x.txt").ok());
  EXPECT_TRUE(os::ListDir(dir_ + "/objects/blobs").empty());
}

TEST_F(ObjectStoreTest, ShaMismatchChangesNothing) {
  auto rec = objects_->Put("org_a", "k", "", FromString("hello"), std::string(64, '0'));
  EXPECT_FALSE(rec.ok());
  EXPECT_EQ(objects_->Head("org_a", "k").status().code(), Code::kNotFound);
  EXPECT_TRUE(os::ListDir(dir_ + "/objects/blobs").empty());
}

TEST_F(ObjectStoreTest, ListWithPrefixDelimiterAndPages) {
  for (const char* k : {"a/1", "a/2", "a/b/3", "a/c/4", "b/5", "ab"})
    ASSERT_TRUE(objects_->Put("org_a", k, "", FromString(k)).ok());
  ASSERT_TRUE(objects_->Put("org_b", "a/9", "", FromString("x")).ok());
  auto all = objects_->List("org_a", "a/", "/", "", 100);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->objects.size(), 2u);
  EXPECT_EQ(all->objects[0].key, "a/1");
  EXPECT_EQ(all->common_prefixes, (std::vector<std::string>{"a/b/", "a/c/"}));
  EXPECT_FALSE(all->truncated);
  // Pages of two, no delimiter.
  std::vector<std::string> seen;
  std::string after;
  for (int i = 0; i < 10; ++i) {
    auto page = objects_->List("org_a", "a", "", after, 2);
    ASSERT_TRUE(page.ok());
    for (auto& o : page->objects) seen.push_back(o.key);
    if (!page->truncated) break;
    after = page->next_after;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a/1", "a/2", "a/b/3", "a/c/4", "ab"}));
  EXPECT_FALSE(objects_->List("org_a", "../", "", "", 10).ok());
}

TEST_F(ObjectStoreTest, MultipartChecksPartsAndMakesS3Etag) {
  auto id = objects_->CreateUpload("org_a", "big", "");
  ASSERT_TRUE(id.ok());
  auto e1 = objects_->PutPart("org_a", *id, "big", 1, FromString("abc"));
  auto e2 = objects_->PutPart("org_a", *id, "big", 2, FromString("def"));
  ASSERT_TRUE(e1.ok() && e2.ok());
  // Another organization cannot touch the upload.
  EXPECT_EQ(objects_->PutPart("org_b", *id, "big", 3, FromString("x")).status().code(),
            Code::kNotFound);
  EXPECT_FALSE(objects_->CompleteUpload("org_a", *id, "big", {{1, *e1}, {2, "bad"}}).ok());
  auto rec = objects_->CompleteUpload("org_a", *id, "big", {{1, *e1}, {2, *e2}});
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ(rec->size, 6u);
  EXPECT_EQ(rec->etag.substr(rec->etag.size() - 2), "-2");
  auto opened = objects_->Open("org_a", "big");
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(ReadAll(*opened->second), "abcdef");
  EXPECT_EQ(opened->first.etag, rec->etag);
}

TEST_F(ObjectStoreTest, APartWhoseShaDoesNotMatchIsRefusedAndKeepsTheOneBefore) {
  auto id = objects_->CreateUpload("org_a", "big", "");
  ASSERT_TRUE(id.ok());
  auto first = objects_->PutPart("org_a", *id, "big", 1, FromString("abc"));
  ASSERT_TRUE(first.ok());
  auto bad = objects_->PutPart("org_a", *id, "big", 1, FromString("xyz"), std::string(64, '0'));
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().field(), "x-amz-content-sha256");
  EXPECT_EQ(objects_->PutPart("org_a", *id, "big", 2, FromString("x"), std::string(64, '0'))
                .status()
                .field(),
            "x-amz-content-sha256");
  auto parts = objects_->ListParts("org_a", *id, "big");
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 1u);
  EXPECT_EQ((*parts)[0].etag, *first);
  EXPECT_EQ(objects_->UsedBytes("org_a").value(), 3u);  // the refused bytes are not held
  // The hash of "xyz": accepted.
  EXPECT_TRUE(objects_
                  ->PutPart("org_a", *id, "big", 1, FromString("xyz"),
                            "3608bca1e44ea6c4d268eb6db02260269892c0b42b86bbf1e77a6fa16c3c9282")
                  .ok());
}

TEST_F(ObjectStoreTest, APartWhoseUploadIsAbortedWhileItStreamsIsNotFoundNamingNoPath) {
  auto id = objects_->CreateUpload("org_a", "big", "");
  ASSERT_TRUE(id.ok());
  bool aborted = false;
  auto part = objects_->PutPart("org_a", *id, "big", 1, [&](char* buf, size_t) -> long {
    if (aborted) return 0;
    aborted = objects_->AbortUpload("org_a", *id, "big").ok();
    buf[0] = 'x';
    return 1;
  });
  ASSERT_TRUE(aborted);
  EXPECT_EQ(part.status().code(), Code::kNotFound);
  EXPECT_EQ(part.status().message(), "upload " + *id + " not found");
  EXPECT_EQ(objects_->UsedBytes("org_a").value(), 0u);
}

TEST_F(ObjectStoreTest, AnOsFailureIsOneFixedSentenceNamingNoPath) {
  // The blobs directory replaced by a file: every new blob fails to be created.
  ASSERT_TRUE(os::RemoveTree(dir_ + "/objects/blobs").ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/objects/blobs", "", 0600).ok());
  auto put = objects_->Put("org_a", "k", "", FromString("hello"));
  EXPECT_EQ(put.status().code(), Code::kInternal);
  EXPECT_EQ(put.status().message(), "the object store could not complete the request");
  EXPECT_EQ(put.status().message().find(dir_), std::string::npos);
}

TEST_F(ObjectStoreTest, ListPartsShowsUploadedPartsInOrder) {
  auto id = objects_->CreateUpload("org_a", "big", "");
  ASSERT_TRUE(id.ok());
  auto e3 = objects_->PutPart("org_a", *id, "big", 3, FromString("ghij"));
  auto e1 = objects_->PutPart("org_a", *id, "big", 1, FromString("abc"));
  ASSERT_TRUE(e1.ok() && e3.ok());
  auto parts = objects_->ListParts("org_a", *id, "big");
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].number, 1);
  EXPECT_EQ((*parts)[0].size, 3u);
  EXPECT_EQ((*parts)[0].etag, *e1);
  EXPECT_EQ((*parts)[1].number, 3);
  EXPECT_EQ((*parts)[1].etag, *e3);
  EXPECT_EQ(objects_->ListParts("org_b", *id, "big").status().code(), Code::kNotFound);
  EXPECT_EQ(objects_->ListParts("org_a", *id, "other").status().code(), Code::kNotFound);
}

TEST_F(ObjectStoreTest, ListPartsGivesEachPartTheTimeItWasStored) {
  auto id = objects_->CreateUpload("org_a", "timed", "");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(objects_->PutPart("org_a", *id, "timed", 1, FromString("one")).ok());
  ASSERT_TRUE(objects_->PutPart("org_a", *id, "timed", 2, FromString("two")).ok());
  // Stored at two known times in the past: neither is the time of the listing.
  const int64_t first = 1577836800000, second = 1609459200123;  // 2020-01-01, 2021-01-01
  auto stored_at = [](int64_t ms) {
    return std::chrono::file_clock::from_sys(
        std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ms)));
  };
  const std::string dir = dir_ + "/objects/uploads/" + *id;
  std::filesystem::last_write_time(dir + "/00001", stored_at(first));
  std::filesystem::last_write_time(dir + "/00002", stored_at(second));
  auto parts = objects_->ListParts("org_a", *id, "timed");
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].modified_at, first);
  EXPECT_EQ((*parts)[1].modified_at, second);
}

TEST_F(ObjectStoreTest, ExpireUploadsRemovesOnlyOlderOnes) {
  auto old_id = objects_->CreateUpload("org_a", "old", "");
  ASSERT_TRUE(old_id.ok());
  ASSERT_TRUE(objects_->PutPart("org_a", *old_id, "old", 1, FromString("abc")).ok());
  // Nothing is older than a cutoff in the past.
  EXPECT_EQ(objects_->ExpireUploads(0), 0u);
  EXPECT_TRUE(objects_->ListParts("org_a", *old_id, "old").ok());
  // A cutoff in the future: the upload is older, so it and its parts go.
  EXPECT_EQ(objects_->ExpireUploads(std::numeric_limits<int64_t>::max()), 1u);
  EXPECT_EQ(objects_->ListParts("org_a", *old_id, "old").status().code(), Code::kNotFound);
  EXPECT_EQ(objects_->PutPart("org_a", *old_id, "old", 2, FromString("x")).status().code(),
            Code::kNotFound);
  EXPECT_TRUE(os::ListDir(dir_ + "/objects/uploads").empty());
}

TEST_F(ObjectStoreTest, QuotaRefusesWhatWouldExceedItAndCountsReplacements) {
  objects_->SetQuotaBytes(10);
  ASSERT_TRUE(objects_->Put("org_a", "a", "", FromString("123456")).ok());
  auto over = objects_->Put("org_a", "b", "", FromString("12345"));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kResourceExhausted);
  EXPECT_NE(over.status().message().find("quota"), std::string::npos);
  EXPECT_EQ(objects_->Head("org_a", "b").status().code(), Code::kNotFound);
  EXPECT_EQ(os::ListDir(dir_ + "/objects/blobs").size(), 1u);  // the refused blob is gone
  // Replacing "a" frees its 6 bytes first; another organization has its own quota.
  EXPECT_TRUE(objects_->Put("org_a", "a", "", FromString("1234567890")).ok());
  EXPECT_TRUE(objects_->Put("org_b", "b", "", FromString("1234567890")).ok());
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 10u);
}

TEST_F(ObjectStoreTest, AnOrganizationsOwnQuotaAppliesWhenItIsTheSmaller) {
  objects_->SetQuotaBytes(10);
  objects_->SetOrgQuota([](const std::string& org) -> std::optional<uint64_t> {
    if (org == "org_small") return 4;
    if (org == "org_big") return 100;
    return std::nullopt;
  });
  EXPECT_EQ(objects_->QuotaOf("org_small"), 4u);
  EXPECT_EQ(objects_->QuotaOf("org_big"), 10u);
  EXPECT_EQ(objects_->QuotaOf("org_other"), 10u);
  ASSERT_TRUE(objects_->Put("org_small", "a", "", FromString("1234")).ok());
  EXPECT_EQ(objects_->Put("org_small", "b", "", FromString("1")).status().code(),
            Code::kResourceExhausted);
  auto id = objects_->CreateUpload("org_small", "m", "");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(objects_->PutPart("org_small", *id, "m", 1, FromString("1")).status().code(),
            Code::kResourceExhausted);
  EXPECT_TRUE(objects_->Put("org_big", "b", "", FromString("1234567890")).ok());
  EXPECT_EQ(objects_->Put("org_big", "c", "", FromString("1")).status().code(),
            Code::kResourceExhausted);
  // Without a daemon-wide quota, the organization's own one still applies.
  objects_->SetQuotaBytes(0);
  EXPECT_EQ(objects_->QuotaOf("org_small"), 4u);
  EXPECT_EQ(objects_->QuotaOf("org_other"), 0u);
}

TEST_F(ObjectStoreTest, UnfinishedUploadPartsCountAgainstTheQuotaUntilCompletedOrAborted) {
  objects_->SetQuotaBytes(10);
  auto id = objects_->CreateUpload("org_a", "m", "");
  ASSERT_TRUE(id.ok());
  auto e1 = objects_->PutPart("org_a", *id, "m", 1, FromString("123456"));
  ASSERT_TRUE(e1.ok());
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 6u);
  EXPECT_EQ(objects_->PutPart("org_a", *id, "m", 2, FromString("123456")).status().code(),
            Code::kResourceExhausted);
  EXPECT_EQ(objects_->Put("org_a", "x", "", FromString("12345")).status().code(),
            Code::kResourceExhausted);
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 6u);
  EXPECT_EQ(*objects_->UsedBytes("org_b"), 0u);
  // Replacing a part counts its new size only; completed, the parts are counted once.
  e1 = objects_->PutPart("org_a", *id, "m", 1, FromString("1234567890"));
  ASSERT_TRUE(e1.ok());
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 10u);
  ASSERT_TRUE(objects_->CompleteUpload("org_a", *id, "m", {{1, *e1}}).ok());
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 10u);
  ASSERT_TRUE(objects_->Delete("org_a", "m").ok());
  // Aborting frees the parts; a restart counts the parts it finds.
  auto id2 = objects_->CreateUpload("org_a", "n", "");
  ASSERT_TRUE(id2.ok());
  ASSERT_TRUE(objects_->PutPart("org_a", *id2, "n", 1, FromString("12345678")).ok());
  ASSERT_TRUE(objects_->AbortUpload("org_a", *id2, "n").ok());
  EXPECT_EQ(*objects_->UsedBytes("org_a"), 0u);
  auto id3 = objects_->CreateUpload("org_a", "o", "");
  ASSERT_TRUE(objects_->PutPart("org_a", *id3, "o", 1, FromString("1234")).ok());
  ObjectStore restarted(*store_, dir_ + "/objects");
  ASSERT_TRUE(restarted.Init().ok());
  EXPECT_EQ(*restarted.UsedBytes("org_a"), 4u);
  // A single part larger than the quota is refused as it arrives.
  EXPECT_EQ(objects_->PutPart("org_a", *id3, "o", 2, FromString("12345678901")).status().code(),
            Code::kResourceExhausted);
}

TEST_F(ObjectStoreTest, InitRemovesUnreferencedBlobs) {
  ASSERT_TRUE(objects_->Put("org_a", "k", "", FromString("keep")).ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/objects/blobs/orphan1", "x").ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir_ + "/objects/blobs/abc.tmp-1", "x").ok());
  ASSERT_TRUE(objects_->Init().ok());
  EXPECT_EQ(os::ListDir(dir_ + "/objects/blobs").size(), 1u);
  auto opened = objects_->Open("org_a", "k");
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(ReadAll(*opened->second), "keep");
}

TEST_F(ObjectStoreTest, InitRemovesHalfWrittenPartsAndKeepsTheUploadsWholeOnes) {
  auto id = objects_->CreateUpload("org_a", "m", "");
  ASSERT_TRUE(id.ok());
  auto e1 = objects_->PutPart("org_a", *id, "m", 1, FromString("whole"));
  ASSERT_TRUE(e1.ok());
  // What a crash in the middle of writing parts 2 and 1 again, and an etag file, leaves.
  const std::string dir = dir_ + "/objects/uploads/" + *id;
  ASSERT_TRUE(os::WriteFileAtomic(dir + "/00002.tmp-abc123", "half").ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir + "/00001.tmp-def456", "half of a new one").ok());
  ASSERT_TRUE(os::WriteFileAtomic(dir + "/00002.md5.tmp", "x").ok());
  ObjectStore restarted(*store_, dir_ + "/objects");
  ASSERT_TRUE(restarted.Init().ok());
  for (const auto& file : os::ListDir(dir)) EXPECT_EQ(file.find(".tmp"), std::string::npos) << file;
  EXPECT_EQ(*restarted.UsedBytes("org_a"), 5u);
  auto parts = restarted.ListParts("org_a", *id, "m");
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 1u);
  ASSERT_TRUE(restarted.CompleteUpload("org_a", *id, "m", {{1, *e1}}).ok());
  auto opened = restarted.Open("org_a", "m");
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(ReadAll(*opened->second), "whole");
}

TEST_F(ObjectStoreTest, TokensExpireAndRevokeAndSignedLinksBindOneObject) {
  StorageTokens tokens(*store_, dir_ + "/storage.key");
  ASSERT_TRUE(tokens.Init().ok());
  auto t = tokens.Create("org_a", "t", 3600);
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(tokens.VerifyBearer(t->token).ok());
  EXPECT_FALSE(tokens.VerifyBearer(t->record.id + ".wrong").ok());
  EXPECT_EQ(tokens.Revoke("org_b", t->record.id).code(), Code::kNotFound);
  ASSERT_TRUE(tokens.Revoke("org_a", t->record.id).ok());
  EXPECT_FALSE(tokens.VerifyBearer(t->token).ok());
  EXPECT_FALSE(tokens.Create("org_a", "t", 0).ok());
  // A name shown in lists and logs: no control characters (a NUL, an escape sequence).
  EXPECT_EQ(tokens.Create("org_a", std::string("t\0x", 3), 3600).status().field(), "name");
  EXPECT_EQ(tokens.Create("org_a", "\x1b[2J", 3600).status().field(), "name");
  std::string q = tokens.SignDownload("org_a", "a/b", 4102444800);
  std::string sig = q.substr(q.find("signature=") + 10);
  EXPECT_TRUE(tokens.VerifyDownload("org_a", "a/b", 4102444800, sig).ok());
  EXPECT_FALSE(tokens.VerifyDownload("org_a", "a/c", 4102444800, sig).ok());
  EXPECT_FALSE(tokens.VerifyDownload("org_b", "a/b", 4102444800, sig).ok());
  EXPECT_FALSE(tokens.VerifyDownload("org_a", "a/b", 4102444801, sig).ok());
  std::string old = tokens.SignDownload("org_a", "a/b", 1000);
  EXPECT_EQ(
      tokens.VerifyDownload("org_a", "a/b", 1000, old.substr(old.find("signature=") + 10)).code(),
      Code::kPermissionDenied);
}

TEST_F(ObjectStoreTest, ReleaseReferencesBindOneBlobAndAreNoDownloadLinks) {
  StorageTokens tokens(*store_, dir_ + "/storage.key");
  ASSERT_TRUE(tokens.Init().ok());
  std::string q = tokens.SignRelease("org_a", "b1", 4102444800);
  std::string sig = q.substr(q.find("signature=") + 10);
  EXPECT_TRUE(tokens.VerifyRelease("org_a", "b1", 4102444800, sig).ok());
  EXPECT_FALSE(tokens.VerifyRelease("org_a", "b2", 4102444800, sig).ok());
  EXPECT_FALSE(tokens.VerifyRelease("org_b", "b1", 4102444800, sig).ok());
  EXPECT_FALSE(tokens.VerifyRelease("org_a", "b1", 4102444801, sig).ok());
  // The same names signed as a download link are not a release reference, nor the reverse.
  std::string dl = tokens.SignDownload("org_a", "b1", 4102444800);
  EXPECT_FALSE(
      tokens.VerifyRelease("org_a", "b1", 4102444800, dl.substr(dl.find("signature=") + 10)).ok());
  EXPECT_FALSE(tokens.VerifyDownload("org_a", "b1", 4102444800, sig).ok());
  std::string old = tokens.SignRelease("org_a", "b1", 1000);
  EXPECT_EQ(
      tokens.VerifyRelease("org_a", "b1", 1000, old.substr(old.find("signature=") + 10)).code(),
      Code::kPermissionDenied);
}

TEST_F(ObjectStoreTest, RetiredBlobsOutliveARestartAndGoWhenDue) {
  std::string sha;
  uint64_t size = 0;
  auto blob = objects_->PutBlob(FromString("release"), 1 << 20, &sha, &size);
  ASSERT_TRUE(blob.ok());
  ASSERT_TRUE(objects_->RetireBlob(*blob, 5000).ok());
  EXPECT_FALSE(objects_->OpenBlob(*blob).ok());         // out of the gateway's reach
  EXPECT_TRUE(objects_->RetireBlob(*blob, 5000).ok());  // again: nothing to do
  // A restart: Init's sweep of unreferenced blobs leaves the retired one.
  objects_ = std::make_unique<ObjectStore>(*store_, dir_ + "/objects");
  ASSERT_TRUE(objects_->Init().ok());
  EXPECT_EQ(os::ListDir(dir_ + "/objects/retired"), std::vector<std::string>{"5000." + *blob});
  EXPECT_EQ(objects_->SweepRetiredBlobs(4999), 0u);
  EXPECT_EQ(objects_->SweepRetiredBlobs(5000), 1u);
  EXPECT_TRUE(os::ListDir(dir_ + "/objects/retired").empty());
  EXPECT_FALSE(objects_->RetireBlob("../etc", 1).ok());
}

}  // namespace
}  // namespace adapt::storage

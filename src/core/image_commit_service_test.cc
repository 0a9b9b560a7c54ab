// ImageService::Commit over a MemoryStore, a FakeRuntime (whose writable layer is one file
// naming the sandbox) and a real ImageStore in a temporary directory.
#include <gtest/gtest.h>

#include <future>

#include "core/image_commit.h"
#include "core/image_service.h"
#include "core/sandbox_hibernation.h"
#include "core/sandbox_service_fixture.h"
#include "os/files.h"

namespace adapt::core {
namespace {

using runtime::FakeRuntime;

class ImageCommitServiceTest : public testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    image_store_ = std::make_unique<image::ImageStore>(dir_ + "/store");
    ASSERT_TRUE(image_store_->Init().ok());
    // Sandboxes made from saved images boot from the image store, as adaptd's do.
    service_.reset();
    lifecycle_.reset();
    images_ = std::make_unique<ImageCatalog>(dir_ + "/images", image_store_.get());
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
    service_ = std::make_unique<SandboxService>(store_, runtime_, *lifecycle_, *images_, workers_,
                                                testing_support::kTestImage);
    images_service_ = std::make_unique<ImageService>(store_, *image_store_, workers_);
    images_service_->set_commit_source(lifecycle_.get(), images_.get());
  }

  std::string Running() {
    store::SandboxRecord r = Insert(NewSandbox("running"));
    runtime_.AddRunning(r.id);
    return r.id;
  }

  std::unique_ptr<image::ImageStore> image_store_;
  std::unique_ptr<ImageService> images_service_;
};

TEST_F(ImageCommitServiceTest, ARunningSandboxBecomesAReadyImageOnItsImagesLayers) {
  std::string sid = Running();
  auto started = images_service_->Commit(Caller(), sid, {"prepared", std::nullopt});
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(started->status, "committing");
  EXPECT_EQ(started->source, "commit");
  EXPECT_EQ(started->reference.value_or(""), "prepared:latest");
  EXPECT_EQ(started->operation.phase, "Running");
  Drain();

  auto image = images_service_->Get(Caller(), started->id);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ(image->status, "ready") << image->error.value_or("");
  EXPECT_EQ(image->config_json, R"({"Cmd":["/bin/sh"]})");
  auto op = images_service_->Operation(Caller(), started->id);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->kind, "image.commit");
  EXPECT_EQ(op->phase, "Completed");
  auto stored = image_store_->Lookup(kImportedImagePrefix + started->id);
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->layer_dirs.size(), 2u);
  EXPECT_EQ(stored->layer_dirs[0], dir_ + "/images/" + testing_support::kTestImage + "/rootfs");
  auto layer = os::ReadFile(stored->layer_dirs[1] + "/fake-layer");
  ASSERT_TRUE(layer.ok());
  EXPECT_EQ(*layer, sid);
  // A sandbox can be made from it by id.
  auto reference = images_service_->ReferenceOf(org_, started->id);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(*reference, kImportedImagePrefix + started->id);
}

TEST_F(ImageCommitServiceTest, ANameTakenAnotherOrgsSandboxAndAStoppedInstantOneAreRefused) {
  std::string sid = Running();
  auto first = images_service_->Commit(Caller(), sid, {"env", "v1"});
  ASSERT_TRUE(first.ok());
  Drain();
  auto clash = images_service_->Commit(Caller(), sid, {"env", "v1"});
  EXPECT_EQ(clash.status().code(), Code::kConflict);
  EXPECT_EQ(clash.status().field(), "name");
  EXPECT_NE(clash.status().message().find(first->id), std::string::npos);

  Principal other{"org_other", "key_2", false};
  EXPECT_EQ(images_service_->Commit(other, sid, {"env", "v2"}).status().code(), Code::kNotFound);
  EXPECT_EQ(images_service_->Commit(Caller(), "sbx_unknown", {"env", "v2"}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(images_service_->Commit(Caller(), "../x", {"env", "v2"}).status().code(),
            Code::kNotFound);
  EXPECT_EQ(images_service_->Commit(Caller(), sid, {"Bad", "v2"}).status().code(),
            Code::kInvalidArgument);

  store::SandboxRecord stopped = NewSandbox("hibernated");
  Hibernation h;
  h.phase = HibernationPhase::kStopped;
  WriteHibernation(stopped, h);
  Insert(stopped);
  EXPECT_EQ(images_service_->Commit(Caller(), stopped.id, {"env", "v3"}).status().code(),
            Code::kConflict);
  auto list = images_service_->List(Caller(), {});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->items.size(), 1u);
}

TEST_F(ImageCommitServiceTest, AFailedCopyFailsTheImageAndFreesItsName) {
  std::string sid = Running();
  runtime_.FailNext(FakeRuntime::Op::kExportLayer, Internal("cp: no space left on device"));
  auto started = images_service_->Commit(Caller(), sid, {"env", std::nullopt});
  ASSERT_TRUE(started.ok());
  Drain();
  auto failed = images_service_->Get(Caller(), started->id);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->status, "failed");
  EXPECT_NE(failed->error.value_or("").find("no space left"), std::string::npos);
  EXPECT_FALSE(image_store_->Lookup(kImportedImagePrefix + started->id).has_value());
  auto again = images_service_->Commit(Caller(), sid, {"env", std::nullopt});
  ASSERT_TRUE(again.ok()) << again.status().message();
  Drain();
  EXPECT_EQ(images_service_->Get(Caller(), again->id)->status, "ready");
}

TEST_F(ImageCommitServiceTest, ARestartFailsAnInterruptedCommit) {
  store::ImageRecord rec;
  rec.id = NewId("img");
  rec.org_id = org_;
  rec.reference = kImportedImagePrefix + rec.id;
  rec.status = "committing";
  rec.imported = true;
  rec.import_format = kCommitFormat;
  rec.import_name = "env:latest";
  rec.created_at = NowMillis();
  ASSERT_TRUE(store_.PutImage(rec).ok());
  images_service_->Reconcile();
  auto op = images_service_->Operation(Caller(), rec.id);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->kind, "image.commit");
  EXPECT_EQ(op->phase, "Failed");
  EXPECT_NE(op->error.value_or("").find("interrupted"), std::string::npos);
}

TEST_F(ImageCommitServiceTest, ARestartRemovesTheDataOfAnImageDeletedJustBeforeIt) {
  std::string sid = Running();
  auto saved = images_service_->Commit(Caller(), sid, {"gone", std::nullopt});
  ASSERT_TRUE(saved.ok());
  Drain();
  std::string key = kImportedImagePrefix + saved->id;
  ASSERT_TRUE(image_store_->Lookup(key).has_value());
  // What a kill of adaptd right after a delete leaves: the record gone, the collection that
  // Delete posted never run.
  ASSERT_TRUE(store_.DeleteImage(org_, saved->id).ok());
  images_service_->Reconcile();
  EXPECT_FALSE(image_store_->Lookup(key).has_value());
  EXPECT_TRUE(os::ListDir(dir_ + "/store/layers").empty());
}

TEST_F(ImageCommitServiceTest, ASavedImageIsFoundByItsNameWithLatestByDefault) {
  service_->set_image_service(images_service_.get());
  std::string sid = Running();
  auto saved = images_service_->Commit(Caller(), sid, {"my-env", std::nullopt});
  ASSERT_TRUE(saved.ok());
  auto early = images_service_->SavedReference(org_, "my-env");
  ASSERT_TRUE(early.has_value());
  Drain();
  for (std::string name : std::vector<std::string>{"my-env", "my-env:latest"}) {
    auto found = images_service_->SavedReference(org_, name);
    ASSERT_TRUE(found.has_value() && found->ok()) << name;
    EXPECT_EQ(**found, kImportedImagePrefix + saved->id);
  }
  EXPECT_FALSE(images_service_->SavedReference(org_, "my-env:v2").has_value());
  EXPECT_FALSE(images_service_->SavedReference("org_other", "my-env").has_value());
  EXPECT_FALSE(images_service_->SavedReference(org_, "docker.io/my-env").has_value());

  CreateSandbox req;
  req.image = "my-env";
  req.network = NetworkRequest{};
  req.network->egress = "none";
  auto created = service_->Create(Caller(), req, std::nullopt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Drain();
  EXPECT_EQ(Stored(created->id).config.image, kImportedImagePrefix + saved->id);
}

}  // namespace
}  // namespace adapt::core

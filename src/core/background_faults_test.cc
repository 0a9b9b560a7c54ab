// Work on the workers pool that owns a record in a working state ("provisioning", "pulling")
// and throws: adaptd goes on, and the record is settled failed with the error instead of
// staying in its working state (base/background_work.h).
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>

#include "core/image_service.h"
#include "core/sandbox_service_fixture.h"

namespace adapt::core {
namespace {

using runtime::FakeRuntime;

class BackgroundFaultsTest : public testing_support::SandboxServiceFixture {};

TEST_F(BackgroundFaultsTest, AProvisionThatThrowsFailsTheSandboxWithTheError) {
  auto r = Insert(NewSandbox());
  runtime_.ThrowNext(FakeRuntime::Op::kLaunch, "launch blew up");
  lifecycle_->Provision(r.id);  // as the workers run it: it does not throw
  EXPECT_EQ(StatusOf(r.id), "failed");
  EXPECT_EQ(Stored(r.id).error, "internal error: launch blew up");
  EXPECT_FALSE(runtime_.Running(r.id));
}

TEST_F(BackgroundFaultsTest, ASandboxCreatedThroughTheServiceFailsOnTheWorkersAndTheyGoOn) {
  CreateSandbox req;
  req.image = testing_support::kTestImage;
  req.network = NetworkRequest{};
  req.network->egress = "none";  // no NetworkManager here
  runtime_.ThrowNext(FakeRuntime::Op::kLaunch, "launch blew up");
  auto created = service_->Create(Caller(), req, std::nullopt);
  ASSERT_TRUE(created.ok()) << created.status().message();
  Drain();
  EXPECT_EQ(StatusOf(created->id), "failed");
  EXPECT_EQ(Stored(created->id).error, "internal error: launch blew up");
  // The worker survived: the next sandbox boots on it.
  auto next = service_->Create(Caller(), req, std::nullopt);
  ASSERT_TRUE(next.ok()) << next.status().message();
  Drain();
  EXPECT_EQ(StatusOf(next->id), "running");
}

// A MemoryStore whose next GetImage throws, as a parse of a registry's reply once did on the
// pull's worker (docs/SECURITY.md, "mediaType": 5).
class StoreThatThrowsOnce : public store::MemoryStore {
 public:
  Result<store::ImageRecord> GetImage(const std::string& org_id, const std::string& id) override {
    if (armed.exchange(false)) throw std::runtime_error("type must be string, but is number");
    return MemoryStore::GetImage(org_id, id);
  }
  std::atomic<bool> armed{false};
};

class ImagePullFaultTest : public testing_support::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    auto org = images_store_.CreateOrg({NewId("org"), "acme", false, NowMillis()});
    ASSERT_TRUE(org.ok());
    who_ = Principal{org->id, "key_1", false};
    blobs_ = std::make_unique<image::ImageStore>(dir_ + "/store");
    ASSERT_TRUE(blobs_->Init().ok());
    service_ = std::make_unique<ImageService>(images_store_, *blobs_, workers_);
  }
  void TearDown() override {
    workers_.join();
    CoreTest::TearDown();
  }

  StoreThatThrowsOnce images_store_;
  Principal who_;
  std::unique_ptr<image::ImageStore> blobs_;
  boost::asio::thread_pool workers_{1};
  std::unique_ptr<ImageService> service_;
};

TEST_F(ImagePullFaultTest, APullThatThrowsIsRecordedFailedNotLeftPulling) {
  images_store_.armed = true;
  // Nothing listens there (and loopback is refused): the pull fails, then recording it throws.
  auto started = service_->Pull(who_, PullImage{"127.0.0.1:9/none:1", std::nullopt});
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_EQ(started->status, "pulling");
  std::promise<void> drained;
  boost::asio::post(workers_, [&] { drained.set_value(); });  // the worker is alive
  drained.get_future().wait();
  EXPECT_FALSE(images_store_.armed);  // it did throw
  auto image = service_->Get(who_, started->id);
  ASSERT_TRUE(image.ok()) << image.status().message();
  EXPECT_EQ(image->status, "failed");
  EXPECT_EQ(image->error.value_or(""),
            "pulling the image failed: internal error: type must be string, but is number");
  auto op = service_->Operation(who_, started->id);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->phase, "Failed");
}

}  // namespace
}  // namespace adapt::core

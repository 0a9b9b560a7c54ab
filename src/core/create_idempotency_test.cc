// Idempotency-Key on the creates that start long work, over a MemoryStore and a FakeRuntime:
// a named checkpoint, an image pull, an archive import, a sandbox saved as an image and an
// app deploy. The same key and request answer what the first made and start nothing again
// (also while the first still runs); the key with another request is a Conflict naming the
// header; a key whose object has gone since is a Conflict asking for a new key.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/app_service.h"
#include "core/checkpoint_service.h"
#include "core/command_service.h"
#include "core/file_service.h"
#include "core/image_service.h"
#include "core/sandbox_service_fixture.h"
#include "image/digest.h"
#include "image/manifest.h"
#include "net/network_manager.h"
#include "storage/object_store.h"

namespace adapt::core {
namespace {

using Op = runtime::FakeRuntime::Op;

store::IdempotencyKey Key(const std::string& key, const std::string& request) {
  return store::IdempotencyKey{key, Sha256Hex(request)};
}

void ExpectKeyConflict(const Status& st) {
  EXPECT_EQ(st.code(), Code::kConflict) << st.message();
  EXPECT_EQ(st.field(), "Idempotency-Key") << st.message();
}

// One member of a ustar archive: enough for libarchive, without it in the test.
std::string TarMember(const std::string& name, const std::string& data) {
  char h[512] = {};
  std::snprintf(h, 100, "%s", name.c_str());
  std::snprintf(h + 100, 8, "%07o", 0644);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  std::snprintf(h + 124, 12, "%011lo", static_cast<unsigned long>(data.size()));
  std::snprintf(h + 136, 12, "%011o", 0);
  std::memset(h + 148, ' ', 8);
  h[156] = '0';
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  unsigned sum = 0;
  for (char c : h) sum += static_cast<unsigned char>(c);
  std::snprintf(h + 148, 7, "%06o", sum);
  h[155] = ' ';
  std::string out(h, sizeof h);
  out += data;
  out.append((512 - data.size() % 512) % 512, '\0');
  return out;
}

std::string Tar(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out;
  for (const auto& [name, data] : members) out += TarMember(name, data);
  return out + std::string(1024, '\0');
}

// An OCI image layout of one image with one plain layer holding /tag = `tag`.
std::string OciArchive(const std::string& tag) {
  using nlohmann::json;
  auto hex = [](const std::string& digest) { return digest.substr(7); };
  std::string layer = Tar({{"tag", tag}});
  std::string config =
      json{{"os", "linux"},
           {"architecture", "amd64"},
           {"config", {{"Cmd", {"/bin/cat", "/tag"}}}},
           {"rootfs", {{"type", "layers"}, {"diff_ids", {image::Sha256Of(layer)}}}}}
          .dump();
  std::string manifest = json{{"schemaVersion", 2},
                              {"mediaType", image::kOciManifest},
                              {"config",
                               {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                                {"digest", image::Sha256Of(config)},
                                {"size", config.size()}}},
                              {"layers",
                               {{{"mediaType", "application/vnd.oci.image.layer.v1.tar"},
                                 {"digest", image::Sha256Of(layer)},
                                 {"size", layer.size()}}}}}
                             .dump();
  std::string index = json{{"schemaVersion", 2},
                           {"manifests",
                            {{{"mediaType", image::kOciManifest},
                              {"digest", image::Sha256Of(manifest)},
                              {"size", manifest.size()},
                              {"annotations", {{"org.opencontainers.image.ref.name", "v1"}}}}}}}
                          .dump();
  return Tar({{"oci-layout", R"({"imageLayoutVersion":"1.0.0"})"},
              {"index.json", index},
              {"blobs/sha256/" + hex(image::Sha256Of(manifest)), manifest},
              {"blobs/sha256/" + hex(image::Sha256Of(config)), config},
              {"blobs/sha256/" + hex(image::Sha256Of(layer)), layer}});
}

// Reads `data` in small pieces; counts what was read.
image::ByteSource Upload(const std::string& data, size_t* read) {
  *read = 0;
  return [&data, read](char* buf, size_t n) -> long {
    size_t k = std::min<size_t>(std::min<size_t>(n, 4096), data.size() - *read);
    std::memcpy(buf, data.data() + *read, k);
    *read += k;
    return static_cast<long>(k);
  };
}

class CreateIdempotencyTest : public testing_support::SandboxServiceFixture {
 protected:
  void SetUp() override {
    SandboxServiceFixture::SetUp();
    image_store_ = std::make_unique<image::ImageStore>(dir_ + "/store");
    ASSERT_TRUE(image_store_->Init().ok());
    image_service_ = std::make_unique<ImageService>(store_, *image_store_, workers_);
    image_service_->set_commit_source(lifecycle_.get(), images_.get());
    checkpoints_ = std::make_unique<CheckpointService>(store_, runtime_, *lifecycle_, *service_);
  }
  void TearDown() override {
    apps_.reset();
    SandboxServiceFixture::TearDown();
  }

  std::string Running() {
    store::SandboxRecord r = NewSandbox("provisioning", false, true);
    Insert(r);
    lifecycle_->Provision(r.id);
    EXPECT_EQ(StatusOf(r.id), "running");
    return r.id;
  }

  size_t ImageCount() {
    auto all = store_.ListImages(org_);
    EXPECT_TRUE(all.ok());
    return all.ok() ? all->size() : 0;
  }

  std::unique_ptr<image::ImageStore> image_store_;
  std::unique_ptr<ImageService> image_service_;
  std::unique_ptr<CheckpointService> checkpoints_;
  std::unique_ptr<CommandService> commands_;
  std::unique_ptr<FileService> files_;
  std::unique_ptr<storage::ObjectStore> objects_;
  std::unique_ptr<net::NetworkManager> network_;
  std::unique_ptr<AppService> apps_;
};

TEST_F(CreateIdempotencyTest, ACheckpointReplayTakesNoSecondCheckpoint) {
  std::string sid = Running();
  auto key = Key("k1", "one");
  auto first = checkpoints_->Take(Caller(), sid, "one", false, key);
  ASSERT_TRUE(first.ok()) << first.status().message();
  const int taken = runtime_.CountCalls(Op::kCheckpoint, sid);
  auto again = checkpoints_->Take(Caller(), sid, "one", false, key);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->operation_id, first->operation_id);
  EXPECT_EQ(again->checkpoint.name, "one");
  EXPECT_EQ(again->checkpoint.size_bytes, first->checkpoint.size_bytes);
  EXPECT_EQ(runtime_.CountCalls(Op::kCheckpoint, sid), taken);
  EXPECT_EQ(runtime_.ListNamedCheckpoints(sid).size(), 1u);
  // The same key with another name is another request.
  ExpectKeyConflict(checkpoints_->Take(Caller(), sid, "two", false, Key("k1", "two")).status());
  EXPECT_EQ(runtime_.ListNamedCheckpoints(sid).size(), 1u);
  // Deleted since: the replay asks for a new key rather than taking it again.
  ASSERT_TRUE(checkpoints_->Delete(Caller(), sid, "one").ok());
  ExpectKeyConflict(checkpoints_->Take(Caller(), sid, "one", false, key).status());
  EXPECT_TRUE(runtime_.ListNamedCheckpoints(sid).empty());
}

TEST_F(CreateIdempotencyTest, ACheckpointThatFailedIsNotTakenAgainByAReplay) {
  std::string sid = Running();
  runtime_.FailNext(Op::kCheckpoint, Status(Code::kUnsupported, "a TCP connection is open"));
  auto first = checkpoints_->Take(Caller(), sid, "one", false, Key("k1", "one"));
  ASSERT_FALSE(first.ok());
  auto again = checkpoints_->Take(Caller(), sid, "one", false, Key("k1", "one"));
  ExpectKeyConflict(again.status());
  EXPECT_NE(again.status().message().find("a TCP connection is open"), std::string::npos)
      << again.status().message();
  EXPECT_TRUE(runtime_.ListNamedCheckpoints(sid).empty());
}

TEST_F(CreateIdempotencyTest, AKeyOutsideOneTo255BytesIsRefusedBeforeAnything) {
  std::string sid = Running();
  auto taken = checkpoints_->Take(Caller(), sid, "one", false, Key(std::string(256, 'k'), "x"));
  EXPECT_EQ(taken.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(taken.status().field(), "Idempotency-Key");
  EXPECT_TRUE(runtime_.ListNamedCheckpoints(sid).empty());
  auto pulled = image_service_->Pull(Caller(), {"127.0.0.1:9/app:1", std::nullopt}, Key("", "x"));
  EXPECT_EQ(pulled.status().field(), "Idempotency-Key");
  EXPECT_EQ(ImageCount(), 0u);
}

TEST_F(CreateIdempotencyTest, ACommitReplayAnswersTheSameImageAlsoWhileItRuns) {
  std::string sid = Running();
  auto key = Key("k1", "saved");
  auto first = image_service_->Commit(Caller(), sid, {"saved", std::nullopt}, key);
  ASSERT_TRUE(first.ok()) << first.status().message();
  // Before the worker ran it: still committing, and not refused as "being saved already".
  auto running = image_service_->Commit(Caller(), sid, {"saved", std::nullopt}, key);
  ASSERT_TRUE(running.ok()) << running.status().message();
  EXPECT_EQ(running->id, first->id);
  EXPECT_EQ(running->status, "committing");
  Drain();
  auto done = image_service_->Commit(Caller(), sid, {"saved", std::nullopt}, key);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->id, first->id);
  EXPECT_EQ(done->status, "ready");
  EXPECT_EQ(ImageCount(), 1u);
  ExpectKeyConflict(
      image_service_->Commit(Caller(), sid, {"other", std::nullopt}, Key("k1", "other")).status());
  ASSERT_TRUE(image_service_->Delete(Caller(), first->id).ok());
  ExpectKeyConflict(image_service_->Commit(Caller(), sid, {"saved", std::nullopt}, key).status());
  EXPECT_EQ(ImageCount(), 0u);
}

TEST_F(CreateIdempotencyTest, APullReplayStartsNoSecondPull) {
  PullImage pull{"127.0.0.1:9/app:1", std::nullopt};
  auto first = image_service_->Pull(Caller(), pull, Key("k1", "pull"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  auto again = image_service_->Pull(Caller(), pull, Key("k1", "pull"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(ImageCount(), 1u);
  ExpectKeyConflict(
      image_service_->Pull(Caller(), {"127.0.0.1:9/app:2", std::nullopt}, Key("k1", "other"))
          .status());
  // Another organization's same key is its own pull.
  Principal other{"org_other", "key_2", false};
  auto theirs = image_service_->Pull(other, pull, Key("k1", "pull"));
  ASSERT_TRUE(theirs.ok()) << theirs.status().message();
  EXPECT_NE(theirs->id, first->id);
  Drain();
  EXPECT_EQ(ImageCount(), 1u);
}

TEST_F(CreateIdempotencyTest, AnImportReplayReadsTheArchiveButImportsNothing) {
  const std::string archive = OciArchive("one");
  size_t read = 0;
  auto first = image_service_->Import(Caller(), "", Upload(archive, &read), Key("k1", "import"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->status, "ready");
  EXPECT_EQ(read, archive.size());
  auto again = image_service_->Import(Caller(), "", Upload(archive, &read), Key("k1", "import"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(read, archive.size());  // read to its end, to compare it
  EXPECT_EQ(ImageCount(), 1u);
  // The same key and name with another archive is another request.
  const std::string other = OciArchive("two");
  ExpectKeyConflict(
      image_service_->Import(Caller(), "", Upload(other, &read), Key("k1", "import")).status());
  EXPECT_EQ(ImageCount(), 1u);
  // Without a key, the same archive is imported again.
  auto unkeyed = image_service_->Import(Caller(), "", Upload(archive, &read));
  ASSERT_TRUE(unkeyed.ok()) << unkeyed.status().message();
  EXPECT_NE(unkeyed->id, first->id);
  EXPECT_EQ(ImageCount(), 2u);
}

TEST_F(CreateIdempotencyTest, ADeployReplayAnswersTheSameOperationAndDeploysNothingMore) {
  commands_ = std::make_unique<CommandService>(store_, runtime_, *images_);
  files_ = std::make_unique<FileService>(store_, runtime_);
  objects_ = std::make_unique<storage::ObjectStore>(store_, dir_ + "/objects");
  network_ = std::make_unique<net::NetworkManager>(store_, net::NetworkOptions{});
  apps_ = std::make_unique<AppService>(store_, *service_, *commands_, *files_, *objects_, *network_,
                                       AppOptions{});
  // Recorded running with a network, not provisioned: this host has no sandbox networking.
  store::SandboxRecord source = NewSandbox("running", false, true);
  source.config.network.egress = "open";
  const std::string sid = Insert(source).id;
  DeployApp deploy;
  deploy.sandbox_id = sid;
  deploy.start_command = "python3 -m http.server 8000";
  deploy.port = 8000;
  deploy.replicas = 0;
  // The packaging's file operation is a host process that answers nothing for a while, then
  // ends: the deploy is still running when the replay comes, and then fails.
  runtime_.ServeNextExec({"/bin/sh", "-c", "sleep 1"});
  auto first =
      apps_->Deploy(Caller(), deploy, std::chrono::milliseconds(0), {}, Key("k1", "deploy"));
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->operation.phase, "Running");
  auto again =
      apps_->Deploy(Caller(), deploy, std::chrono::milliseconds(0), {}, Key("k1", "deploy"));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->operation.id, first->operation.id);
  EXPECT_FALSE(again->app.has_value());
  deploy.port = 8001;
  ExpectKeyConflict(
      apps_->Deploy(Caller(), deploy, std::chrono::milliseconds(0), {}, Key("k1", "other"))
          .status());
  // Once the first has ended (its packaging got no archive), a replay answers its operation
  // as it ended rather than deploying again: one file operation was ever started.
  store::OperationRecord ended;
  for (int i = 0; i < 3000; ++i) {
    auto op = store_.GetOperation(org_, first->operation.id);
    ASSERT_TRUE(op.ok());
    ended = *op;
    if (ended.phase != "Running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(ended.phase, "Running");
  deploy.port = 8000;
  auto after =
      apps_->Deploy(Caller(), deploy, std::chrono::milliseconds(0), {}, Key("k1", "deploy"));
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->operation.id, first->operation.id);
  EXPECT_EQ(after->operation.phase, ended.phase);
  EXPECT_EQ(runtime_.CountCalls(Op::kExec, sid), 1);
  auto open = store_.ListAllOpenOperations();
  ASSERT_TRUE(open.ok());
  EXPECT_TRUE(open->empty());
}

}  // namespace
}  // namespace adapt::core

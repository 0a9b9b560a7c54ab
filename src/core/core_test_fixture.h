// The core's unit-test fixture: a MemoryStore, a FakeRuntime, a local image in a temporary
// directory and one organization, so the lifecycle, the warm pool and the command service run
// in milliseconds with no runsc, database or network. Sandbox records are built in one place
// (NewSandbox): when the record's fields change, this is the one function to follow them.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "base/ids.h"
#include "base/time.h"
#include "core/event_bus.h"
#include "core/image_catalog.h"
#include "os/temp_dir.h"
#include "runtime/fake_runtime.h"
#include "store/memory_store.h"

namespace adapt::core::testing_support {

using runtime::FakeRuntime;

// The local image every test sandbox boots from.
inline constexpr const char* kTestImage = "test-image";

class CoreTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string image = dir_ + "/images/" + ImageCatalog::DirectoryName(kTestImage);
    std::filesystem::create_directories(image + "/rootfs/etc");
    std::ofstream(image + "/config.json") << R"({"config":{"Cmd":["/bin/sh"]}})";
    std::ofstream(image + "/rootfs/etc/passwd") << "root:x:0:0:root:/root:/bin/sh\n";
    images_ = std::make_unique<ImageCatalog>(dir_ + "/images");
    auto org = store_.CreateOrg({NewId("org"), "acme", false, NowMillis()});
    ASSERT_TRUE(org.ok()) << org.status().message();
    org_ = org->id;
  }

  // A sandbox record as a create writes it: `status`, the test image, the smallest shape, no
  // network. `startup`: a command sandbox (it ends with its startup command) rather than an
  // interactive one. `durable`: startupClass durable (checkpointed at stop) rather than instant.
  store::SandboxRecord NewSandbox(const std::string& status = "provisioning", bool startup = false,
                                  bool durable = false) {
    store::SandboxRecord r;
    r.id = NewId("sbx");
    r.org_id = org_;
    r.status = status;
    r.config.image = kTestImage;
    r.config.cpu = 1;
    r.config.memory_mib = 512;
    r.config.disk_mib = 1024;
    r.config.network.egress = "none";
    if (startup) {
      store::StartupConfig command;
      command.mode = "command";
      command.argv = std::vector<std::string>{"/bin/true"};
      r.config.startup = command;
    }
    if (durable) r.config.startup_class = "durable";
    r.created_at = r.updated_at = NowMillis();
    return r;
  }

  // Stores `r` (created with its own status) and returns it as stored.
  store::SandboxRecord Insert(const store::SandboxRecord& r) {
    auto out = store_.CreateSandbox(r, std::nullopt);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? out->sandbox : r;
  }

  store::SandboxRecord Stored(const std::string& id) {
    auto r = store_.GetSandbox("", id);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : store::SandboxRecord{};
  }

  std::string StatusOf(const std::string& id) { return Stored(id).status; }

  os::TempDir tmp_{"core-test"};
  const std::string dir_ = tmp_.path();
  std::string org_;
  store::MemoryStore store_;
  FakeRuntime runtime_;
  std::unique_ptr<ImageCatalog> images_;
  EventBus events_;
};

}  // namespace adapt::core::testing_support

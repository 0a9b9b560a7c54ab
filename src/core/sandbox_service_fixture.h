// The fixture of SandboxService's unit tests: the service over CoreTest's MemoryStore and
// FakeRuntime, with one worker thread (its Provision runs there).
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <memory>

#include "core/core_test_fixture.h"
#include "core/sandbox_lifecycle.h"
#include "core/sandbox_service.h"

namespace adapt::core::testing_support {

class SandboxServiceFixture : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    lifecycle_ = std::make_unique<SandboxLifecycle>(store_, runtime_, *images_, events_);
    service_ = std::make_unique<SandboxService>(store_, runtime_, *lifecycle_, *images_, workers_,
                                                kTestImage);
  }
  void TearDown() override {
    workers_.join();
    CoreTest::TearDown();
  }

  Principal Caller() { return Principal{org_, "key_1", false}; }

  boost::asio::thread_pool workers_{1};
  std::unique_ptr<SandboxLifecycle> lifecycle_;
  std::unique_ptr<SandboxService> service_;
};

}  // namespace adapt::core::testing_support

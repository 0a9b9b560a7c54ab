// The fixture of SandboxService's unit tests: the service over CoreTest's MemoryStore and
// FakeRuntime, with one worker thread (its Provision runs there).
#pragma once

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
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

  // Runs everything queued on the (single) worker so far, a Provision included: a status read
  // can see `running` while its Provision still finishes (a fork's copy discarded after it).
  void Drain() {
    std::promise<void> done;
    boost::asio::post(workers_, [&done] { done.set_value(); });
    done.get_future().wait();
  }

  boost::asio::thread_pool workers_{1};
  std::unique_ptr<SandboxLifecycle> lifecycle_;
  std::unique_ptr<SandboxService> service_;
};

}  // namespace adapt::core::testing_support

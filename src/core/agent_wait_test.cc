// AwaitAgent: a run's command waits for its sandbox's agent (so that it outlives an adaptd
// restart), then goes ahead either way; a stopping adaptd ends the wait.
#include "core/agent_wait.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "os/unique_fd.h"
#include "runtime/agent_session.h"
#include "runtime/fake_runtime.h"

namespace adapt::core {
namespace {

// The agent connects at the `connect_at`th look (never by default); `on_look` runs at each.
class AgentLater : public runtime::FakeRuntime {
 public:
  std::shared_ptr<runtime::AgentSession> Agent(const std::string& id) override {
    int look = ++looks;
    if (on_look) on_look(look);
    if (look < connect_at) return nullptr;
    return std::make_shared<runtime::AgentSession>(id, os::UniqueFd());
  }
  std::atomic<int> looks{0};
  int connect_at = 1 << 30;
  std::function<void(int)> on_look;
};

TEST(AwaitAgent, GoesAheadAsSoonAsTheAgentConnects) {
  boost::asio::thread_pool pool(1);
  AgentLater runtime;
  runtime.connect_at = 3;
  std::atomic<bool> stopping{false};
  std::promise<bool> connected;
  AwaitAgent(runtime, pool, stopping, "sbx_1", std::chrono::minutes(1),
             [&](bool c) { connected.set_value(c); });
  EXPECT_TRUE(connected.get_future().get());
  EXPECT_EQ(runtime.looks, 3);
  pool.join();
}

TEST(AwaitAgent, GoesAheadWithoutTheAgentOnceTheWaitPassed) {
  boost::asio::thread_pool pool(1);
  AgentLater runtime;
  std::atomic<bool> stopping{false};
  std::promise<bool> connected;
  AwaitAgent(runtime, pool, stopping, "sbx_1", std::chrono::milliseconds(120),
             [&](bool c) { connected.set_value(c); });
  EXPECT_FALSE(connected.get_future().get());
  EXPECT_GE(runtime.looks, 2);
  pool.join();
}

TEST(AwaitAgent, AStoppingAdaptdEndsTheWaitWithoutGoingAhead) {
  boost::asio::thread_pool pool(1);
  AgentLater runtime;
  std::atomic<bool> stopping{false};
  runtime.on_look = [&](int look) {
    if (look == 2) stopping = true;
  };
  std::atomic<int> done{0};
  AwaitAgent(runtime, pool, stopping, "sbx_1", std::chrono::seconds(2), [&](bool) { ++done; });
  // Nothing is left for the pool once the wait saw `stopping`: join returns without `done`.
  pool.join();
  EXPECT_EQ(done, 0);
  EXPECT_EQ(runtime.looks, 2);
}

}  // namespace
}  // namespace adapt::core

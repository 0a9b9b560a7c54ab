#include "core/agent_wait.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>

#include "base/background_work.h"

namespace adapt::core {
namespace {

constexpr std::chrono::milliseconds kLookEvery{50};

class AgentLook : public std::enable_shared_from_this<AgentLook> {
 public:
  AgentLook(runtime::Runtime& runtime, boost::asio::thread_pool& pool,
            const std::atomic<bool>& stopping, std::string sandbox_id,
            std::chrono::steady_clock::time_point until, std::function<void(bool)> done)
      : runtime_(runtime),
        stopping_(stopping),
        timer_(pool),
        sandbox_id_(std::move(sandbox_id)),
        until_(until),
        done_(std::move(done)) {}

  void Look() {
    if (stopping_) return;
    if (runtime_.Agent(sandbox_id_)) return done_(true);
    if (std::chrono::steady_clock::now() >= until_) return done_(false);
    timer_.expires_after(kLookEvery);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) RunGuarded("waiting for the agent of " + self->sandbox_id_, [&] { self->Look(); });
    });
  }

 private:
  runtime::Runtime& runtime_;
  const std::atomic<bool>& stopping_;
  boost::asio::steady_timer timer_;
  const std::string sandbox_id_;
  const std::chrono::steady_clock::time_point until_;
  std::function<void(bool)> done_;
};

}  // namespace

void AwaitAgent(runtime::Runtime& runtime, boost::asio::thread_pool& pool,
                const std::atomic<bool>& stopping, const std::string& sandbox_id,
                std::chrono::milliseconds wait, std::function<void(bool connected)> done) {
  auto look = std::make_shared<AgentLook>(runtime, pool, stopping, sandbox_id,
                                          std::chrono::steady_clock::now() + wait, std::move(done));
  boost::asio::post(pool,
                    Guarded("waiting for the agent of " + sandbox_id, [look] { look->Look(); }));
}

}  // namespace adapt::core
